/**
 * Shapes one image for a model: oriented (EXIF applied), at most `maxEdge` pixels on the long edge
 * (never enlarged), at most `maxBytes` encoded, metadata (EXIF with GPS, XMP, IPTC, ICC, comments)
 * stripped, in a format every client's model takes (PNG for graphics and screenshots, JPEG for
 * photos, WebP when alpha or size needs it). `sharp` does the work (loaded on first use).
 *
 * Memory: given a `{ path }`, libvips reads the file itself, sequentially, shrinking JPEGs while it
 * decodes them, so a 50-megapixel photo or a 100 MB PNG is shaped holding a few rows of the input plus
 * one decoded copy at the target size (≤ maxEdge² × 4 bytes, 9.8 MB at 1,568 px) and the encoded
 * output. Bytes are held by their caller. A stream (a memory or S3 store's read, any non-path
 * source) is spooled to a private temp file under `tmpDir` first, up to `maxInputBytes`, and shaped
 * from that path the same way (sharp's own stream input would hold it whole); the file is removed
 * when shaping ends, whether it succeeded or not.
 */
import { open, stat } from "node:fs/promises";
import type { Readable } from "node:stream";
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import { defaultTmpDir } from "../internal/default-tmp-dir.js";
import { DEFAULT_IMAGE_MAX_PIXELS } from "./image-options.js";
import { loadSharp, type SharpFunction } from "./load-sharp.js";
import { spoolImage } from "./spool-image.js";

/**
 * An image to shape: a local file (read by libvips in bounded memory), bytes, or a stream (spooled
 * to a private temp file first, up to `maxInputBytes`, then read like a local file).
 *
 * @example
 * ```ts
 * const source: ImageSource = { path: "/tmp/out/screenshot.png" };
 * ```
 */
export type ImageSource = { readonly path: string } | Uint8Array | Readable;

/**
 * Options of {@link shapeImage}.
 *
 * @example
 * ```ts
 * const options: ShapeImageOptions = { maxEdge: 1568, maxBytes: 562_500 };
 * ```
 */
export interface ShapeImageOptions {
  /** Pixels on the long edge of what is returned (never more than the image has). @default 1568 */
  maxEdge?: number;
  /** Bytes of what is returned. @default 562500 */
  maxBytes?: number;
  /** Most pixels the input may declare (`FILE_TOO_LARGE` before decoding). @default 100000000 */
  maxInputPixels?: number;
  /** Most bytes read from a stream (spooled to disk), and of an SVG (read into memory, at most 64 MiB). @default 268435456 (256 MiB) */
  maxInputBytes?: number;
  /** Folder a stream is spooled in (a fresh 0700 folder per call, removed after). @default `<os tmpdir>/mcp-file-bridge-<uid>` */
  tmpDir?: string;
  /** An animated image: its first frame, or nothing (`linkOnly`). @default "first-frame" */
  animated?: "first-frame" | "link";
  /** An SVG: rasterized from its bytes (no external file is loaded), or nothing (`linkOnly`). @default "rasterize" */
  svg?: "rasterize" | "link";
}

/**
 * What the input was, as its header said (dimensions after EXIF orientation).
 *
 * @example
 * ```ts
 * const original: ImageOriginal = { format: "jpeg", width: 6000, height: 4000, frames: 1 };
 * ```
 */
export interface ImageOriginal {
  /** libvips' name of the format: `png`, `jpeg`, `webp`, `gif`, `svg`, `tiff`, `heif`, … */
  format: string;
  width: number;
  height: number;
  /** Frames of an animated image; 1 for a still one. */
  frames: number;
}

/**
 * An image block's worth: the encoded bytes, their type and size.
 *
 * @example
 * ```ts
 * const shaped = await shapeImage({ path }, { maxEdge: 1568 });
 * if (!("linkOnly" in shaped)) console.log(shaped.width, shaped.height, shaped.data.length);
 * ```
 */
export interface ShapedImage {
  data: Buffer;
  mimeType: "image/png" | "image/jpeg" | "image/webp" | "image/gif";
  width: number;
  height: number;
  original: ImageOriginal;
  /** False when the input already fit and carried no metadata: `data` is its bytes, unchanged. */
  reencoded: boolean;
  /** True when only the first frame of an animated image was kept. */
  firstFrame: boolean;
}

/**
 * The options said not to send this image (an animated image or an SVG, by `animated` / `svg`), or
 * even 16 pixels on the long edge does not fit `maxBytes`: only its link should be returned.
 *
 * @example
 * ```ts
 * const result = await shapeImage(bytes, { svg: "link" }); // { linkOnly: "svg", original: {...} } for an SVG
 * ```
 */
