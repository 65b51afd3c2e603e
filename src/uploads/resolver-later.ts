/**
 * The code of `UploadHandleResolver` that only its async paths run (`createTicket`, `filesFor`,
 * `fileFor`, `statusOf`, `rewrite`, the rate limit and `ticketRateLimit`'s counting, the
 * `get_upload_url` and `check_upload` answers, the files extension's descriptor answers), loaded
 * on their first use (`loadLater()` in upload-handle-resolver.ts, `loadAnswer()` in
 * upload-url-tool.ts): a server's start does not compile it (issue 39).
 */
export { rewriteHandles, severalFiles } from "./handle-rewrite.js";
export {
  answerUploadUrl,
  askRateLimit,
  claimTicketSlot,
  filesOfHandle,
  mintTicket,
} from "./resolver-work.js";
export { UploadRequired } from "./upload-required.js";
export { throwIfPending, uploadStatusOf, uploadStatusResult } from "./upload-status.js";
