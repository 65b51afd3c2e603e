/**
 * The code of `UploadHandleResolver` that only its async paths run (`createTicket`, `filesFor`,
 * `fileFor`, `statusOf`, `rewrite`, the rate limit and `ticketRateLimit`'s counting, the
 * `check_upload` answers, the files extension's descriptor answers), loaded on their first use
 * (`loadLater()` in upload-handle-resolver.ts): a server's start does not compile it (issue 39).
 */
export { rewriteHandles, severalFiles } from "./handle-rewrite.js";
export { askRateLimit, claimTicketSlot, filesOfHandle, mintTicket } from "./resolver-work.js";
export { UploadRequired } from "./upload-required.js";
export { throwIfPending, uploadStatusOf, uploadStatusResult } from "./upload-status.js";
