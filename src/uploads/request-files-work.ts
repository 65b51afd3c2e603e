/**
 * The async bodies of `FileRequests` (`request-files.ts`): minting a request's link and recording
 * it, the waits, and the state reads behind `filesOf` / `expiryOf` / `progressOf`. Loaded at a
 * requests' first async call (issue 39): a server that never asks a person for files never compiles
 * it. The class keeps the option and argument checks, which throw before this loads.
 */
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { durationToMs } from "../internal/duration.js";
import { newId } from "../internal/ids.js";
import type { StoredFile } from "../storage/types.js";
import type { CheckedRequest, FileRequestsCore } from "./request-files-core.js";
import type { FileRequest, WaitOptions } from "./request-files-types.js";
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

/** A wait's options, with the request whose tus progress it reads and the link's expiry. */
type WaitFor = WaitOptions & { progress?: { scope: string; id: string }; expiresAt?: number };

/**
 * How long an upload that is still receiving bytes at its link's expiry may stall before a wait
 * gives up on it (`TOKEN_EXPIRED`): it can no longer resume, but its open request may still finish.
 */
const EXPIRED_UPLOAD_GRACE_MS = 15_000;

function fileRequestKey(id: string): string {
  return `mcp-file-bridge:file-request:${id}`;
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
 * `FileRequests.create` once its arguments were checked: asks the rate limit, mints the link,
 * records the request and returns it.
 *
 * @example
 * ```ts
 * const request = await createRequest(core, scope, { message, maxFiles: 1, maxBytes, accept: [], asker: undefined });
 * ```
 */
export async function createRequest(
  core: FileRequestsCore,
  scope: string,
  asked: CheckedRequest,
): Promise<FileRequest> {
  const { message, maxFiles, maxBytes, accept, asker } = asked;
  const id = newId();
  const claims: Record<string, string | number | boolean> = {
    [TICKET_CLAIMS.maxBytes]: maxBytes,
    [TICKET_CLAIMS.maxFiles]: maxFiles,
    [TICKET_CLAIMS.fileTtl]: core.handleTtlSeconds,
    [UPLOAD_PAGE_CLAIMS.message]: message,
  };
  if (accept.length > 0) claims[UPLOAD_PAGE_CLAIMS.accept] = accept.join(",");
  if (asker !== undefined) claims[UPLOAD_PAGE_CLAIMS.server] = asker;
  await core.allowTicket?.(scope, "requestFiles");
  const minted = await core.minter.mint({
    scope,
    fileId: id,
    action: "upload",
    ttl: core.ttl,
    singleUse: true,
    claims,
  });
  // What a later call needs to tell "not uploaded yet" from "expired" (the await_upload poll path).
  const record: FileRequestRecord = { scope, expiresAt: minted.expiresAt };
  await core.state.set(fileRequestKey(id), record, {
    ttl: Math.max(1, Math.ceil((minted.expiresAt - Date.now()) / 1000)) + core.handleTtlSeconds,
  });
  const url = core.pageUrl(minted.url);
  const handle = formatUploadHandle(scope, id, core.scopeRefs);
  const expiresIso = new Date(minted.expiresAt).toISOString();
  const files = () => filesOf(core, scope, id);
  return {
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
      wait(core, files, { ...waitOptions, progress: { scope, id }, expiresAt: minted.expiresAt }),
    resultFor: (stored) => core.resultFor(id, stored),
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
}

/**
 * `FileRequests.waitFor` once its arguments were checked: waits for the upload of a request known
 * by its id, until its link's expiry (`TOKEN_EXPIRED`) when the request is known.
 *
 * @example
 * ```ts
 * const files = await waitForRequest(core, scope, requestId, { signal });
 * ```
 */
export async function waitForRequest(
  core: FileRequestsCore,
  scope: string,
  requestId: string,
  options: WaitOptions,
): Promise<StoredFile[]> {
  const expiresAt = await expiryOf(core, scope, requestId);
  return wait(core, () => filesOf(core, scope, requestId), {
    ...options,
    progress: { scope, id: requestId },
    ...(expiresAt === null ? {} : { expiresAt }),
  });
}

/**
 * When a checked request id's link expires (epoch ms), or `null` for an unknown request or one of
 * another scope.
 *
 * @example
 * ```ts
 * const expiresAt = await expiryOf(core, scope, requestId);
 * ```
 */
export async function expiryOf(
  core: FileRequestsCore,
  scope: string,
  requestId: string,
): Promise<number | null> {
  const record = await core.state.get<FileRequestRecord>(fileRequestKey(requestId));
  return record && record.scope === scope && typeof record.expiresAt === "number" ? record.expiresAt : null;
}

/**
 * How far the resumable upload of a checked request id got, or `null` before its first byte (or
 * for a request of another scope).
 *
 * @example
 * ```ts
 * const progress = await progressOf(core, scope, requestId); // { offset: 8388608, length: 67108864 }
 * ```
 */
export async function progressOf(
  core: FileRequestsCore,
  scope: string,
  requestId: string,
): Promise<{ offset: number; length?: number } | null> {
  const record = await core.state.get<UploadProgressRecord>(uploadProgressKey(requestId));
  if (!record || record.scope !== scope || typeof record.offset !== "number") return null;
  return record.length === undefined
    ? { offset: record.offset }
    : { offset: record.offset, length: record.length };
}

/**
 * The files a request's upload stored, or `null` while nothing was uploaded (or the request belongs
 * to another scope).
 *
 * @example
 * ```ts
 * const files = await filesOf(core, scope, requestId);
 * ```
 */
export async function filesOf(
  core: FileRequestsCore,
  scope: string,
  id: string,
): Promise<StoredFile[] | null> {
  const record = await core.state.get<TicketRecord>(ticketStateKey(id));
  if (!record || record.scope !== scope || !Array.isArray(record.files)) return null;
  const files = await Promise.all(
    record.files
      .filter((fileId) => typeof fileId === "string")
      .map((fileId) => core.store.head(scope, fileId)),
  );
  return files.filter((file): file is StoredFile => file !== null);
}

/** Where a wait stands: the last tus offset reported and when the upload last moved. */
interface WaitProgress {
  reported: number;
  moved: number;
}

/** Reads the tus progress of a wait's request, reports a grown offset, and notes when it moved. */
async function readProgress(
  core: FileRequestsCore,
  options: WaitFor,
  seen: WaitProgress,
  now: number,
): Promise<void> {
  const { progress, onProgress } = options;
  if (!progress) return;
  const got = await progressOf(core, progress.scope, progress.id).catch(() => null);
  if (got && (got.offset > seen.reported || (got.length !== undefined && got.offset >= got.length))) {
    seen.moved = now;
  }
  if (got && got.offset > seen.reported) {
    seen.reported = got.offset;
    if (onProgress) await Promise.resolve(onProgress(got.offset, got.length)).catch(() => undefined);
  }
}

async function wait(
  core: FileRequestsCore,
  files: () => Promise<StoredFile[] | null>,
  options: WaitFor,
): Promise<StoredFile[]> {
  const timeoutMs =
    options.timeout === undefined ? core.timeoutMs : durationToMs(options.timeout, "wait: timeout");
  const deadline = Date.now() + timeoutMs;
  const { signal, onProgress, progress } = options;
  const expiresAt = options.expiresAt ?? Number.POSITIVE_INFINITY;
  const idleMs = options.idle === undefined ? undefined : durationToMs(options.idle, "wait: idle");
  const started = Date.now();
  // When the person's resumable upload last moved (or has all its bytes, so a commit is under way).
  const seen: WaitProgress = { reported: -1, moved: Number.NEGATIVE_INFINITY };
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
      await readProgress(core, options, seen, now);
    }
    // Past the link's expiry no upload can start or resume; one still receiving bytes may finish.
    if (now >= expiresAt && now - seen.moved >= EXPIRED_UPLOAD_GRACE_MS) {
      throw new FileBridgeError(
        "TOKEN_EXPIRED",
        "The upload link expired before the user finished the upload",
        {
          data: { request_id: progress?.id },
        },
      );
    }
    if (idleMs !== undefined && now - Math.max(seen.moved, started) >= idleMs) {
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
    await sleep(Math.min(core.pollMs, left, expiresAt > now ? expiresAt - now : core.pollMs), signal);
  }
}
