/**
 * The files extension revision Claude Code ships (`@anthropic-ai/claude-code` 2.1.331/332), served
 * from the same tickets and handles as the draft: a `tools/call` whose file arguments are descriptors
 * (`{id, mimeType, size, name?, digest?}`) is answered with `resultType: "upload_required"`, one
 * upload target per file on our signed single-use upload route, and a `requestState`; the client
 * uploads, calls again with the same arguments and `params.requestState`, and each descriptor then
 * stands for its uploaded bytes (size and sha-256 checked), so the handler runs once on real files.
 * See docs/files-extension.md.
 *
 * The request state is an opaque random id (128 bits) naming a record in the `StateStore` (shared
 * by replicas, like the tickets it points at): the record binds the scope, the tool (`Mcp-Name`) and
 * the descriptors' ids, sizes and digests, expires with the tickets, and is used once. The text the
 * client holds carries nothing else: no scope, no path, no URL.
 */

import type {
  DescriptorAnswer,
  DescriptorAnswerer,
  DescriptorCall,
  FileDescriptor,
} from "../bridge/file-descriptors.js";
import { FileBridgeError, isFileBridgeError, toToolErrorResult } from "../errors/file-bridge-error.js";
import { type Duration, durationToMs } from "../internal/duration.js";
import { newId } from "../internal/ids.js";
import { randomBytes } from "../internal/node-builtins.js";
import { clientFilesCapability, requestClientCapabilities, requestStateOf } from "../mcp/client-files.js";
import { scopeSourceOf } from "../mcp/scope-source.js";
import type { ScopeRefs } from "../scope/scope-refs.js";
import type { UrlSigner } from "../signing/types.js";
import type { StateStore, StoredFile } from "../storage/types.js";
import { declaredDigest } from "./files-wire.js";
import { formatUploadHandle, TICKET_CLAIMS } from "./upload-handle.js";

/** Most descriptors one call may carry. */
const MAX_FILES = 32;
/** The sha-256 of no bytes, hex. */
const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const STATE_PREFIX = "mfbu1.";
/** How long a record outlives its targets (an expired state is told apart from an unknown one). */
const EXPIRED_KEPT_MS = 15 * 60_000;
const STATE_PATTERN = /^mfbu1\.[A-Za-z0-9_-]{22}$/;

/** What `UploadRequired` borrows from its `UploadHandleResolver`. */
export interface UploadRequiredDeps {
  minter: Pick<UrlSigner, "mint" | "scopeRefs">;
  state: StateStore;
  /** Largest file, in bytes (the extension's `maxSize`). */
  maxSize: number;
  /** How long the upload targets (and the request state) live. */
  ticketTtl: Duration;
  handleTtlSeconds: number;
  /**
   * The resolver's ticket rate limit (`RATE_LIMITED` when refused), asked once per ticket before any
   * is minted, as every other ticket minter asks it.
   */
  allowTicket?: (scope: string, tool: string) => Promise<void>;
  filesFor(handle: string, options: { scope: string }): Promise<StoredFile[] | null>;
  refs: ScopeRefs;
  /** How long one retry waits for bytes that have not arrived before it answers `input_required`, ms. */
  roundWaitMs?: number;
  /** How many `input_required` rounds a request state gets before `TIMEOUT`. */
  maxRounds?: number;
  /** How often a retry looks for the bytes, ms. */
  pollMs?: number;
}

/** The record a request state names. */
interface RequestRecord {
  scope: string;
  tool: string;
  fingerprint: string;
  /** One entry per descriptor: the ticket its bytes go to (none for a zero-byte file). */
  files: Array<{ ticket?: string; size: number; sha256?: string; mimeType: string; name?: string }>;
  expiresAt: number;
  rounds: number;
}

function recordKey(id: string): string {
  return `mcp-file-bridge:upload-required:${id}`;
}
function usedKey(id: string): string {
  return `mcp-file-bridge:upload-required-used:${id}`;
}

function refused(code: ConstructorParameters<typeof FileBridgeError>[0], message: string, reason: string) {
  return new FileBridgeError(code, message, { data: { reason } });
}

