/**
 * The code of `Artifacts` that only its async paths run (`fit()`, `image()`, `wrap()`'s image
 * shaping), loaded on their first use (`loadLater()` in artifacts.ts): a server's start does not
 * compile it (issue 39).
 */
export { fitResult } from "./fit-result.js";
export { fitImageShaper, withShapedImage } from "./image-capture.js";