export interface LinkOnlyImage {
  linkOnly: "animated" | "svg" | "too-large";
  original: ImageOriginal;
}

const DEFAULT_MAX_EDGE = 1568;
const DEFAULT_MAX_BYTES = 562_500;
const DEFAULT_MAX_INPUT_BYTES = 256 * 1024 * 1024;
/** Most bytes of an SVG, which is read into memory (librsvg is given bytes, never a path). */
const MAX_SVG_BYTES = 64 * 1024 * 1024;
/** Smallest long edge tried before giving up on `maxBytes`. */
const MIN_EDGE = 16;
/** Formats kept as they are when they already fit and carry no metadata. */
const PASS_THROUGH: Record<string, ShapedImage["mimeType"]> = {
  png: "image/png",
  jpeg: "image/jpeg",
  webp: "image/webp",
  gif: "image/gif",
};
/** Formats that hold graphics (screenshots, charts, text): lossless PNG first. */
const GRAPHIC = new Set(["png", "gif", "svg", "bmp", "tiff", "ppm", "pdf"]);

type Encoded = { data: Buffer; mimeType: ShapedImage["mimeType"] };
type Raw = { data: Buffer; width: number; height: number; channels: 1 | 2 | 3 | 4 };

function undecodable(error: unknown): FileBridgeError {
  if (isFileBridgeError(error)) return error;
  const message = String((error as Error)?.message ?? error);
  if (/pixel limit/i.test(message)) return tooManyPixels(undefined, undefined);
  return new FileBridgeError("UNSUPPORTED_MEDIA_TYPE", `the image cannot be decoded: ${message}`, {
    data: { reason: "undecodable" },
    cause: error,
  });
}

function tooManyPixels(
  width: number | undefined,
  height: number | undefined,
  limit?: number,
): FileBridgeError {
  return new FileBridgeError(
    "FILE_TOO_LARGE",
    `the image declares ${width ?? "?"} × ${height ?? "?"} pixels, over the limit of ${limit ?? "the pixel limit"}`,
    { data: { reason: "pixels", ...(limit === undefined ? {} : { limit }), width, height } },
  );
}

function positiveOr(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new FileBridgeError("INVALID_OPTION", `shapeImage: ${name} must be a positive integer`, {
      data: { option: name },
    });
  }
  return value;
}

async function collect(stream: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    size += bytes.length;
    if (size > limit) {
      stream.destroy();
      throw new FileBridgeError("FILE_TOO_LARGE", `the image exceeds ${limit} bytes`, { data: { limit } });
    }
    chunks.push(bytes);
  }
  return Buffer.concat(chunks);
}

/** Reads a whole (small) file through one descriptor, up to `limit` bytes. */
async function readSmall(path: string, limit: number): Promise<Buffer> {
  const handle = await open(path, "r");
  try {
    return await collect(handle.createReadStream({ autoClose: false }), limit);
  } finally {
    await handle.close();
  }
}

/** What sharp reads: a path string or bytes. */
type SharpInput = string | Buffer;

function isPathSource(source: ImageSource): source is { readonly path: string } {
  return (
    !(source instanceof Uint8Array) &&
    typeof (source as { path?: unknown }).path === "string" &&
    typeof (source as { pipe?: unknown }).pipe !== "function"
  );
}

function isStream(source: ImageSource): source is Readable {
  return typeof (source as Readable)?.pipe === "function";
}

function inputOf(source: ImageSource): SharpInput {
  if (source instanceof Uint8Array) return Buffer.from(source.buffer, source.byteOffset, source.byteLength);
  if (isPathSource(source)) return source.path;
  throw new FileBridgeError("INVALID_INPUT", "shapeImage needs a { path }, bytes or a readable stream");
}

async function sizeOf(input: SharpInput): Promise<number> {
  return typeof input === "string" ? (await stat(input)).size : input.length;
}

/**
 * The encoders tried, in order, at one size: lossless PNG then a 256-colour PNG for graphics
 * (text stays sharp), JPEG for photos, WebP (which keeps alpha) when those are too large.
 */
