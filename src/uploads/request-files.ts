/**
 * File requests: the SDK-independent server state of URL-mode elicitation — the link minted, the
 * ticket record watched until the upload committed, the tool results. (Moved from `ui/`: the
 * upload protocol's state lives with the protocol; `ui/` keeps the page and the widget.)
 */
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { type Duration, durationToMs } from "../internal/duration.js";
import { newId } from "../internal/ids.js";
import {
  DEFAULT_UPLOAD_HANDLE_TTL,
  DEFAULT_UPLOAD_MAX_BYTES,
  DEFAULT_UPLOAD_MAX_FILES,
  DEFAULT_UPLOAD_TICKET_TTL,
} from "../internal/limits.js";
import { optionCheck } from "../internal/options.js";
import { assertScope } from "../scope/scope.js";
import { type ScopeRefs, scopeRefsOf } from "../scope/scope-refs.js";
import type { UrlSigner } from "../signing/types.js";
import type { FileStore, StateStore, StoredFile } from "../storage/types.js";
import type {
  FileRequest,
  FileRequestsOptions,
  FileRequestToolResult,
  RequestFilesOptions,
  WaitOptions,
} from "./request-files-types.js";
import {
  formatUploadHandle,
  TICKET_CLAIMS,
  type TicketRecord,
  ticketStateKey,
  tusEndpointOf,
  UPLOAD_PAGE_CLAIMS,
  type UploadProgressRecord,
  uploadProgressKey,
} from "./upload-handle.js";

/** What the state store keeps of a request: its scope and when its link expires. */
interface FileRequestRecord {
  scope: string;
  expiresAt: number;
}

/**
 * How long an upload that is still receiving bytes at its link's expiry may stall before a wait
 * gives up on it (`TOKEN_EXPIRED`): it can no longer resume, but its open request may still finish.
 */
const EXPIRED_UPLOAD_GRACE_MS = 15_000;

function fileRequestKey(id: string): string {
  return `mcp-file-bridge:file-request:${id}`;
}

const check = optionCheck("FileRequests");

/** A server name for the page: whitespace folded, 1 to 100 characters, else none. */
export function askerName(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const name = value.replace(/\s+/g, " ").trim();
  return name.length > 0 && name.length <= 100 ? name : undefined;
}

function invalidInput(message: string): FileBridgeError {
  return new FileBridgeError("INVALID_INPUT", `requestFiles: ${message}`);
}

function positiveInteger(
  value: unknown,
  name: string,
  fallback: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0 || value > max) {
    throw check.error(name, `must be an integer from 1 to ${max}`);
  }
  return value;
}

function fileLine(file: StoredFile, refs: ScopeRefs): string {
  return `- ${file.name} (${file.size} bytes, ${file.mimeType}, sha256 ${file.sha256}): ${formatUploadHandle(file.scope, file.id, refs)}`;
}

function fileEntry(file: StoredFile, refs: ScopeRefs): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    handle: formatUploadHandle(file.scope, file.id, refs),
    id: file.id,
    name: file.name,
    size: file.size,
    sha256: file.sha256,
    mimeType: file.mimeType,
  };
  if (file.expiresAt !== undefined) entry.expiresAt = new Date(file.expiresAt).toISOString();
  return entry;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * File requests a tool makes of the person in the chat: the SDK-independent half of URL-mode
 * elicitation (MCP 2025-11-25). {@link FileRequests.create} mints a single-use upload link bound to
 * the caller's scope and carrying the request text for the upload page; the SDK adapter sends
 * `elicitation/create` with {@link FileRequest.elicitation}, then {@link FileRequest.wait} waits —
 * bounded and cancellable — until the upload committed (it watches the routes' ticket record in the
 * `StateStore`, so it works across replicas with a shared state), and the tool returns
 * {@link FileRequest.resultFor}. Without the client capability the tool returns
 * {@link FileRequest.fallbackResult} (the link as text).
 *
 * @example
 * ```ts
 * const requests = new FileRequests({ store, state, minter });
 * const request = await requests.create(scope, { message: "Upload the contract to review", maxFiles: 1 });
 * // src/mcp: elicitation/create with request.elicitation; on "accept":
 * const files = await request.wait({ signal: extra.signal });
 * return request.resultFor(files);
 * ```
 */