/** The descriptors checked: ids unique, sizes within `maxSize`, digests sha-256. */
function checkDescriptors(descriptors: readonly FileDescriptor[], maxSize: number) {
  if (descriptors.length > MAX_FILES) {
    throw new FileBridgeError("TOO_MANY_FILES", `At most ${MAX_FILES} files per call`);
  }
  const ids = new Set<string>();
  return descriptors.map((descriptor) => {
    const { id, mimeType, size, name } = descriptor;
    if (id.length === 0 || id.length > 256 || ids.has(id)) {
      throw refused(
        "INVALID_INPUT",
        "Each file descriptor needs its own id (1 to 256 characters)",
        "invalidParams",
      );
    }
    ids.add(id);
    if (!Number.isSafeInteger(size) || size < 0) {
      throw refused("INVALID_INPUT", "size must be a non-negative integer", "invalidParams");
    }
    if (size > maxSize) {
      throw new FileBridgeError("FILE_TOO_LARGE", `The file may have at most ${maxSize} bytes`, {
        data: { reason: "maxSizeExceeded", maxSize, actualSize: size },
      });
    }
    if (mimeType.length > 255 || (name !== undefined && (name.length === 0 || name.length > 1024))) {
      throw refused("INVALID_INPUT", "mimeType or name is too long", "invalidParams");
    }
    const sha256 = declaredDigest(descriptor.digest);
    if (size === 0 && sha256 !== undefined && sha256 !== EMPTY_SHA256) {
      throw refused(
        "DIGEST_MISMATCH",
        "An empty file's digest must be the sha-256 of no bytes",
        "digestMismatch",
      );
    }
    return { id, size, mimeType: mimeType === "" ? "application/octet-stream" : mimeType, name, sha256 };
  });
}

/** What the request state is bound to besides the scope and the tool: the descriptors' ids, sizes, digests. */
function fingerprintOf(
  checked: ReadonlyArray<{ id: string; size: number; sha256: string | undefined }>,
): string {
  return JSON.stringify(checked.map(({ id, size, sha256 }) => [id, size, sha256 ?? null]));
}

/** The name of the tool the call is for: the 2026-07-28 `Mcp-Name` routing header, when there is one. */
function toolOf(extra: unknown): string {
  const headers = scopeSourceOf((extra ?? {}) as object).requestInfo?.headers;
  const name = headers?.["mcp-name"];
  return typeof name === "string" ? name : "";
}

