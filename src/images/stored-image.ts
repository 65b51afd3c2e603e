/**
 * The image block for a stored image output: shaped from the stored original (a local path when
 * the store has one, so libvips reads it in bounded memory; else the store's stream, spooled to a
 * private temp file and read from there the same way), plus the line
 * the link's text gains. Used by `Artifacts` (`image()`, `withArtifacts`) and the proxy's artifact
 * producers, which store the original first and link it.
 */
import type { MediaContent } from "../mcp/types.js";
import { parseMediaType } from "../media/media-type.js";
import type { FileStore, StoredFile } from "../storage/types.js";
import type { CheckedImageOptions, ImageBudget } from "./image-options.js";
import { sharpAvailable } from "./load-sharp.js";
import { type ImageSource, type LinkOnlyImage, type ShapedImage, shapeImage } from "./shape-image.js";

/** How shaping is on: `"auto"` (the default: when `sharp` loads), `"on"` (given explicitly: `sharp` is required). */
export type ImageMode = "auto" | "on";

/** True for an `image/*` media type (parsed, never substring-matched). */
export function isImageType(mimeType: string | undefined): boolean {
  const type = mimeType === undefined ? null : parseMediaType(mimeType);
  return type !== null && type.type === "image";
}

/** The image block of a shaped image. */
export function imageBlockOf(shaped: ShapedImage): MediaContent {
  return { type: "image", data: shaped.data.toString("base64"), mimeType: shaped.mimeType };
}

/** The line a link's text gains: what the model was shown, and that the link is the original. */
export function shapedNote(shaped: ShapedImage | LinkOnlyImage): string {
  const { original } = shaped;
  const size = `${original.width}×${original.height} ${original.format}`;
  if ("linkOnly" in shaped) {
    const why =
      shaped.linkOnly === "animated"
        ? `an animated image (${original.frames} frames)`
        : shaped.linkOnly === "svg"
          ? "an SVG"
          : "too large to show even at 16 pixels";
    return `Not shown inline: ${why}; the original (${size}) is at the link.`;
  }
  const frame = shaped.firstFrame ? `the first of ${original.frames} frames, ` : "";
  if (!shaped.reencoded) return `Shown to the model as it is (${size}, ${shaped.data.length} bytes).`;
  return (
    `Shown to the model as ${frame}a ${shaped.width}×${shaped.height} ${shaped.mimeType} ` +
    `(${shaped.data.length} bytes, metadata stripped); the original (${size}) is at the link.`
  );
}

/** Whether images are shaped now: off when `false`, in `"auto"` mode only when `sharp` loads. */
export async function shapingOn(options: CheckedImageOptions, mode: ImageMode): Promise<boolean> {
  if (options === false || options.inline === "original-only") return false;
  return mode === "on" || (await sharpAvailable());
}

/**
 * Shapes a stored image for the model, or `undefined` when it is no image or shaping is off.
 * Errors are `shapeImage`'s (`UNSUPPORTED_MEDIA_TYPE` undecodable, `FILE_TOO_LARGE` pixels,
 * `INVALID_OPTION` no `sharp` in `"on"` mode); the caller removes what it stored. `tmpDir`: where a
 * streamed original is spooled (`shapeImage`'s default when unset).
 */
export async function shapeStoredImage(
  store: FileStore,
  file: StoredFile,
  budget: ImageBudget,
  options: CheckedImageOptions,
  mode: ImageMode,
  tmpDir?: string,
): Promise<ShapedImage | LinkOnlyImage | undefined> {
  if (options === false || !isImageType(file.mimeType)) return undefined;
  if (!(await shapingOn(options, mode))) return undefined;
  const local = store.localPath ? await store.localPath(file.scope, file.id) : null;
  let source: ImageSource;
  if (local !== null) source = { path: local };
  else {
    const stream = await store.read(file.scope, file.id);
    if (stream === null) return undefined;
    source = stream;
  }
  return shapeImage(source, {
    maxEdge: budget.maxEdge,
    maxBytes: budget.maxBytes,
    maxInputPixels: options.maxInputPixels,
    // A store without a local path streams the original: spooled to a private temp file under
    // `tmpDir` first, then read like a local one (bounded memory), no more than the stored size.
    maxInputBytes: Math.max(1, file.size),
    ...(tmpDir === undefined ? {} : { tmpDir }),
    animated: options.animated,
    svg: options.svg,
  });
}
