/**
 * Resolved files without a disk (`FileBridge({ disk: false })`, the default where the runtime has no
 * writable disk): the bytes an input form produces are collected in memory, capped by `maxBytes`,
 * checked against a declared size and digest like a temp file, and handed out as `bytes()` and
 * `stream()`. Reading `path` fails with `PATH_UNAVAILABLE`, which a `withFiles` tool passed a path
 * reports as a tool error naming the code.
 */

import { Readable } from "node:stream";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { sanitizeFileName } from "../internal/file-name.js";
import { createHash } from "../internal/node-builtins.js";
import { chooseMediaType, OCTET_STREAM, parseMediaType, SNIFF_BYTES } from "../media/media-type.js";
import { extensionOfType } from "../media/mime-table.js";
import { aborted } from "./failures.js";
import type { ByteSink } from "./sources/base64.js";
import type { FileSource, FileSourceKind, ResolvedFile } from "./types.js";

/** The parts of a `MaterializeContext` a file kept in memory needs. */
export interface InMemoryContext {
  readonly maxBytes: number;
  readonly signal: AbortSignal | undefined;
  readonly allowEmpty: boolean;
  readonly fallbackName: string | undefined;
  readonly nameOverride?: string | undefined;
  readonly mimeOverride?: string | undefined;
}

/** The parts of a `MaterializeSpec` a file kept in memory needs. */
export interface InMemorySpec {
  readonly kind: FileSourceKind;
  readonly detail: string;
  readonly name: string | undefined;
  readonly mimeType: string | undefined;
  readonly expectedSize?: number | undefined;
  readonly expectedSha256?: string | undefined;
}

const asyncDispose: typeof Symbol.asyncDispose = Symbol.asyncDispose ?? Symbol.for("Symbol.asyncDispose");

/** Collects chunks under a size cap and an abort signal. */
class MemorySink implements ByteSink {
  readonly chunks: Uint8Array[] = [];
  size = 0;
  readonly #maxBytes: number;
  readonly #signal: AbortSignal | undefined;

  constructor(maxBytes: number, signal: AbortSignal | undefined) {
    this.#maxBytes = maxBytes;
    this.#signal = signal;
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (this.#signal?.aborted) throw new FileBridgeError("ABORTED", "the transfer was aborted");
    if (chunk.byteLength === 0) return;
    if (this.size + chunk.byteLength > this.#maxBytes) {
      throw new FileBridgeError("FILE_TOO_LARGE", `the file is larger than ${this.#maxBytes} bytes`, {
        data: { limit: this.#maxBytes },
      });
    }
    this.chunks.push(chunk);
    this.size += chunk.byteLength;
  }
}

/** A {@link ResolvedFile} held in memory: `bytes()` and `stream()`, no `path`. */
export class MemoryResolvedFile implements ResolvedFile {
  readonly name: string;
  readonly mimeType: string;
  readonly size: number;
  readonly sha256: string;
  readonly source: FileSource;
  #bytes: Buffer | undefined;

  constructor(init: { name: string; mimeType: string; bytes: Buffer; sha256: string; source: FileSource }) {
    this.name = init.name;
    this.mimeType = init.mimeType;
    this.size = init.bytes.byteLength;
    this.sha256 = init.sha256;
    this.source = init.source;
    this.#bytes = init.bytes;
  }

  /** Not available without a disk: fails with `PATH_UNAVAILABLE`. */
  get path(): string {
    throw new FileBridgeError(
      "PATH_UNAVAILABLE",
      `"${this.name}" has no local path: this server runs without a writable disk; read its bytes or stream`,
    );
  }

  #held(): Buffer {
    if (this.#bytes === undefined) throw new FileBridgeError("NOT_FOUND", `"${this.name}" was disposed`);
    return this.#bytes;
  }

  bytes(): Promise<Buffer> {
    try {
      return Promise.resolve(Buffer.from(this.#held()));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  stream(): Readable {
    return Readable.from([this.#held()], { objectMode: false });
  }

  dispose(): Promise<void> {
    this.#bytes = undefined;
    return Promise.resolve();
  }

  [asyncDispose](): Promise<void> {
    return this.dispose();
  }
}

/**
 * `materialize` without a disk: the producer's bytes are collected in memory (cap, abort, declared
 * size and digest checked as for a temp file), named and typed the same way.
 */
export async function materializeInMemory(
  ctx: InMemoryContext,
  spec: InMemorySpec,
  produce: (sink: ByteSink) => Promise<void>,
): Promise<ResolvedFile> {
  if (ctx.signal?.aborted) throw aborted();
  const sink = new MemorySink(ctx.maxBytes, ctx.signal);
  try {
    await produce(sink);
  } catch (error) {
    if (ctx.signal?.aborted) throw aborted();
    if (error instanceof FileBridgeError) throw error;
    throw new FileBridgeError("STORAGE_ERROR", "could not read the file", { cause: error });
  }
  if (ctx.signal?.aborted) throw aborted();
  const bytes = Buffer.concat(sink.chunks, sink.size);
  if (bytes.byteLength === 0 && !ctx.allowEmpty) throw new FileBridgeError("EMPTY_FILE", "the file is empty");
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  if (
    (spec.expectedSize !== undefined && spec.expectedSize !== bytes.byteLength) ||
    (spec.expectedSha256 !== undefined && spec.expectedSha256.toLowerCase() !== sha256)
  ) {
    throw new FileBridgeError("DIGEST_MISMATCH", "the content does not match its declared size or digest", {
      data: { size: bytes.byteLength },
    });
  }
  const givenName = sanitizeFileName(ctx.nameOverride ?? spec.name ?? ctx.fallbackName, "");
  const mimeType = chooseMediaType(
    ctx.mimeOverride ?? spec.mimeType,
    givenName || "file",
    bytes.subarray(0, SNIFF_BYTES),
  );
  let name = givenName;
  if (!name) {
    const essence = parseMediaType(mimeType)?.essence;
    const ext = essence === undefined ? null : extensionOfType(essence);
    name = ext && essence !== OCTET_STREAM ? `file.${ext}` : "file";
  }
  return new MemoryResolvedFile({
    name,
    mimeType,
    bytes,
    sha256,
    source: { kind: spec.kind, detail: spec.detail },
  });
}
