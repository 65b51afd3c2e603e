/**
 * The bridge's one way to make a local file: bytes from a producer, a stream or a stored file are
 * written into a new private file in a private folder of the call's own (pre-made, see
 * bridge/call-folders.ts; hashed, capped, checked against a declared size and digest as they go),
 * named, and handed back as a {@link ResolvedFile} whose `dispose()` unlinks that file and removes
 * the folder. Every input form that copies bytes goes through here, and so does
 * `UploadHandleResolver.rewrite()`.
 */
import { rename } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import { sanitizeFileName } from "../internal/file-name.js";
import { chooseMediaType, OCTET_STREAM, parseMediaType } from "../media/media-type.js";
import { extensionOfType } from "../media/mime-table.js";
import type { FileStore, StoredFile } from "../storage/types.js";
import { createCallFile, refillCallFolders, removeCallFile } from "./call-folders.js";
import { aborted } from "./failures.js";
import { materializeInMemory } from "./memory-resolved-file.js";
import { LocalResolvedFile } from "./resolved-file.js";
import type { ByteSink } from "./sources/base64.js";
import { storedFileSource } from "./stored-file-source.js";
import { sha256OfFileSync, TempFileWriter } from "./temp-file-writer.js";
import type { FileSource, FileSourceKind, ResolvedFile } from "./types.js";

const MAX_DISK_NAME_BYTES = 200;
/** Sources decoded in memory from the argument: their sha256 is computed on first read. */
const DECODED_KINDS: ReadonlySet<FileSourceKind> = new Set(["data-url", "base64", "object"]);

/** Where and under which limits a file is materialized, and the names / type the caller gives it. */
export interface MaterializeContext {
  /** Folder the per-call folder is made in. */
  readonly tmpDir: string;
  /** `false`: the file is kept in memory, not written (a runtime without a disk). @default true */
  readonly disk?: boolean | undefined;
  /**
   * The caller's scope: the call's folder, once emptied by dispose, serves later calls of this scope
   * only (bridge/call-folders.ts). Without one, the folder is removed after the call.
   */
  readonly scope?: string | undefined;
  /** Size cap in bytes (`FILE_TOO_LARGE`). */
  readonly maxBytes: number;
  /** Aborts the write (`ABORTED`); the folder is removed. */
  readonly signal: AbortSignal | undefined;
  /** Whether a zero-byte file is accepted instead of failing with `EMPTY_FILE`. */
  readonly allowEmpty: boolean;
  /** Name to use when neither the caller nor the input gives one. */
  readonly fallbackName: string | undefined;
  /** Name / media type given by an enclosing object form; they win over what the input carries. */
  readonly nameOverride?: string | undefined;
  readonly mimeOverride?: string | undefined;
}

/** What {@link materialize} needs to know besides the bytes. */
export interface MaterializeSpec {
  readonly kind: FileSourceKind;
  readonly detail: string;
  /** A name the input carries (data URL `name=`, URL segment…). */
  readonly name: string | undefined;
  /** A media type the input declares. */
  readonly mimeType: string | undefined;
  /** Expected size / sha256 to verify after writing (`DIGEST_MISMATCH`). */
  readonly expectedSize?: number | undefined;
  readonly expectedSha256?: string | undefined;
}

/** Writes the file's bytes into the writer. */
export type Producer = (writer: ByteSink) => Promise<void>;

/** A name safe to use inside a private temp folder: the sanitized name, shortened to fit on disk. */
function diskName(name: string): string {
  if (Buffer.byteLength(name) <= MAX_DISK_NAME_BYTES) return name;
  const dot = name.lastIndexOf(".");
  const ext = dot > 0 ? name.slice(dot) : "";
  return /^\.[A-Za-z0-9]{1,16}$/.test(ext) ? `file${ext}` : "file";
}

/**
 * Writes the bytes a producer yields into a new private file in a folder of the call's own (see
 * bridge/call-folders.ts), hashing and capping as it goes, then names the file. On any failure the
 * file is removed and the error is a FileBridgeError.
 */
