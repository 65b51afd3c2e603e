/**
 * The code of `UploadHandleResolver` that only its async paths run (`fileFor`, `rewrite`, the files
 * extension's descriptor answers), loaded on their first use (`loadLater()` in
 * upload-handle-resolver.ts): a server's start does not compile it (issue 39).
 */
export { rewriteHandles, severalFiles } from "./handle-rewrite.js";
export { UploadRequired } from "./upload-required.js";
