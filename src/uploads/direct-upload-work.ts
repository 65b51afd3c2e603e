/**
 * The async bodies of the direct-to-storage strategy (`direct-upload.ts`): presigning a staging
 * object, the dedup lookup, and the commits. Loaded at the strategy's first call (issue 39), so a
 * server that attaches `files: { direct }` compiles them only when a client uses it; the strategy
 * keeps the store check, which `attach()` runs.
 */
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import { newId } from "../internal/ids.js";
import type { DirectUploads, StoredFile } from "../storage/types.js";
import type { DirectUploadDeps, DirectUploadRequest, DirectUploadResult } from "./direct-upload-types.js";
import {
  type FileTransferDescriptor,
  type FileValue,
  filesError,
  fileValueOf,
  wireDigest,
} from "./files-wire.js";
import type { DirectUploadOptions } from "./types.js";
import { type TicketRecord, ticketStateKey, uploadHandleOf } from "./upload-handle.js";

/** How many of a scope's files a dedup lookup reads at most (oldest first). */
const DEDUP_SCAN_LIMIT = 1000;

/** What `authorizeUpload` recorded for a direct upload, under its ticket id. */
interface DirectRecord {
  scope: string;
  stagingId: string;
  name?: string;
  mimeType?: string;
  size?: number;
  sha256?: string;
  maxBytes: number;
  /** File lifetime, seconds. */
  fileTtl: number;
  /** Lifetime of the record (the ticket's), seconds. */
  ttl: number;
  /** The file id once committed. */
  committed?: string;
}

function recordKey(ticketId: string): string {
  return `mcp-file-bridge:direct-upload:${ticketId}`;
}

function claimKey(ticketId: string): string {
  return `mcp-file-bridge:direct-commit:${ticketId}`;
}

/** A store commit failure in the draft's words (`data.reason`). */
function refusal(error: unknown, declaredSize: number | undefined): unknown {
  if (!isFileBridgeError(error)) return error;
  const data = (error.data ?? {}) as Record<string, unknown>;
  if (error.code === "FILE_TOO_LARGE") {
    return filesError("FILE_TOO_LARGE", "maxSizeExceeded", error.message, { maxSize: data.limit });
  }
  if (error.code !== "DIGEST_MISMATCH") return error;
  if (typeof data.size === "number" && declaredSize !== undefined) {
    const larger = data.size > declaredSize;
    return filesError(
      larger ? "FILE_TOO_LARGE" : "INVALID_REQUEST",
      larger ? "maxSizeExceeded" : "sizeMismatch",
      `The file has ${data.size} bytes; ${declaredSize} were declared`,
      { maxSize: declaredSize, actualSize: data.size },
    );
  }
  return filesError("DIGEST_MISMATCH", "digestMismatch", "The file's sha-256 is not the declared one");
}

/**
 * The work of one `DirectUploadStrategy`: `authorize` makes descriptors, `commitPending` /
 * `complete` commit them.
 */
export class DirectUploadWork {
  readonly #deps: DirectUploadDeps;
  readonly #direct: DirectUploads;
  readonly #options: DirectUploadOptions;

  constructor(deps: DirectUploadDeps, direct: DirectUploads, options: DirectUploadOptions) {
    this.#deps = deps;
    this.#direct = direct;
    this.#options = options;
  }