/** A zero-byte file as a data URL: the bridge then applies its own rule for empty files. */
function emptyFile(mimeType: string, name: string | undefined): string {
  const type = /^[\w.+-]+\/[\w.+-]+$/.test(mimeType) ? mimeType : "application/octet-stream";
  return `data:${type}${name === undefined ? "" : `;name=${encodeURIComponent(name)}`};base64,`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Answers `withFiles` calls that carry file descriptors, for the files extension revision Claude
 * Code ships. Installed on the resolver's bridge by `uploads.attach(server, { files })`.
 *
 * @example
 * ```ts
 * uploads.attach(server, { files: true }); // also answers descriptor calls with upload_required
 * ```
 */
export class UploadRequired implements DescriptorAnswerer {
  readonly #deps: UploadRequiredDeps;
  readonly #roundWaitMs: number;
  readonly #maxRounds: number;
  readonly #pollMs: number;

  constructor(deps: UploadRequiredDeps) {
    this.#deps = deps;
    this.#roundWaitMs = deps.roundWaitMs ?? 1000;
    this.#maxRounds = deps.maxRounds ?? 5;
    this.#pollMs = Math.min(deps.pollMs ?? 100, Math.max(10, this.#roundWaitMs));
  }

  async answer(call: DescriptorCall): Promise<DescriptorAnswer> {
    try {
      const files = clientFilesCapability(requestClientCapabilities(call.extra));
      if (!files?.upload || files.spelling !== "upload_required") {
        throw refused(
          "UNSUPPORTED_INPUT",
          "A file descriptor ({id, mimeType, size}) is sent only by clients of the MCP files extension that upload the file themselves; send the file in another form",
          "filesNotDeclared",
        );
      }
      // The retry carries `params.requestState`, which only an SDK v2 context hands over (SDK v1
      // has no 2026-07-28 era): without one, a round could never end.
      const mcpReq = (call.extra as { mcpReq?: { requestState?: unknown } } | null)?.mcpReq;
      if (typeof mcpReq?.requestState !== "function") {
        throw refused(
          "UNSUPPORTED_INPUT",
          "Files sent as descriptors need MCP 2026-07-28 (an SDK v2 server); send the file in another form",
          "eraNotSupported",
        );
      }
      const checked = checkDescriptors(call.descriptors, this.#deps.maxSize);
      const state = requestStateOf(call.extra);
      const tool = toolOf(call.extra);
      if (state === undefined) return await this.#first(call.scope, tool, checked);
      return await this.#retry(call.scope, tool, checked, state);
    } catch (error) {
      if (isFileBridgeError(error)) return { result: toToolErrorResult(error) };
      throw error;
    }
  }

  /** The first round: a ticket per non-empty file, the record, the `upload_required` result. */
  async #first(
    scope: string,
    tool: string,
    checked: ReturnType<typeof checkDescriptors>,
  ): Promise<DescriptorAnswer> {
    // Nothing to upload (every file is empty): no round, the descriptors resolve at once.
    if (checked.every((file) => file.size === 0)) return { values: this.#emptyValues(checked) };
    for (const file of checked) if (file.size > 0) await this.#deps.allowTicket?.(scope, tool);
    const ttlMs = durationToMs(this.#deps.ticketTtl, "ttl");
    const targets: Array<Record<string, unknown>> = [];
    const files: RequestRecord["files"] = [];
    let expiresAt = Number.POSITIVE_INFINITY;
    for (const file of checked) {
      const entry = {
        size: file.size,
        mimeType: file.mimeType,
        ...(file.name === undefined ? {} : { name: file.name }),
        ...(file.sha256 === undefined ? {} : { sha256: file.sha256 }),
      };
      if (file.size === 0) {
        // A zero-byte file gets no target (the client sends none for it).
        files.push(entry);
        continue;
      }
      const ticket = newId();
      const minted = await this.#deps.minter.mint({
        scope,
        fileId: ticket,
        action: "upload",
        ttl: this.#deps.ticketTtl,
        singleUse: true,
        claims: {
          [TICKET_CLAIMS.maxBytes]: file.size,
          [TICKET_CLAIMS.maxFiles]: 1,
          [TICKET_CLAIMS.fileTtl]: this.#deps.handleTtlSeconds,
          [TICKET_CLAIMS.exactSize]: file.size,
          ...(file.sha256 === undefined ? {} : { [TICKET_CLAIMS.sha256]: file.sha256 }),
        },
      });
      expiresAt = Math.min(expiresAt, minted.expiresAt);
      files.push({ ...entry, ticket });
      const url = new URL(minted.url);
      if (file.name !== undefined) url.searchParams.set("filename", file.name);
      // Exactly the members the revision defines: an unknown one makes the client refuse the target.
      targets.push({
        fileId: file.id,
        url: url.href,
        method: "PUT",
        headers: { "content-type": file.mimeType },
        credentials: "omit",
        expiresAt: new Date(minted.expiresAt).toISOString(),
      });
    }
    const id = randomBytes(16).toString("base64url");
    const record: RequestRecord = {
      scope,
      tool,
      fingerprint: fingerprintOf(checked),
      files,
      expiresAt,
      rounds: 0,
    };
    // Kept past the targets' expiry, so a late retry reads TOKEN_EXPIRED rather than NOT_FOUND.
    const ttlSeconds = Math.ceil((expiresAt - Date.now() + ttlMs + EXPIRED_KEPT_MS) / 1000);
    await this.#deps.state.set(recordKey(id), record, { ttl: Math.max(1, ttlSeconds) });
    return {
      result: {
        resultType: "upload_required",
        requestState: `${STATE_PREFIX}${id}`,
        uploads: targets,
        content: [
          {
            type: "text",
            text: `Upload ${targets.length === 1 ? "the file" : `the ${targets.length} files`} to the targets in uploads, then call the tool again with the same arguments and this requestState.`,
          },
        ],
      },
    };
  }

  /** A retry: the record checked, the bytes awaited (bounded), the descriptors turned into handles. */
  async #retry(
    scope: string,
    tool: string,
    checked: ReturnType<typeof checkDescriptors>,
    state: string,
  ): Promise<DescriptorAnswer> {
    const unknown = () =>
      refused(
        "NOT_FOUND",
        "Unknown request state (it belongs to another call, or expired): call the tool again without it",
        "invalidRequestState",
      );
    if (!STATE_PATTERN.test(state)) throw unknown();
    const id = state.slice(STATE_PREFIX.length);
    const record = await this.#deps.state.get<RequestRecord>(recordKey(id));
    // Another user's state, another tool's, other descriptors: exactly like an unknown one.
    if (
      !record ||
      record.scope !== scope ||
      record.tool !== tool ||
      record.fingerprint !== fingerprintOf(checked)
    ) {
      throw unknown();
    }
    if ((await this.#deps.state.get(usedKey(id))) !== null) {
      throw refused(
        "TOKEN_ALREADY_USED",
        "This request state was already used: call the tool again without it",
        "requestStateUsed",
      );
    }
    if (Date.now() >= record.expiresAt) {
      throw refused(
        "TOKEN_EXPIRED",
        "The upload targets expired: call the tool again without the request state",
        "requestStateExpired",
      );
    }
    const stored = await this.#awaitUploads(scope, record);
    if (stored === undefined) {
      record.rounds += 1;
      if (record.rounds > this.#maxRounds) {
        throw refused(
          "TIMEOUT",
          "The files were not uploaded: call the tool again without the request state",
          "uploadNotReceived",
        );
      }
      const ttl = Math.max(1, Math.ceil((record.expiresAt - Date.now() + EXPIRED_KEPT_MS) / 1000));
      await this.#deps.state.set(recordKey(id), record, { ttl });
      // Only a request state: the client calls again at once, and this call waits on.
      return { result: { resultType: "input_required", requestState: state } };
    }
    record.files.forEach((file, i) => {
      const got = stored[i];
      if (got && (got.size !== file.size || (file.sha256 !== undefined && got.sha256 !== file.sha256))) {
        throw refused(
          "DIGEST_MISMATCH",
          "The uploaded file does not match its size or digest",
          "digestMismatch",
        );
      }
    });
    // Used once: the handler runs for the first retry that gets here, never for a replay.
    const ttl = Math.max(1, Math.ceil((record.expiresAt - Date.now() + EXPIRED_KEPT_MS) / 1000));
    if (!(await this.#deps.state.setIfAbsent(usedKey(id), 1, { ttl }))) {
      throw refused(
        "TOKEN_ALREADY_USED",
        "This request state was already used: call the tool again without it",
        "requestStateUsed",
      );
    }
    return {
      values: record.files.map((file) =>
        file.ticket === undefined
          ? emptyFile(file.mimeType, file.name)
          : formatUploadHandle(scope, file.ticket, this.#deps.refs),
      ),
    };
  }

  /** Each file's stored upload (`undefined` at an empty file's place), or `undefined` while one is missing after the round's wait. */
  async #awaitUploads(
    scope: string,
    record: RequestRecord,
  ): Promise<Array<StoredFile | undefined> | undefined> {
    const deadline = Date.now() + this.#roundWaitMs;
    for (;;) {
      const found = await Promise.all(
        record.files.map(async (file) => {
          if (file.ticket === undefined) return null;
          const files = await this.#deps.filesFor(formatUploadHandle(scope, file.ticket, this.#deps.refs), {
            scope,
          });
          return files?.[0];
        }),
      );
      if (found.every((file) => file !== undefined)) return found.map((file) => file ?? undefined);
      if (Date.now() >= deadline) return undefined;
      await sleep(this.#pollMs);
    }
  }

  #emptyValues(checked: ReturnType<typeof checkDescriptors>): string[] {
    return checked.map((file) => emptyFile(file.mimeType, file.name));
  }
}
