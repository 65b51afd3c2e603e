/**
 * Local-disk helpers of the connect shim: turning a tool argument into a local path, hashing and
 * streaming an opened file, and saving downloads into the output folder (`.part` file, size cap,
 * linked into place so nothing is ever overwritten).
 */
import { createHash, randomBytes } from "node:crypto";
import { link, open, unlink } from "node:fs/promises";
import { homedir } from "node:os";
import { extname, isAbsolute, join, resolve } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { sanitizeFileName } from "../internal/file-name.js";
import type { ConfinedFile } from "./confined-file.js";

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
const WINDOWS_DRIVE = /^[A-Za-z]:[\\/]/;

/**
 * The local path a string argument names: `explicit` for absolute paths, `file://` URIs, `~/…`,
 * `./…` and `../…`; a bare relative name (`report.pdf`, `scans/a b.png`) is only a candidate, used
 * when such a file exists in the first allowed folder. `undefined` for anything else (a data URL, an
 * upload handle, a URI for the remote).
 */
export function localPathOf(value: string, base: string): { path: string; explicit: boolean } | undefined {
  if (value.startsWith("file://")) {
    try {
      return { path: fileURLToPath(value), explicit: true };
    } catch {
      return undefined;
    }
  }
  if (value === "~" || value.startsWith("~/"))
    return { path: join(homedir(), value.slice(1)), explicit: true };
  if (isAbsolute(value) || WINDOWS_DRIVE.test(value)) return { path: resolve(value), explicit: true };
  if (value.startsWith("./") || value.startsWith("../"))
    return { path: resolve(base, value), explicit: true };
  if (SCHEME.test(value) || value.length > 4096 || /[\n\r\0]/.test(value)) return undefined;
  return { path: resolve(base, value), explicit: false };
}

/** The sha256 of an opened file, read from its descriptor. */
export async function hashFile(file: ConfinedFile): Promise<string> {
  const hash = createHash("sha256");
  const stream = file.handle.createReadStream({ start: 0, autoClose: false });
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

function quote(value: string): string {
  return value.replace(/["\\\r\n]/g, "_");
}

/**
 * A streamed `multipart/form-data` body with one `sha256` field and one file part read from the
 * descriptor.
 */
export function multipartBody(
  file: ConfinedFile,
  sha256: string,
  field = "file",
): { body: AsyncIterable<Uint8Array>; contentType: string } {
  const boundary = `----mcp-file-bridge-${randomBytes(12).toString("hex")}`;
  const head =
    `--${boundary}\r\nContent-Disposition: form-data; name="sha256"\r\n\r\n${sha256}\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="${quote(field)}"; filename="${quote(file.name)}"; ` +
    `filename*=UTF-8''${encodeURIComponent(file.name)}\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  async function* body(): AsyncGenerator<Uint8Array> {
    yield Buffer.from(head, "utf8");
    for await (const chunk of file.handle.createReadStream({ start: 0, autoClose: false }))
      yield chunk as Buffer;
    yield Buffer.from(tail, "utf8");
  }
  return { body: body(), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Reads a whole opened file (for data URLs; callers cap the size first). */
export async function readAll(file: ConfinedFile): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of file.handle.createReadStream({ start: 0, autoClose: false }))
    chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Saves bytes into `dir` under a sanitized `name`: written to a private `.part` file first (size
 * capped), then hard-linked to a free name (`name`, `name (1)`, …) so no existing file is ever
 * replaced. Nothing is left behind on failure. Returns the final path.
 */
export async function saveDownload(
  dir: string,
  name: string,
  source: Uint8Array | AsyncIterable<Uint8Array> | Readable,
  maxBytes: number,
): Promise<string> {
  const safe = sanitizeFileName(name, "download");
  const part = join(dir, `.${randomBytes(8).toString("hex")}.part`);
  const handle = await open(part, "wx", 0o600);
  let ok = false;
  try {
    let size = 0;
    const chunks = source instanceof Uint8Array ? [source] : source;
    for await (const chunk of chunks as AsyncIterable<Uint8Array>) {
      size += chunk.length;
      if (size > maxBytes) {
        throw new FileBridgeError("FILE_TOO_LARGE", `${safe} exceeds ${maxBytes} bytes`, {
          data: { limit: maxBytes },
        });
      }
      await handle.write(chunk);
    }
    await handle.sync();
    ok = true;
  } finally {
    await handle.close();
    if (!ok) await unlink(part).catch(() => undefined);
  }
  const ext = extname(safe);
  const stem = safe.slice(0, safe.length - ext.length);
  try {
    for (let n = 0; n < 1000; n++) {
      const target = join(dir, n === 0 ? safe : `${stem} (${n})${ext}`);
      try {
        await link(part, target);
        return target;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
    }
    throw new FileBridgeError("STORAGE_ERROR", `no free file name for ${safe}`);
  } finally {
    await unlink(part).catch(() => undefined);
  }
}