function ladder(
  graphic: boolean,
  alpha: boolean,
): Array<(s: ReturnType<SharpFunction>) => ReturnType<SharpFunction>> {
  const png = (s: ReturnType<SharpFunction>) => s.png({ compressionLevel: 9, adaptiveFiltering: true });
  const palette = (s: ReturnType<SharpFunction>) =>
    s.png({ compressionLevel: 9, palette: true, quality: 90 });
  const webp = (quality: number) => (s: ReturnType<SharpFunction>) =>
    s.webp({ quality, alphaQuality: 90, effort: 4 });
  const jpeg = (quality: number) => (s: ReturnType<SharpFunction>) =>
    s.jpeg({ quality, mozjpeg: true, chromaSubsampling: quality >= 90 ? "4:4:4" : "4:2:0" });
  if (graphic || alpha) return [png, palette, webp(90), webp(75), webp(60)];
  return [jpeg(85), jpeg(75), jpeg(60), jpeg(45)];
}

const MIME: Record<string, ShapedImage["mimeType"]> = {
  png: "image/png",
  jpeg: "image/jpeg",
  webp: "image/webp",
};

async function encodeUnder(
  sharp: SharpFunction,
  raw: Raw,
  graphic: boolean,
  maxBytes: number,
): Promise<Encoded | number> {
  let smallest = Number.POSITIVE_INFINITY;
  for (const step of ladder(graphic, raw.channels === 2 || raw.channels === 4)) {
    const { data, info } = await step(
      sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: raw.channels } }),
    ).toBuffer({ resolveWithObject: true });
    if (data.length <= maxBytes) return { data, mimeType: MIME[info.format] ?? "image/png" };
    smallest = Math.min(smallest, data.length);
  }
  return smallest;
}

/**
 * Shapes an image for a model (see the module comment for what that means and what memory it takes).
 * Errors: `UNSUPPORTED_MEDIA_TYPE` (`data.reason: "undecodable"`: not an image, truncated, corrupt),
 * `FILE_TOO_LARGE` (`data.reason: "pixels"`: more pixels than `maxInputPixels`, refused before
 * decoding; or a stream over `maxInputBytes`), `INVALID_OPTION` (`sharp` is not installed).
 *
 * @example
 * ```ts
 * const shaped = await shapeImage({ path: "/tmp/out/page.png" }, { maxEdge: 1568, maxBytes: 562_500 });
 * if (!("linkOnly" in shaped)) return { content: [{ type: "image", data: shaped.data.toString("base64"), mimeType: shaped.mimeType }] };
 * ```
 */
export async function shapeImage(
  source: ImageSource,
  options: ShapeImageOptions = {},
): Promise<ShapedImage | LinkOnlyImage> {
  const maxInputBytes = positiveOr(options.maxInputBytes, DEFAULT_MAX_INPUT_BYTES, "maxInputBytes");
  if (options.tmpDir !== undefined && (typeof options.tmpDir !== "string" || options.tmpDir.length === 0)) {
    throw new FileBridgeError("INVALID_OPTION", "shapeImage: tmpDir must be a non-empty path", {
      data: { option: "tmpDir" },
    });
  }
  positiveOr(options.maxEdge, DEFAULT_MAX_EDGE, "maxEdge");
  positiveOr(options.maxBytes, DEFAULT_MAX_BYTES, "maxBytes");
  const maxPixels = positiveOr(options.maxInputPixels, DEFAULT_IMAGE_MAX_PIXELS, "maxInputPixels");
  if (!isStream(source)) return shapeInput(inputOf(source), options);
  // Checked before a byte is spooled: a missing `sharp` or a bad option costs no disk.
  const sharp = await loadSharp();
  // A bomb is refused from the stream's head (its header), before the rest of it is read.
  const checkHead = async (head: Buffer) => {
    const meta = await sharp(head, { limitInputPixels: false })
      .metadata()
      .catch(() => undefined);
    const rotated = (meta?.orientation ?? 1) >= 5;
    const width = (rotated ? meta?.height : meta?.width) ?? 0;
    const height = (rotated ? meta?.width : meta?.height) ?? 0;
    if (width * height > maxPixels) throw tooManyPixels(width, height, maxPixels);
  };
  const folder = options.tmpDir ?? defaultTmpDir();
  const spooled = await spoolImage(source, folder, maxInputBytes, checkHead);
  try {
    return await shapeInput(spooled.path, options);
  } finally {
    await spooled.remove();
  }
}