  /** A presigned `POST` of a fresh staging object (or, with `dedup`, the scope's file with that digest). */
  async authorize(request: DirectUploadRequest): Promise<DirectUploadResult> {
    const { scope, sha256 } = request;
    if (this.#options.dedup && sha256 !== undefined) {
      const existing = await this.#sameContent(scope, sha256, request.size);
      if (existing) {
        return { file: fileValueOf(existing, uploadHandleOf(existing, this.#deps.refs)), committed: true };
      }
    }
    const stagingId = newId();
    const ttl = Math.max(1, Math.ceil((request.expiresAt - request.issuedAt) / 1000));
    const record: DirectRecord = {
      scope,
      stagingId,
      maxBytes: request.maxBytes,
      fileTtl: request.fileTtl,
      ttl,
      ...(request.name === undefined ? {} : { name: request.name }),
      ...(request.mimeType === undefined ? {} : { mimeType: request.mimeType }),
      ...(request.size === undefined ? {} : { size: request.size }),
      ...(sha256 === undefined ? {} : { sha256 }),
    };
    await this.#deps.state.set(recordKey(request.ticketId), record, { ttl });
    const target = await this.#direct.presignUpload({
      scope,
      stagingId,
      expiresIn: ttl,
      signingDate: new Date(request.issuedAt),
      maxBytes: request.maxBytes,
      ...(request.size === undefined ? {} : { size: request.size }),
      ...(request.mimeType === undefined ? {} : { mimeType: request.mimeType }),
    });
    const file: FileValue = {
      uri: request.uri,
      ...(request.name === undefined ? {} : { name: request.name }),
      ...(request.mimeType === undefined ? {} : { mimeType: request.mimeType }),
      ...(request.size === undefined ? {} : { size: request.size }),
      ...(sha256 === undefined ? {} : { digest: wireDigest(sha256) }),
    };
    const upload: FileTransferDescriptor = {
      transport: "https",
      method: target.method,
      url: target.url,
      multipart: { fileField: target.fileField, fields: target.fields },
      expiresAt: new Date(request.expiresAt).toISOString(),
    };
    return { file, upload };
  }

  /**
   * Commits the direct upload a ticket id stands for, in `scope`: the stored file, or `null` when
   * there is none (unknown, another scope's, expired, or nothing uploaded yet).
   */
  async commitPending(ticketId: string, scope: string): Promise<StoredFile[] | null> {
    const record = await this.#deps.state.get<DirectRecord>(recordKey(ticketId));
    if (!record || record.scope !== scope || record.committed !== undefined) return null;
    return this.#commit(ticketId, record);
  }

  /**
   * `files/completeUpload` of the direct upload `ticketId` (the URI's id, its scope reference
   * already checked): commits it, or answers the committed file again. Bytes put to the descriptor
   * after the commit are a second upload: refused (`TOKEN_ALREADY_USED`, `reason:
   * "alreadyCommitted"`) and removed. `undefined` when the id is no direct upload of `scope`.
   */
  async complete(uri: string, ticketId: string, scope: string): Promise<StoredFile[] | null | undefined> {
    const record = await this.#deps.state.get<DirectRecord>(recordKey(ticketId));
    if (!record || record.scope !== scope) return undefined;
    if (record.committed === undefined) return this.#commit(ticketId, record);
    if (await this.#direct.discard(scope, record.stagingId)) {
      throw filesError(
        "TOKEN_ALREADY_USED",
        "alreadyCommitted",
        "This upload was already committed; its URI stands for the first bytes. Ask for a new upload.",
        { uri },
      );
    }
    return undefined;
  }

  async #commit(ticketId: string, record: DirectRecord): Promise<StoredFile[] | null> {
    const { state } = this.#deps;
    const { scope } = record;
    if (!(await state.setIfAbsent(claimKey(ticketId), 1, { ttl: record.ttl }))) {
      const done = await state.get<TicketRecord>(ticketStateKey(ticketId));
      if (done && done.scope === scope) return this.#filesOf(done);
      throw new FileBridgeError("UPLOAD_IN_PROGRESS", "This upload is being committed", {
        data: { retryable: true },
      });
    }
    let file: StoredFile | null;
    try {
      file = await this.#direct.commit(scope, record.stagingId, {
        scope,
        name: record.name ?? "upload",
        ...(record.mimeType === undefined ? {} : { mimeType: record.mimeType }),
        typeFromBytes: true,
        kind: "upload",
        ttl: record.fileTtl,
        maxBytes: record.maxBytes,
        ...(record.size === undefined ? {} : { expectedSize: record.size }),
        ...(record.sha256 === undefined ? {} : { expectedSha256: record.sha256 }),
      });
    } catch (error) {
      // Refused: the staging object is gone and the descriptor may be used again until it expires.
      await state.delete(claimKey(ticketId));
      throw refusal(error, record.size);
    }
    if (!file) {
      await state.delete(claimKey(ticketId));
      return null;
    }
    const ticket: TicketRecord = { scope, files: [file.id] };
    await state.set(ticketStateKey(ticketId), ticket, { ttl: record.fileTtl });
    await state.set(recordKey(ticketId), { ...record, committed: file.id }, { ttl: record.ttl });
    await this.#stored(file);
    return [file];
  }

  async #stored(file: StoredFile): Promise<void> {
    try {
      await this.#options.onStored?.(file);
    } catch (error) {
      // The file stays stored, as after a route upload whose onStored failed.
      this.#options.onError?.(error);
    }
  }

  async #filesOf(record: TicketRecord): Promise<StoredFile[] | null> {
    const files = await Promise.all(record.files.map((id) => this.#deps.store.head(record.scope, id)));
    const found = files.filter((file): file is StoredFile => file !== null);
    return found.length > 0 ? found : null;
  }

  /** A live file of `scope` with this sha-256 (and size, when declared), reading at most the scope's first files. */
  async #sameContent(scope: string, sha256: string, size: number | undefined): Promise<StoredFile | null> {
    let cursor: string | undefined;
    let read = 0;
    do {
      const page = await this.#deps.store.list(scope, cursor === undefined ? {} : { cursor });
      const hit = page.files.find(
        (file) =>
          file.scope === scope && file.sha256 === sha256 && (size === undefined || file.size === size),
      );
      if (hit) return hit;
      read += page.files.length;
      cursor = page.nextCursor;
    } while (cursor !== undefined && read < DEDUP_SCAN_LIMIT);
    return null;
  }
}
