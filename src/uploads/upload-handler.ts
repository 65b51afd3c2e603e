import { FileBridgeError } from "../errors/file-bridge-error.js";
import { type PlainAnswer, type RequestView, webRequestView } from "../http/request-view.js";
import { sanitizeRelativePath } from "../internal/file-name.js";
import { textResponse } from "../internal/text-response.js";
import { assertScope } from "../scope/scope.js";
import { scopeRefsOf } from "../scope/scope-refs.js";
import type { StoredFile } from "../storage/types.js";
import { declaredFileCheck, ticketDigestRefusal, withSizeReason } from "./declared-file.js";
import type {
  UploadHandler,
  UploadHandlerConfig,
  UploadRateLimitInfo,
  UploadReply,
  UploadReplyFile,
  UploadRequestContext,
} from "./handler-types.js";
import { storeRequestFiles } from "./store-request-files.js";
import { claimTicket } from "./ticket-claim.js";
import {
  formatUploadHandle,
  TICKET_CLAIMS,
  type TicketRecord,
  ticketStateKey,
  uploadHandleOf,
} from "./upload-handle.js";
import type { StagedPart, UploadLimits } from "./upload-staging.js";

const JSON_HEADERS = {
  "content-type": "application/json; charset=utf-8",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
};

function positiveClaim(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : fallback;
}

/**
 * `POST|PUT {basePath}/upload/{token}`: an upload with a ticket minted by `get_upload_url` (or
 * `FileRequests`). The ticket's own claims (`max_bytes`, `max_files`, `file_ttl`) override the route
 * defaults. With `state`, the upload is recorded under the ticket id, so the ticket's handle — the
 * one the reply answers with — resolves to every file of the upload.
 *
 * @example
 * ```ts
 * const ticketUploads = new TicketUploadHandler(config);
 * const response = await ticketUploads.handle(request, { segments: [token], body, watch, report });
 * ```
 */
export class TicketUploadHandler implements UploadHandler {
  readonly #config: UploadHandlerConfig;

  constructor(config: UploadHandlerConfig) {
    this.#config = config;
  }

  async handle(request: Request, ctx: UploadRequestContext): Promise<Response> {
    return toResponse(await this.answer(webRequestView(request, new URL(request.url)), ctx));
  }

  /** The upload itself, on a request view (the Node adapter's native path calls this directly). */
  async answer(request: RequestView, ctx: UploadRequestContext): Promise<PlainAnswer> {
    const config = this.#config;
    const token = ctx.segments[0] as string;
    // A single-use ticket is checked now but used up only when every file is staged and verified,
    // so a failed upload (too large, digest mismatch, aborted) can be retried with the same URL.
    const deferred = typeof config.minter.consume === "function";
    const verified = await config.minter.verify(token, { action: "upload", consume: !deferred });
    const extra = verified.claims ?? {};
    const ttlSeconds = extra[TICKET_CLAIMS.fileTtl];
    const limits: UploadLimits = {
      scope: verified.scope,
      maxBytes: positiveClaim(extra[TICKET_CLAIMS.maxBytes], config.maxBytes),
      maxFiles: positiveClaim(extra[TICKET_CLAIMS.maxFiles], config.maxFiles),
      ttlMs: typeof ttlSeconds === "number" && ttlSeconds > 0 ? ttlSeconds * 1000 : config.uploadTtlMs,
      kind: "upload",
    };
    if (config.rateLimit) {
      await checkRateLimit(
        config,
        { action: "upload", route: "ticket", scope: limits.scope, ticketId: verified.fileId },
        request,
      );
    }
    // A single-use ticket used up only at commit must still not stage two uploads at once: claim it
    // now, before any byte is read (a verifier without `consume` used the ticket up in `verify`).
    const release =
      deferred && verified.singleUse !== false ? await claimTicket(config, ctx, verified) : undefined;
    const declaredSha256 = extra[TICKET_CLAIMS.sha256];
    const declaredSize = extra[TICKET_CLAIMS.exactSize];
    let files: StoredFile[];
    try {
      files = await storeRequestFiles(config, ctx, request, limits, {
        allowMultipart: true,
        verify: partsCheck(declaredFileCheck(extra)),
        ...(typeof declaredSha256 === "string"
          ? { declaredSha256: { sha256: declaredSha256, refusal: ticketDigestRefusal } }
          : {}),
        ...(typeof declaredSize === "number" ? { declaredSize } : {}),
        beforeCommit: deferred ? () => config.minter.consume?.(verified) : undefined,
      });
    } catch (error) {
      throw withSizeReason(error, extra[TICKET_CLAIMS.exactSize]);
    } finally {
      await release?.();
    }
    let recorded = false;
    if (config.state) {
      const record: TicketRecord = { scope: limits.scope, files: files.map((file) => file.id) };
      try {
        await config.state.set(ticketStateKey(verified.fileId), record, { ttl: limits.ttlMs / 1000 });
        recorded = true;
      } catch (error) {
        ctx.report(error);
      }
    }
    // One upload, one handle: the ticket's handle when the upload is recorded under it.
    const handle = recorded
      ? formatUploadHandle(limits.scope, verified.fileId, scopeRefsOf(config.minter))
      : undefined;
    return uploadReply(config, ctx, files, handle);
  }
}