async function shapeInput(
  from: SharpInput,
  options: ShapeImageOptions,
): Promise<ShapedImage | LinkOnlyImage> {
  const maxEdge = positiveOr(options.maxEdge, DEFAULT_MAX_EDGE, "maxEdge");
  const maxBytes = positiveOr(options.maxBytes, DEFAULT_MAX_BYTES, "maxBytes");
  const maxPixels = positiveOr(options.maxInputPixels, DEFAULT_IMAGE_MAX_PIXELS, "maxInputPixels");
  const maxInputBytes = positiveOr(options.maxInputBytes, DEFAULT_MAX_INPUT_BYTES, "maxInputBytes");
  const sharp = await loadSharp();
  let input = from;
  // `sequentialRead`: libvips streams the input top to bottom; `failOn: "error"`: a truncated or
  // corrupt file fails instead of decoding to grey.
  const open = (at: SharpInput) =>
    sharp(at, { limitInputPixels: maxPixels, sequentialRead: true, failOn: "error" });
  let meta: Awaited<ReturnType<ReturnType<SharpFunction>["metadata"]>>;
  try {
    // The header only (no pixel is decoded), read without the pixel limit so a bomb is named by size.
    meta = await sharp(input, { limitInputPixels: false }).metadata();
  } catch (error) {
    throw undecodable(error);
  }
  const rotated = (meta.orientation ?? 1) >= 5;
  const width = (rotated ? meta.height : meta.width) ?? 0;
  const height = (rotated ? meta.width : meta.height) ?? 0;
  const format = meta.format ?? "unknown";
  const frames = meta.pages ?? 1;
  const original: ImageOriginal = { format, width, height, frames };
  if (width < 1 || height < 1) throw undecodable(new Error("the image has no dimensions"));
  // A decompression bomb is refused from its header, before a pixel is decoded.
  if (width * height > maxPixels) throw tooManyPixels(width, height, maxPixels);
  if (format === "svg" && options.svg === "link") return { linkOnly: "svg", original };
  if (frames > 1 && options.animated === "link") return { linkOnly: "animated", original };
  if (format === "svg" && typeof input === "string") {
    // From bytes, librsvg has no base folder and loads no file an <image href> names.
    input = await readSmall(input, Math.min(maxInputBytes, MAX_SVG_BYTES));
  }

  const plain =
    meta.exif === undefined &&
    meta.xmp === undefined &&
    meta.iptc === undefined &&
    meta.icc === undefined &&
    (meta.comments?.length ?? 0) === 0 &&
    (meta.orientation ?? 1) === 1;
  const passType = PASS_THROUGH[format];
  if (plain && passType !== undefined && frames === 1 && Math.max(width, height) <= maxEdge) {
    const size = await sizeOf(input);
    if (size <= maxBytes) {
      const data = typeof input === "string" ? await readSmall(input, maxBytes) : input;
      // Decoded once (≤ maxEdge² pixels) so a truncated or corrupt file is refused, not passed on.
      await open(data)
        .raw()
        .toBuffer()
        .catch((error: unknown) => {
          throw undecodable(error);
        });
      return { data, mimeType: passType, width, height, original, reencoded: false, firstFrame: false };
    }
  }

  // Decoded once, oriented and shrunk to the target edge; every encoding below starts from it.
  let raw: Raw;
  try {
    const { data, info } = await open(input)
      .autoOrient()
      .resize({ width: maxEdge, height: maxEdge, fit: "inside", withoutEnlargement: true })
      .raw({ depth: "uchar" })
      .toBuffer({ resolveWithObject: true });
    raw = { data, width: info.width, height: info.height, channels: info.channels };
  } catch (error) {
    throw undecodable(error);
  }
  const graphic = GRAPHIC.has(format);
  for (;;) {
    const encoded = await encodeUnder(sharp, raw, graphic, maxBytes);
    if (typeof encoded !== "number") {
      return {
        ...encoded,
        width: raw.width,
        height: raw.height,
        original,
        reencoded: true,
        firstFrame: frames > 1,
      };
    }
    const edge = Math.max(raw.width, raw.height);
    if (edge <= MIN_EDGE) return { linkOnly: "too-large", original };
    // Bytes scale with area: shrink the edge by the square root of how far over, and a margin.
    const next = Math.max(
      MIN_EDGE,
      Math.min(edge - 1, Math.floor(edge * Math.sqrt(maxBytes / encoded) * 0.9)),
    );
    const { data, info } = await sharp(raw.data, {
      raw: { width: raw.width, height: raw.height, channels: raw.channels },
    })
      .resize({ width: next, height: next, fit: "inside" })
      .raw()
      .toBuffer({ resolveWithObject: true });
    raw = { data, width: info.width, height: info.height, channels: info.channels };
  }
}
