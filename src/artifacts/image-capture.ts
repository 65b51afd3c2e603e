/**
 * Image outputs of `Artifacts`: the stored original gets a shaped image block in front of its link
 * (`image()`, `withArtifacts()`), and `fit()`'s image blocks are shaped to the client's budget with
 * the original stored behind a link. A failure (undecodable, too many pixels, no `sharp` when it is
 * required) removes what was stored for that image: nothing is left half-way.
 */
import { decodeBase64Strict } from "../bridge/sources/base64.js";
import type { CheckedImageOptions, ImageBudget } from "../images/image-options.js";
import type { ImageMode, shapeStoredImage } from "../images/stored-image.js";
import type { ContentBlock, MediaContent, TextContent } from "../mcp/types.js";
import type { FileStore, StoredFile } from "../storage/types.js";
import type { FitCapture, FitImageShaper, FitShaped } from "./fit-result.js";
import type { CapturedArtifact, ImageArtifact } from "./types.js";

/** What image shaping needs of an `Artifacts`. */
export interface ImageCaptureDeps {
  store: FileStore;
  images: CheckedImageOptions;
  mode: ImageMode;
  /** Where a streamed original is spooled while it is shaped (the instance's `tmpDir`). */
  tmpDir: string;
  /** Deletes a stored file (through the registry when there is one). */
  remove(file: StoredFile): Promise<void>;
}

/**
 * The image shaping modules (sharp's loader, the spooling, the shaping), imported on the first
 * artifact: a server that never captures one does not load them at start (docs/performance.md,
 * Session 16).
 */
const shaping = () => Promise.all([import("../images/shape-image.js"), import("../images/stored-image.js")]);

const EXTENSIONS: Record<string, string> = {
  "image/png": ".png",
  "image/jpeg": ".jpg",
  "image/webp": ".webp",
  "image/gif": ".gif",
  "image/svg+xml": ".svg",
  "image/avif": ".avif",
  "image/tiff": ".tiff",
};

/** The link's text block with `note` as its last line but one (before the download URL). */
function withNote(content: readonly ContentBlock[], note: string): ContentBlock[] {
  return content.map((block) => {
    if (block.type !== "text") return block;
    const lines = (block as TextContent).text.split("\n");
    const at = lines.findIndex((line) => line.startsWith("Download URL"));
    lines.splice(at < 0 ? lines.length : at, 0, note);
    return { ...block, text: lines.join("\n") };
  });
}

/**
 * The stored original `captured` with its image block in front (when its type is an image and
 * shaping is on). A failure removes the original and throws.
 */
export async function withShapedImage(
  captured: CapturedArtifact,
  deps: ImageCaptureDeps,
  budget: ImageBudget,
  mode: ImageMode = deps.mode,
): Promise<ImageArtifact> {
  const [, { imageBlockOf, shapedNote, shapeStoredImage }] = await shaping();
  let shaped: Awaited<ReturnType<typeof shapeStoredImage>>;
  try {
    shaped = await shapeStoredImage(deps.store, captured.file, budget, deps.images, mode, deps.tmpDir);
  } catch (error) {
    await deps.remove(captured.file).catch(() => undefined);
    throw error;
  }
  if (shaped === undefined) return { ...captured, content: [...captured.content] };
  const links = withNote(captured.content, shapedNote(shaped));
  if ("linkOnly" in shaped) return { ...captured, content: links };
  const { mimeType, width, height } = shaped;
  return {
    ...captured,
    content: [imageBlockOf(shaped), ...links],
    shown: { mimeType, width, height, bytes: shaped.data.length },
  };
}

/**
 * `fit()`'s image step: an image block is shaped for `budget` (its `maxBytes` never above the room
 * left); one that already fits and carries no metadata stays as it is, anything else is replaced by
 * the shaped copy plus the stored original's link blocks (stored through `capture`, which keeps
 * count for `fit()`'s clean-up).
 */
export function fitImageShaper(
  deps: ImageCaptureDeps,
  budget: ImageBudget | false,
  maxBytes: number,
  capture: (what: FitCapture) => Promise<CapturedArtifact>,
): FitImageShaper | undefined {
  if (budget === false || deps.images === false) return undefined;
  const options = deps.images;
  return async (block: MediaContent, name: string, room: number): Promise<FitShaped | undefined> => {
    const [{ shapeImage }, { imageBlockOf, shapedNote, shapingOn }] = await shaping();
    if (!(await shapingOn(options, deps.mode))) return undefined;
    const bytes = decodeBase64Strict(block.data, maxBytes);
    const fitBytes = Math.min(budget.maxBytes, Math.floor((Math.max(0, room) * 3) / 4));
    const shaped =
      fitBytes < 1
        ? undefined
        : await shapeImage(bytes, {
            maxEdge: budget.maxEdge,
            maxBytes: fitBytes,
            maxInputPixels: options.maxInputPixels,
            animated: options.animated,
            svg: options.svg,
          });
    // Already fits, and nothing to strip: kept as it came, nothing stored.
    if (shaped !== undefined && !("linkOnly" in shaped) && !shaped.reencoded) {
      return { kept: [block], chars: block.data.length };
    }
    const captured = await capture({
      bytes,
      name: `${name}${EXTENSIONS[block.mimeType] ?? ""}`,
      mimeType: block.mimeType,
    });
    if (shaped === undefined) return { kept: [...captured.content], stored: captured, chars: 0 };
    const links = withNote(captured.content, shapedNote(shaped));
    if ("linkOnly" in shaped) return { kept: links, stored: captured, chars: 0 };
    const image = imageBlockOf(shaped);
    return { kept: [image, ...links], stored: captured, chars: image.data.length };
  };
}
