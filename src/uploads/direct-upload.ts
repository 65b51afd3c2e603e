/**
 * The files extension's direct-to-storage descriptor (`files: { direct: true }` with a store that
 * has `directUploads`, i.e. `s3Store`): `authorizeUpload` hands out a presigned `POST` form of a
 * staging object of the caller's scope instead of an upload-route URL, so the bytes never touch the
 * server; the form's policy pins the key, the content type and the size range, and
 * refuses any other field (no copy, no public ACL, no metadata the server did not choose).
 * The upload commits on the first resolve of its URI (a tool call, `authorizeDownload`) or on
 * `files/completeUpload`: the store copies the object into place and reads the copy once (declared
 * size, sha-256, the size cap), so the file is the bytes it verified, and removes the staging object; then the URI's handle is recorded and
 * `onStored` runs, as after a route upload. Wrong bytes or a wrong size are refused with the draft's
 * `data.reason` and leave no object behind. Same rules as tickets: one scope, one commit.
 *
 * With `dedup`, a declared sha-256 that a live file of the caller's scope already has needs no
 * upload: the result carries that file, `committed: true`, and no descriptor. Never across scopes.
 */
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import { newId } from "../internal/ids.js";
import type { ScopeRefs } from "../scope/scope-refs.js";
import type { DirectUploads, FileStore, StateStore, StoredFile } from "../storage/types.js";
import {
  type FileTransferDescriptor,
  type FileValue,
  filesError,
  fileValueOf,
  wireDigest,
} from "./files-wire.js";
import type { DirectUploadOptions } from "./types.js";
import { parseUploadHandle, type TicketRecord, ticketStateKey, uploadHandleOf } from "./upload-handle.js";

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

/** What one direct `authorizeUpload` asks for: the ticket's id, lifetime and declared claims. */
export interface DirectUploadRequest {
  scope: string;
  ticketId: string;
  uri: string;
  /** When the ticket was issued and expires, milliseconds (the minter's clock). */
  issuedAt: number;
  expiresAt: number;
  name?: string;
  mimeType?: string;
  size?: number;
  sha256?: string;
  maxBytes: number;
  fileTtl: number;
}

/** What the direct strategy answers `authorizeUpload` with. */
export type DirectUploadResult =
  | { file: FileValue; upload: FileTransferDescriptor }
  | { file: FileValue; committed: true };

/** What the strategy borrows from its resolver. */
export interface DirectUploadDeps {
  store: FileStore;
  state: StateStore;
  refs: ScopeRefs;
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
 * The direct-to-storage strategy of one files extension. Built by the resolver when
 * `files.direct` is on; `authorize` makes descriptors, `commitPending` / `complete` commit them.
 */
export class DirectUploadStrategy {
  readonly #deps: DirectUploadDeps;
  readonly #direct: DirectUploads;
  readonly #options: DirectUploadOptions;

  constructor(deps: DirectUploadDeps, options: DirectUploadOptions) {
    const direct = deps.store.directUploads;
    if (!direct || typeof direct.presignUpload !== "function") {
      throw new FileBridgeError(
        "INVALID_OPTION",
        `files extension: direct needs a store with directUploads (s3Store); this store is ${deps.store.driver}`,
        { data: { option: "direct" } },
      );
    }
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
   * `files/completeUpload` of a direct upload: commits it, or answers the committed file again. Bytes
   * put to the descriptor after the commit are a second upload: refused (`TOKEN_ALREADY_USED`,
   * `reason: "alreadyCommitted"`) and removed. `undefined` when the URI is no direct upload of `scope`.
   */
  async complete(uri: string, scope: string): Promise<StoredFile[] | null | undefined> {
    const parsed = parseUploadHandle(uri);
    if (!parsed || !this.#deps.refs.matches(parsed.scopeRef, scope)) return undefined;
    const record = await this.#deps.state.get<DirectRecord>(recordKey(parsed.id));
    if (!record || record.scope !== scope) return undefined;
    if (record.committed === undefined) return this.#commit(parsed.id, record);
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
