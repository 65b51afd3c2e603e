/**
 * The input forms' code, loaded by `FileBridge` on the first file argument it resolves
 * (`loadForms()` in file-bridge.ts): a server that starts and lists its tools compiles none of it
 * (issue 39, docs/performance.md, Session 20).
 */
export { fromDownloadUrl } from "./download-url.js";
export { fromHttps } from "./https.js";
export { fromBase64, fromDataUrl } from "./inline.js";
export { fromObject } from "./object.js";
export { fromPath } from "./path.js";
export { fileUriToPath, prepareRoots } from "./path-containment.js";
export { fromResolver, fromResolverEach } from "./resolver.js";
