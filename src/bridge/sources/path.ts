/**
 * Input form: a local path or `file://` URI inside the configured roots. The file is checked with
 * path-containment.ts, hashed where it is, and handed over as it is (never copied, never deleted).
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { FileBridgeError } from "../../errors/file-bridge-error.js";
import { baseName, sanitizeFileName } from "../../internal/file-name.js";
import { chooseMediaType } from "../../media/media-type.js";
import type { CallContext } from "../call-context.js";
import { aborted, tooLarge } from "../failures.js";
import { LocalResolvedFile } from "../resolved-file.js";
import type { ResolvedFile } from "../types.js";
import { type ContainedFile, type Root, resolveContainedPath } from "./path-containment.js";

/** Resolves a local path (or a `file://` URI already turned into one) inside `roots`. */
export async function fromPath(
  path: string,
  detail: string,
  ctx: CallContext,
  roots: readonly Root[],
): Promise<ResolvedFile> {
  const found: ContainedFile = await resolveContainedPath(path, roots);
  if (found.size > ctx.maxBytes) throw tooLarge(found.size, ctx.maxBytes);
  if (found.size === 0 && !ctx.allowEmpty) {
    throw new FileBridgeError("EMPTY_FILE", "the file is empty");
  }
  // Hash without copying: local inputs are handed over as they are and never deleted.
  const writerLike = new HashOnly(ctx.maxBytes, ctx.signal);
  for await (const chunk of createReadStream(found.path)) writerLike.update(chunk as Buffer);
  if (writerLike.size === 0 && !ctx.allowEmpty) throw new FileBridgeError("EMPTY_FILE", "the file is empty");
  const name = sanitizeFileName(ctx.nameOverride ?? baseName(found.path.replaceAll("\\", "/")));
  return new LocalResolvedFile({
    name,
    mimeType: chooseMediaType(ctx.mimeOverride, name, writerLike.head),
    size: writerLike.size,
    sha256: writerLike.digest(),
    path: found.path,
    source: { kind: "path", detail },
  });
}

/** Hashes a local file while reading it, with the same cap and abort checks as a temp-file write. */
class HashOnly {
  readonly #hash = createHash("sha256");
  size = 0;
  head: Buffer = Buffer.alloc(0);
  constructor(
    private readonly maxBytes: number,
    private readonly signal: AbortSignal | undefined,
  ) {}
  update(chunk: Buffer): void {
    if (this.signal?.aborted) throw aborted();
    this.size += chunk.length;
    if (this.size > this.maxBytes) throw tooLarge(this.size, this.maxBytes);
    this.#hash.update(chunk);
    if (this.head.length < 8) this.head = Buffer.concat([this.head, chunk.subarray(0, 8 - this.head.length)]);
  }
  digest(): string {
    return this.#hash.digest("hex");
  }
}

/** Whether a string that matched no other form is meant as a path (for `FORM_DISABLED` vs `UNSUPPORTED_INPUT`). */
export function looksLikePath(input: string): boolean {
  return (
    input.startsWith("/") ||
    input.startsWith("./") ||
    input.startsWith("../") ||
    input.startsWith("~") ||
    input.startsWith("\\") ||
    /^[A-Za-z]:[\\/]/.test(input) ||
    /[/\\]/.test(input) ||
    /^[^\s]+\.[A-Za-z0-9]{1,10}$/.test(input)
  );
}