export class FileRequests {
  /** Size cap per file, in bytes. */
  readonly maxBytes: number;
  /** Most files per request. */
  readonly maxFiles: number;
  /** How scopes become references in handles: the minter's (`minter.scopeRefs`). */
  readonly scopeRefs: ScopeRefs;

  readonly #store: FileStore;
  readonly #state: StateStore;
  readonly #minter: Pick<UrlSigner, "mint" | "scopeRefs">;
  readonly #ttl: Duration;
  readonly #handleTtlSeconds: number;
  readonly #timeoutMs: number;
  readonly #pollMs: number;
  /** How long a 2026-07-28 retry waits without bytes before the next round (`roundWait`), ms. */
  readonly roundWaitMs: number;
  readonly #pageUrl: (uploadUrl: string) => string;
  readonly #allowTicket: FileRequestsOptions["allowTicket"];

  constructor(options: FileRequestsOptions) {
    if (typeof options !== "object" || options === null) throw check.error("options", "must be an object");
    const { store, state, minter } = options;
    if (!store || typeof store.head !== "function") throw check.error("store", "must be a FileStore");
    if (!state || typeof state.get !== "function") throw check.error("state", "must be a StateStore");
    if (!minter || typeof minter.mint !== "function")
      throw check.error("minter", "must be a SignedUrlMinter");
    this.#ttl = options.ttl ?? DEFAULT_UPLOAD_TICKET_TTL;
    if (durationToMs(this.#ttl, "FileRequests: ttl") < 1000) throw check.error("ttl", "must be at least 1s");
    const handleTtlMs = durationToMs(
      options.handleTtl ?? DEFAULT_UPLOAD_HANDLE_TTL,
      "FileRequests: handleTtl",
    );
    if (handleTtlMs < 1000) throw check.error("handleTtl", "must be at least 1s");
    this.#handleTtlSeconds = Math.ceil(handleTtlMs / 1000);
    this.#timeoutMs = durationToMs(options.timeout ?? "15m", "FileRequests: timeout");
    if (this.#timeoutMs <= 0) throw check.error("timeout", "must be positive");
    this.#pollMs = durationToMs(options.pollInterval ?? "250ms", "FileRequests: pollInterval");
    if (this.#pollMs < 10) throw check.error("pollInterval", "must be at least 10ms");
    this.roundWaitMs = durationToMs(options.roundWait ?? "25s", "FileRequests: roundWait");
    if (this.roundWaitMs < 1000) throw check.error("roundWait", "must be at least 1s");
    this.maxBytes = positiveInteger(options.maxBytes, "maxBytes", DEFAULT_UPLOAD_MAX_BYTES);
    this.maxFiles = positiveInteger(options.maxFiles, "maxFiles", DEFAULT_UPLOAD_MAX_FILES, 1000);
    if (options.pageUrl !== undefined && typeof options.pageUrl !== "function") {
      throw check.error("pageUrl", "must be a function");
    }
    this.#pageUrl = options.pageUrl ?? ((url) => url);
    if (options.allowTicket !== undefined && typeof options.allowTicket !== "function") {
      throw check.error("allowTicket", "must be a function");
    }
    this.#allowTicket = options.allowTicket;
    this.#store = store;
    this.#state = state;
    this.#minter = minter;
    this.scopeRefs = scopeRefsOf(minter);
  }

  /**
   * Mints a single-use upload link for `scope` and returns the request. Fails with
   * `INVALID_INPUT` for an empty or over-long message, or limits above the configured ones.
   *
   * @example
   * ```ts
   * const request = await requests.create("session-1", { message: "Upload the photos", accept: ["image/*"], maxFiles: 5 });
   * ```
   */
  async create(scope: string, options: RequestFilesOptions): Promise<FileRequest> {
    assertScope(scope);
    const message = options?.message;
    if (typeof message !== "string" || message.trim() === "" || message.length > 1024) {
      throw invalidInput("message must be 1 to 1024 characters");
    }
    const maxFiles = options.maxFiles ?? this.maxFiles;
    if (!Number.isSafeInteger(maxFiles) || maxFiles <= 0 || maxFiles > this.maxFiles) {
      throw invalidInput(`maxFiles must be an integer from 1 to ${this.maxFiles}`);
    }
    const maxBytes = options.maxBytes ?? this.maxBytes;
    if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0 || maxBytes > this.maxBytes) {
      throw invalidInput(`maxBytes must be an integer from 1 to ${this.maxBytes}`);
    }
    const accept = (options.accept ?? []).map((entry) => String(entry).trim()).filter(Boolean);
    if (accept.some((entry) => entry.includes(",")) || accept.join(",").length > 512) {
      throw invalidInput("accept must be a short list of media types or extensions without commas");
    }
    const id = newId();
    const claims: Record<string, string | number | boolean> = {
      [TICKET_CLAIMS.maxBytes]: maxBytes,
      [TICKET_CLAIMS.maxFiles]: maxFiles,
      [TICKET_CLAIMS.fileTtl]: this.#handleTtlSeconds,
      [UPLOAD_PAGE_CLAIMS.message]: message,
    };
    if (accept.length > 0) claims[UPLOAD_PAGE_CLAIMS.accept] = accept.join(",");
    const asker = askerName(options.serverName);
    if (asker !== undefined) claims[UPLOAD_PAGE_CLAIMS.server] = asker;
    await this.#allowTicket?.(scope, "requestFiles");
    const minted = await this.#minter.mint({
      scope,
      fileId: id,
      action: "upload",
      ttl: this.#ttl,
      singleUse: true,
      claims,
    });
    // What a later call needs to tell "not uploaded yet" from "expired" (the await_upload poll path).
    const record: FileRequestRecord = { scope, expiresAt: minted.expiresAt };
    await this.#state.set(fileRequestKey(id), record, {
      ttl: Math.max(1, Math.ceil((minted.expiresAt - Date.now()) / 1000)) + this.#handleTtlSeconds,
    });
    const url = this.#pageUrl(minted.url);
    const handle = formatUploadHandle(scope, id, this.scopeRefs);
    const expiresIso = new Date(minted.expiresAt).toISOString();
    const files = () => this.#filesOf(scope, id);
    const request: FileRequest = {
      id,
      scope,
      message,
      url,
      uploadUrl: minted.url,
      tusUrl: tusEndpointOf(minted.url),
      expiresAt: minted.expiresAt,
      maxBytes,
      maxFiles,
      handle,
      elicitation: { mode: "url", message, url, elicitationId: id },
      files,
      wait: (waitOptions = {}) =>
        this.#wait(files, { ...waitOptions, progress: { scope, id }, expiresAt: minted.expiresAt }),
      resultFor: (stored) => this.resultFor(id, stored),
      fallbackResult: () => ({
        content: [
          {
            type: "text",
            text: [
              `${message}`,
              `Ask the user to open this link in a browser and upload ${maxFiles === 1 ? "the file" : `up to ${maxFiles} files`} there: ${url}`,
              `The link works once, until ${expiresIso}; at most ${maxBytes} bytes per file.`,
              `Once the user says the upload is done, pass ${handle} as the file argument (it stands for every uploaded file; where a tool takes one file and several were uploaded, the error names each file's own handle).`,
            ].join("\n"),
          },
        ],
        structuredContent: {
          status: "upload_required",
          request_id: id,
          url,
          upload_url: minted.url,
          handle,
          expires_at: expiresIso,
          max_files: maxFiles,
          max_bytes: maxBytes,
        },
      }),
      declinedResult: (action) => ({
        content: [
          {
            type: "text",
            text: `The user ${action === "decline" ? "declined" : "cancelled"} the upload request (${message}). Do not ask again unless the user wants to.`,
          },
        ],
        structuredContent: { status: action === "decline" ? "declined" : "cancelled", request_id: id },
        isError: true,
      }),
    };
    return request;
  }

  /**
   * Waits, like {@link FileRequest.wait}, for the upload of a request known only by its id (a
   * request made in an earlier call: a retried call under the 2026-07-28 protocol, or a fallback
   * link), and ends in `TOKEN_EXPIRED` like it once the request's link expired. Requests of other
   * scopes are never found, so this ends in `TIMEOUT`.
   *
   * @example
   * ```ts
   * const files = await requests.waitFor(scope, requestId, { signal: extra.signal, timeout: "5m" });
   * ```
   */
  async waitFor(scope: string, requestId: string, options: WaitOptions = {}): Promise<StoredFile[]> {
    assertScope(scope);
    if (typeof requestId !== "string" || requestId.length === 0 || requestId.length > 200) {
      throw invalidInput("requestId must be a request id");
    }
    const expiresAt = await this.expiryOf(scope, requestId);
    return this.#wait(() => this.#filesOf(scope, requestId), {
      ...options,
      progress: { scope, id: requestId },
      ...(expiresAt === null ? {} : { expiresAt }),
    });
  }

  /**
   * When a request's link expires (epoch ms), or `null` for an unknown request or one of another scope.
   *
   * @example
   * ```ts
   * const expiresAt = await requests.expiryOf(scope, requestId);
   * ```
   */
  async expiryOf(scope: string, requestId: string): Promise<number | null> {
    assertScope(scope);
    if (typeof requestId !== "string" || requestId.length === 0 || requestId.length > 200) return null;
    const record = await this.#state.get<FileRequestRecord>(fileRequestKey(requestId));
    return record && record.scope === scope && typeof record.expiresAt === "number" ? record.expiresAt : null;
  }

  /**
   * How far the person's resumable (tus) upload for a request got: bytes received and the declared
   * length, or `null` before the first byte (or for a request of another scope).
   *
   * @example
   * ```ts
   * const progress = await requests.progressOf(scope, requestId); // { offset: 8388608, length: 67108864 }
   * ```
   */
  async progressOf(scope: string, requestId: string): Promise<{ offset: number; length?: number } | null> {
    assertScope(scope);
    if (typeof requestId !== "string" || requestId.length === 0 || requestId.length > 200) return null;
    const record = await this.#state.get<UploadProgressRecord>(uploadProgressKey(requestId));
    if (!record || record.scope !== scope || typeof record.offset !== "number") return null;
    return record.length === undefined
      ? { offset: record.offset }
      : { offset: record.offset, length: record.length };
  }

  /**
   * The tool result listing a request's uploaded files and their `upload://` handles (what
   * {@link FileRequest.resultFor} returns).
   *
   * @example
   * ```ts
   * return requests.resultFor(requestId, await requests.waitFor(scope, requestId));
   * ```
   */
  resultFor(requestId: string, files: readonly StoredFile[]): FileRequestToolResult {
    const list = [...files];
    return {
      content: [
        {
          type: "text",
          text: [
            `The user uploaded ${list.length} ${list.length === 1 ? "file" : "files"}. Pass a handle as the file argument of a tool:`,
            ...list.map((file) => fileLine(file, this.scopeRefs)),
          ].join("\n"),
        },
      ],
      structuredContent: {
        status: "uploaded",
        request_id: requestId,
        files: list.map((file) => fileEntry(file, this.scopeRefs)),
      },
    };
  }

  /**
   * The files a request's upload stored, or `null` while nothing was uploaded (or the request id
   * belongs to another scope). For a tool that gets the request id back later (a fallback link, or
   * a retried call under the 2026 protocol).
   *
   * @example
   * ```ts
   * const files = await requests.filesOf(scope, args.request_id);
   * if (!files) return { content: [{ type: "text", text: "Not uploaded yet." }] };
   * ```
   */
  filesOf(scope: string, requestId: string): Promise<StoredFile[] | null> {
    assertScope(scope);
    if (typeof requestId !== "string" || requestId.length === 0 || requestId.length > 200) {
      return Promise.resolve(null);
    }
    return this.#filesOf(scope, requestId);
  }

  async #filesOf(scope: string, id: string): Promise<StoredFile[] | null> {
    const record = await this.#state.get<TicketRecord>(ticketStateKey(id));
    if (!record || record.scope !== scope || !Array.isArray(record.files)) return null;
    const files = await Promise.all(
      record.files
        .filter((fileId) => typeof fileId === "string")
        .map((fileId) => this.#store.head(scope, fileId)),
    );
    return files.filter((file): file is StoredFile => file !== null);
  }

  async #wait(
    files: () => Promise<StoredFile[] | null>,
    options: WaitOptions & { progress?: { scope: string; id: string }; expiresAt?: number },
  ): Promise<StoredFile[]> {
    const timeoutMs =
      options.timeout === undefined ? this.#timeoutMs : durationToMs(options.timeout, "wait: timeout");
    const deadline = Date.now() + timeoutMs;
    const { signal, onProgress, progress } = options;
    const expiresAt = options.expiresAt ?? Number.POSITIVE_INFINITY;
    const idleMs = options.idle === undefined ? undefined : durationToMs(options.idle, "wait: idle");
    const started = Date.now();
    // When the person's resumable upload last moved (or has all its bytes, so a commit is under way).
    let moved = Number.NEGATIVE_INFINITY;
    let reported = -1;
    for (;;) {
      if (signal?.aborted) {
        throw new FileBridgeError("ABORTED", "Stopped waiting for the upload", { cause: signal.reason });
      }
      const found = await files();
      if (found !== null) {
        if (found.length === 0) {
          throw new FileBridgeError("NOT_FOUND", "The uploaded files are gone (expired or deleted)");
        }
        return found;
      }
      const now = Date.now();
      if (progress && (onProgress || idleMs !== undefined || now >= expiresAt)) {
        const got = await this.progressOf(progress.scope, progress.id).catch(() => null);
        if (got && (got.offset > reported || (got.length !== undefined && got.offset >= got.length))) {
          moved = now;
        }
        if (got && got.offset > reported) {
          reported = got.offset;
          if (onProgress) await Promise.resolve(onProgress(got.offset, got.length)).catch(() => undefined);
        }
      }
      // Past the link's expiry no upload can start or resume; one still receiving bytes may finish.
      if (now >= expiresAt && now - moved >= EXPIRED_UPLOAD_GRACE_MS) {
        throw new FileBridgeError(
          "TOKEN_EXPIRED",
          "The upload link expired before the user finished the upload",
          {
            data: { request_id: progress?.id },
          },
        );
      }
      if (idleMs !== undefined && now - Math.max(moved, started) >= idleMs) {
        throw new FileBridgeError("TIMEOUT", `No upload bytes for ${Math.round(idleMs / 1000)}s`, {
          data: { timeoutMs: idleMs, idle: true },
        });
      }
      const left = deadline - now;
      if (left <= 0) {
        throw new FileBridgeError("TIMEOUT", `No upload within ${Math.round(timeoutMs / 1000)}s`, {
          data: { timeoutMs },
        });
      }
      await sleep(Math.min(this.#pollMs, left, expiresAt > now ? expiresAt - now : this.#pollMs), signal);
    }
  }
}
