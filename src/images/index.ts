/**
 * `mcp-file-bridge/images`: image outputs shaped for the model that asked for them. `shapeImage()`
 * is the shaper `Artifacts` uses (`fit()`, `withArtifacts()`, `image()`) and the proxy's artifact
 * producers use, for a tool that sends its image itself; the budgets are the measured clients'.
 * Needs the optional peer `sharp`, loaded on the first call.
 */

export type { ImageBudget, ImageOptions } from "./image-options.js";
export {
  CLIENT_IMAGE_BUDGETS,
  DEFAULT_IMAGE_MAX_BYTES,
  DEFAULT_IMAGE_MAX_EDGE,
  DEFAULT_IMAGE_MAX_PIXELS,
  imageBudgetFor,
} from "./image-options.js";
export type {
  ImageOriginal,
  ImageSource,
  LinkOnlyImage,
  ShapedImage,
  ShapeImageOptions,
} from "./shape-image.js";
export { shapeImage } from "./shape-image.js";
export { imageResultFor } from "./structured-images.js";