/** A declared-file check applied to every staged part of a request. */
function partsCheck(
  check: ((file: StoredFile) => void) | undefined,
): ((parts: StagedPart[]) => void) | undefined {
  if (!check) return undefined;
  return (parts) => {
    for (const { staged } of parts) check(staged.file);
  };
}

/**
 * Asks the `rateLimit` hook; `false` is `429 RATE_LIMITED`, before any byte of the body is read.
 * `info.request` is the web `Request`; from a request view it is built only when the hook reads it.
 */
export async function checkRateLimit(
  config: UploadHandlerConfig,
  fields: Omit<UploadRateLimitInfo, "request">,
  request: Request | RequestView,
): Promise<void> {
  if (!config.rateLimit) return;
  let info: UploadRateLimitInfo;
  // A view is told by its `header` (not `instanceof Request`: reading the global `Request` loads
  // Node's fetch implementation, which the native paths never need).
  if (typeof (request as Partial<RequestView>).header !== "function") {
    info = { ...fields, request: request as Request };
  } else {
    const view = request as RequestView;
    info = { ...fields } as UploadRateLimitInfo;
    Object.defineProperty(info, "request", { enumerable: true, configurable: true, get: () => view.web() });
  }
  if ((await config.rateLimit(info)) !== true) {
    throw new FileBridgeError("RATE_LIMITED", "Too many uploads; try again later", {
      data: { scope: fields.scope, route: fields.route },
    });
  }
}

/**
 * `POST|PUT {basePath}/scopes/{scope}/files/{name}`: a direct upload for callers `authorize` lets
 * in (segments `[scope, "files", ...name]`). Exists only when the routes have `authorize`.
 *
 * @example
 * ```ts
 * const directUploads = new DirectUploadHandler(config);
 * const response = await directUploads.handle(request, { segments: ["s1", "files", "a.txt"], body, watch, report });
 * ```
 */
export class DirectUploadHandler implements UploadHandler {
  readonly #config: UploadHandlerConfig;

  constructor(config: UploadHandlerConfig) {
    this.#config = config;
  }

  async handle(request: Request, ctx: UploadRequestContext): Promise<Response> {
    const config = this.#config;
    let scope: string;
    let name: string;
    try {
      scope = decodeURIComponent(ctx.segments[0] as string);
      name = sanitizeRelativePath(decodeURIComponent(ctx.segments.slice(2).join("/")));
    } catch (cause) {
      throw new FileBridgeError("INVALID_REQUEST", "The scope or name is not valid percent-encoding", {
        cause,
      });
    }
    assertScope(scope);
    const allowed = await config.authorize?.(request, { scope, name });
    if (allowed !== true) throw new FileBridgeError("FORBIDDEN", "Not allowed to upload to this scope");
    await checkRateLimit(config, { action: "upload", route: "direct", scope }, request);
    const limits: UploadLimits = {
      scope,
      maxBytes: config.maxBytes,
      maxFiles: 1,
      ttlMs: config.uploadTtlMs,
      kind: "upload",
    };
    const view = webRequestView(request, new URL(request.url));
    const files = await storeRequestFiles(config, ctx, view, limits, { allowMultipart: false, name });
    return toResponse(await uploadReply(config, ctx, files, undefined));
  }
}

/**
 * The `201` reply. `handle` is the upload's one handle: the ticket's when the upload was recorded,
 * else the file's own when the upload stored one file (nothing else would resolve to all of them).
 */
async function uploadReply(
  config: UploadHandlerConfig,
  ctx: UploadRequestContext,
  files: StoredFile[],
  uploadHandle: string | undefined,
): Promise<PlainAnswer> {
  const onStored = config.onStored;
  if (onStored) {
    for (const file of files) {
      try {
        await onStored(file);
      } catch (error) {
        ctx.report(error);
      }
    }
  }
  const reply: UploadReplyFile[] = files.map((file) => {
    const entry: UploadReplyFile = {
      handle: uploadHandleOf(file, scopeRefsOf(config.minter)),
      id: file.id,
      name: file.name,
      size: file.size,
      sha256: file.sha256,
      mimeType: file.mimeType,
    };
    const uri = config.resourceUri?.(file);
    if (uri) entry.uri = uri;
    if (file.expiresAt !== undefined) entry.expiresAt = new Date(file.expiresAt).toISOString();
    return entry;
  });
  const handle = uploadHandle ?? (reply.length === 1 ? reply[0]?.handle : undefined);
  const body: UploadReply = handle === undefined ? { files: reply } : { handle, files: reply };
  return { status: 201, headers: { ...JSON_HEADERS }, text: JSON.stringify(body) };
}

/** A plain answer as a web `Response` (its text kept for the Node adapter's one `res.end`). */
export function toResponse(answer: PlainAnswer): Response {
  return textResponse(answer.text, { status: answer.status, headers: answer.headers });
}
