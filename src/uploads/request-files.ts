/**
 * File requests: the SDK-independent server state of URL-mode elicitation — the link minted, the
 * ticket record watched until the upload committed, the tool results. (Moved from `ui/`: the
 * upload protocol's state lives with the protocol; `ui/` keeps the page and the widget.)
 */
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { durationToMs } from "../internal/duration.js";
import { firstUse } from "../internal/first-use.js";
import {
  DEFAULT_UPLOAD_HANDLE_TTL,
  DEFAULT_UPLOAD_MAX_BYTES,
  DEFAULT_UPLOAD_MAX_FILES,
  DEFAULT_UPLOAD_TICKET_TTL,
} from "../internal/limits.js";
import { optionCheck } from "../internal/options.js";
import { assertScope } from "../scope/scope.js";
import { type ScopeRefs, scopeRefsOf } from "../scope/scope-refs.js";
import type { StoredFile } from "../storage/types.js";
import type { FileRequestsCore } from "./request-files-core.js";
import type {
  FileRequest,
  FileRequestsOptions,
  FileRequestToolResult,
  RequestFilesOptions,
  WaitOptions,
} from "./request-files-types.js";
import { formatUploadHandle } from "./upload-handle.js";

/** The async bodies (`request-files-work.ts`), loaded at the first async call (issue 39). */
const loadWork = firstUse(() => import("./request-files-work.js"));

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

  /** How long a 2026-07-28 retry waits without bytes before the next round (`roundWait`), ms. */
  readonly roundWaitMs: number;
  /** The checked settings the async bodies read (`request-files-work.ts`). */
  readonly #core: FileRequestsCore;

  constructor(options: FileRequestsOptions) {
    if (typeof options !== "object" || options === null) throw check.error("options", "must be an object");
    const { store, state, minter } = options;
    if (!store || typeof store.head !== "function") throw check.error("store", "must be a FileStore");
    if (!state || typeof state.get !== "function") throw check.error("state", "must be a StateStore");
    if (!minter || typeof minter.mint !== "function")
      throw check.error("minter", "must be a SignedUrlMinter");
    const ttl = options.ttl ?? DEFAULT_UPLOAD_TICKET_TTL;
    if (durationToMs(ttl, "FileRequests: ttl") < 1000) throw check.error("ttl", "must be at least 1s");
    const handleTtlMs = durationToMs(
      options.handleTtl ?? DEFAULT_UPLOAD_HANDLE_TTL,
      "FileRequests: handleTtl",
    );
    if (handleTtlMs < 1000) throw check.error("handleTtl", "must be at least 1s");
    const timeoutMs = durationToMs(options.timeout ?? "15m", "FileRequests: timeout");
    if (timeoutMs <= 0) throw check.error("timeout", "must be positive");
    const pollMs = durationToMs(options.pollInterval ?? "250ms", "FileRequests: pollInterval");
    if (pollMs < 10) throw check.error("pollInterval", "must be at least 10ms");
    this.roundWaitMs = durationToMs(options.roundWait ?? "25s", "FileRequests: roundWait");
    if (this.roundWaitMs < 1000) throw check.error("roundWait", "must be at least 1s");
    this.maxBytes = positiveInteger(options.maxBytes, "maxBytes", DEFAULT_UPLOAD_MAX_BYTES);
    this.maxFiles = positiveInteger(options.maxFiles, "maxFiles", DEFAULT_UPLOAD_MAX_FILES, 1000);
    if (options.pageUrl !== undefined && typeof options.pageUrl !== "function") {
      throw check.error("pageUrl", "must be a function");
    }
    if (options.allowTicket !== undefined && typeof options.allowTicket !== "function") {
      throw check.error("allowTicket", "must be a function");
    }
    this.scopeRefs = scopeRefsOf(minter);
    this.#core = {
      store,
      state,
      minter,
      scopeRefs: this.scopeRefs,
      ttl,
      handleTtlSeconds: Math.ceil(handleTtlMs / 1000),
      timeoutMs,
      pollMs,
      pageUrl: options.pageUrl ?? ((url) => url),
      allowTicket: options.allowTicket,
      resultFor: (requestId, files) => this.resultFor(requestId, files),
    };
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
    const asker = askerName(options.serverName);
    const work = await loadWork();
    return work.createRequest(this.#core, scope, { message, maxFiles, maxBytes, accept, asker });
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
    return (await loadWork()).waitForRequest(this.#core, scope, requestId, options);
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
    return (await loadWork()).expiryOf(this.#core, scope, requestId);
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
    return (await loadWork()).progressOf(this.#core, scope, requestId);
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
    return loadWork().then((work) => work.filesOf(this.#core, scope, requestId));
  }
}
