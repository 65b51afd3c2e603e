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
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { firstUse } from "../internal/first-use.js";
import type { DirectUploads, StoredFile } from "../storage/types.js";
import type { DirectUploadDeps, DirectUploadRequest, DirectUploadResult } from "./direct-upload-types.js";
import type { DirectUploadWork } from "./direct-upload-work.js";
import type { DirectUploadOptions } from "./types.js";
import { parseUploadHandle } from "./upload-handle.js";

export type { DirectUploadDeps, DirectUploadRequest, DirectUploadResult } from "./direct-upload-types.js";

/** The async bodies (`direct-upload-work.ts`), loaded at a strategy's first call (issue 39). */
const loadWork = firstUse(() => import("./direct-upload-work.js"));

/**
 * The direct-to-storage strategy of one files extension. Built by the resolver when
 * `files.direct` is on; `authorize` makes descriptors, `commitPending` / `complete` commit them.
 */
export class DirectUploadStrategy {
  readonly #deps: DirectUploadDeps;
  /** The work, built at the first call. */
  readonly #work: () => Promise<DirectUploadWork>;

  constructor(deps: DirectUploadDeps, options: DirectUploadOptions) {
    const direct: DirectUploads | undefined = deps.store.directUploads;
    if (!direct || typeof direct.presignUpload !== "function") {
      throw new FileBridgeError(
        "INVALID_OPTION",
        `files extension: direct needs a store with directUploads (s3Store); this store is ${deps.store.driver}`,
        { data: { option: "direct" } },
      );
    }
    this.#deps = deps;
    this.#work = firstUse(async () => new (await loadWork()).DirectUploadWork(deps, direct, options));
  }

  /** A presigned `POST` of a fresh staging object (or, with `dedup`, the scope's file with that digest). */
  async authorize(request: DirectUploadRequest): Promise<DirectUploadResult> {
    return (await this.#work()).authorize(request);
  }

  /**
   * Commits the direct upload a ticket id stands for, in `scope`: the stored file, or `null` when
   * there is none (unknown, another scope's, expired, or nothing uploaded yet).
   */
  async commitPending(ticketId: string, scope: string): Promise<StoredFile[] | null> {
    return (await this.#work()).commitPending(ticketId, scope);
  }

  /**
   * `files/completeUpload` of a direct upload: commits it, or answers the committed file again. Bytes
   * put to the descriptor after the commit are a second upload: refused (`TOKEN_ALREADY_USED`,
   * `reason: "alreadyCommitted"`) and removed. `undefined` when the URI is no direct upload of `scope`.
   */
  async complete(uri: string, scope: string): Promise<StoredFile[] | null | undefined> {
    const parsed = parseUploadHandle(uri);
    if (!parsed || !this.#deps.refs.matches(parsed.scopeRef, scope)) return undefined;
    return (await this.#work()).complete(uri, parsed.id, scope);
  }
}