export async function materialize(
  ctx: MaterializeContext,
  spec: MaterializeSpec,
  produce: Producer,
): Promise<ResolvedFile> {
  if (ctx.disk === false) return materializeInMemory(ctx, spec, produce);
  if (ctx.signal?.aborted) throw aborted();
  // With a usable name the file is written under it directly in the call's own folder; otherwise
  // under a placeholder there, renamed once the sniffed type has given it an extension.
  const givenName = sanitizeFileName(ctx.nameOverride ?? spec.name ?? ctx.fallbackName, "");
  const fileName = givenName ? diskName(givenName) : ".partial";
  // The file is created on the thread pool while the producer decodes its first chunk.
  const created = createCallFile(ctx.tmpDir, fileName, ctx.scope);
  created.catch(() => {});
  // Inputs decoded from the argument itself are hashed when `sha256` is first read (hashing while
  // writing cost more than decoding and writing); streamed inputs and digest checks hash now.
  const hashNow = spec.expectedSha256 !== undefined || !DECODED_KINDS.has(spec.kind);
  const writer = TempFileWriter.opening(
    created.then((file) => file.fd),
    ctx.maxBytes,
    { signal: ctx.signal, hash: hashNow },
  );
  let path: string | undefined;
  try {
    await produce(writer);
    const written = await writer.finish();
    refillCallFolders(ctx.tmpDir);
    const { folder, path: partial } = await created;
    path = partial;
    if (ctx.signal?.aborted) throw aborted();
    if (written.size === 0 && !ctx.allowEmpty) throw new FileBridgeError("EMPTY_FILE", "the file is empty");
    if (
      (spec.expectedSize !== undefined && spec.expectedSize !== written.size) ||
      (spec.expectedSha256 !== undefined && spec.expectedSha256.toLowerCase() !== written.sha256)
    ) {
      throw new FileBridgeError("DIGEST_MISMATCH", "the content does not match its declared size or digest", {
        data: { size: written.size },
      });
    }
    const mimeType = chooseMediaType(ctx.mimeOverride ?? spec.mimeType, givenName || "file", written.head);
    let name = givenName;
    if (!name) {
      const essence = parseMediaType(mimeType)?.essence;
      const ext = essence === undefined ? null : extensionOfType(essence);
      name = ext && essence !== OCTET_STREAM ? `file.${ext}` : "file";
      const named = join(folder, diskName(name));
      await rename(partial, named);
      path = named;
    }
    const final = path;
    return new LocalResolvedFile({
      name,
      mimeType,
      size: written.size,
      sha256: written.sha256 ?? (() => sha256OfFileSync(final)),
      path: final,
      source: { kind: spec.kind, detail: spec.detail },
      owned: { folder, tmpDir: ctx.tmpDir, scope: ctx.scope },
    });
  } catch (error) {
    await writer.close().catch(() => {});
    const file = await created.catch(() => undefined);
    if (file) await removeCallFile(path ?? file.path, file.folder);
    if (ctx.signal?.aborted && !isFileBridgeError(error, "TIMEOUT")) {
      throw isFileBridgeError(error, "ABORTED") ? error : aborted();
    }
    if (isFileBridgeError(error)) throw error;
    throw new FileBridgeError("STORAGE_ERROR", "could not write the temp file", { cause: error });
  }
}

/**
 * {@link materialize} for bytes that come as a stream: `open()` is called once the folder is on its
 * way, and the stream is destroyed when the copy ends, whether it succeeded or not.
 */
export function materializeStream(
  ctx: MaterializeContext,
  spec: MaterializeSpec,
  open: () => Readable | Promise<Readable>,
): Promise<ResolvedFile> {
  return materialize(ctx, spec, async (writer) => {
    const stream = await open();
    try {
      for await (const chunk of stream) await writer.write(chunk as Uint8Array);
    } finally {
      stream.destroy();
    }
  });
}

/**
 * {@link materialize} for a file in a {@link FileStore}: its name and media type come from the
 * metadata, and its size and sha256 are verified while copying (`DIGEST_MISMATCH`). A file deleted
 * in the meantime fails with `NOT_FOUND`.
 */
export function materializeStoredFile(
  ctx: MaterializeContext,
  store: FileStore,
  file: StoredFile,
  source: FileSource,
): Promise<ResolvedFile> {
  const stored = storedFileSource(store, file);
  return materializeStream(
    ctx,
    {
      kind: source.kind,
      detail: source.detail,
      name: stored.name,
      mimeType: stored.mimeType,
      expectedSize: stored.size,
      expectedSha256: stored.sha256,
    },
    () => stored.open(),
  );
}
