/**
 * The tus 1.0 endpoint behind an upload ticket, as `createFileRoutes()` routes to it:
 * `POST|OPTIONS {basePath}/tus/{token}` (creation, discovery) and
 * `HEAD|PATCH|DELETE|OPTIONS {basePath}/tus/{token}/{id}` (offset, write, termination). The ticket
 * in the path binds every request to its scope; an upload of another ticket or scope answers like
 * an unknown one (404), and the URL carries the signed ticket and a random id, never the scope.
 */
import { FileBridgeError, isFileBridgeError } from "../../errors/file-bridge-error.js";
import { type PlainAnswer, type RequestView, webRequestView } from "../../http/request-view.js";
import { textResponse } from "../../internal/text-response.js";
import { parseMediaType } from "../../media/media-type.js";
import { checkDeclaredLength } from "../declared-file.js";
import type { UploadHandler, UploadRequestContext } from "../handler-types.js";
import { checkRateLimit } from "../upload-handler.js";
import { createFinalUpload, createTusUpload } from "./create.js";
import { writeBody } from "./patch.js";
import {
  assertTusResumable,
  httpDate,
  integerHeader,
  parseUploadChecksum,
  parseUploadConcat,
  parseUploadMetadata,
  TUS_CHECKSUM_ALGORITHMS,
  TUS_EXTENSIONS,
  TUS_PATCH_TYPE,
  TUS_STATUS,
  TUS_VERSION,
  tusAnswer,
  tusError,
  tusErrorAnswer,
} from "./protocol.js";
import {
  awaitingCommit,
  isUploadId,
  lockUpload,
  readRecord,
  settledUpload,
  type TusRecord,
  tusRecordKey,
  tusTicketKey,
} from "./records.js";
import { RunningHashes } from "./running-hash.js";
import type { TusService, TusSettings, TusTicket } from "./service.js";
import { claimStaging, releaseStaging } from "./staging-ledger.js";
import { noSuchUpload, ownedRecord, tokenHashOf, verifyTusTicket } from "./ticket.js";

/** How often creation also sweeps expired staging (in the background). */
const SWEEP_EVERY_MS = 60_000;

/**
 * The tus handler. `handle` and `answer` never throw: refusals are answered with their tus status.
 *
 * @example
 * ```ts
 * const tus = new TusUploadHandler(tusService(config, { staging: fsTusStaging("/srv/tus") }));
 * const response = await tus.handle(request, ctx); // ctx.segments: [token] or [token, id]
 * const answer = await tus.answer(view, ctx); // the same on a request view: status, headers, text
 * ```
 */
export class TusUploadHandler implements UploadHandler {
  readonly #service: TusService;
  #lastSweep = 0;

  /** `service`: the settings `tusService` checked; the handler adds the uploads' running hashes. */
  constructor(service: TusSettings) {
    this.#service = { ...service, hashes: new RunningHashes() };
  }

  /** Removes expired staging; resolves with how many uploads it removed. */
  async sweep(): Promise<number> {
    this.#lastSweep = this.#service.now();
    return this.#service.staging.sweep(this.#lastSweep);
  }

  async handle(request: Request, ctx: UploadRequestContext): Promise<Response> {
    const answer = await this.#answer(
      webRequestView(request, new URL(request.url)),
      ctx,
      request.body !== null,
    );
    // A bodiless answer keeps a `null` body (a 204 or 304 may have no other).
    const init = { status: answer.status, headers: answer.headers };
    return answer.text === "" ? new Response(null, init) : textResponse(answer.text, init);
  }

  /**
   * The tus request on a request view (the Node adapter's native path calls this directly, with the
   * `IncomingMessage` as `ctx.body`): a plain status, headers and text, no web object made unless a
   * hook asks for the request (`view.web()`). Every method but `GET` and `HEAD` may carry a body.
   */
  async answer(view: RequestView, ctx: UploadRequestContext): Promise<PlainAnswer> {
    return this.#answer(view, ctx, view.method !== "GET" && view.method !== "HEAD");
  }

  async #answer(request: RequestView, ctx: UploadRequestContext, hasBody: boolean): Promise<PlainAnswer> {
    try {
      const method = methodOf(request);
      if (method === "OPTIONS") return await this.#discovery(ctx.segments[0] as string);
      assertTusResumable(request);
      const token = ctx.segments[0] as string;
      const id = ctx.segments[1];
      if (method === "HEAD" && id !== undefined && isUploadId(id)) {
        return await this.#head(request, ctx, token, id);
      }
      const ticket = await verifyTusTicket(this.#service, token);
      if (id === undefined) {
        if (method !== "POST")
          throw new FileBridgeError("METHOD_NOT_ALLOWED", "Use POST to create an upload");
        return await this.#create(request, ctx, ticket, hasBody);
      }
      if (!isUploadId(id)) throw noSuchUpload();
      if (method === "PATCH") return await this.#patch(request, ctx, ticket, id);
      if (method === "DELETE") return await this.#terminate(ticket, id);
      throw new FileBridgeError("METHOD_NOT_ALLOWED", "Use HEAD, PATCH or DELETE on an upload");
    } catch (error) {
      if (!isFileBridgeError(error) || error.status >= 500) ctx.report(error);
      return tusErrorAnswer(error);
    }
  }

  /**
   * `HEAD`: the upload's offset, once no request writes it. A whole upload is shown complete only
   * committed, with its `Upload-Handle` and `Upload-Sha256`: a commit still running is waited for
   * (then 423, which tus clients retry), and one a dropped request left undone is finished here.
   * After the commit used the ticket up, the token that completed the upload still reads this
   * (until the ticket expires), so a client that lost the final reply learns its upload is stored.
   */
  async #head(
    request: RequestView,
    ctx: UploadRequestContext,
    token: string,
    id: string,
  ): Promise<PlainAnswer> {
    const service = this.#service;
    let ticket: TusTicket;
    try {
      ticket = await verifyTusTicket(service, token);
    } catch (error) {
      if (isFileBridgeError(error, "TOKEN_ALREADY_USED")) {
        const completed = await this.#completedBy(token, id);
        if (completed) return headResponse(completed, request);
      }
      throw error;
    }
    await ownedRecord(service, ticket, id);
    await settledUpload(service.state, id);
    let record = await ownedRecord(service, ticket, id);
    if (awaitingCommit(record)) {
      if (!(await settledUpload(service.state, id, COMMIT_WAIT_MS))) throw stillCommitting();
      record = await ownedRecord(service, ticket, id);
      if (awaitingCommit(record) && !record.parts) {
        // Every byte is here and nobody commits it (the request that carried the last byte failed
        // to): commit now, as a zero-byte PATCH would. (A final upload whose commit failed is sent
        // again as a new final upload instead.)
        await this.#locked(id, async () => {
          const current = await ownedRecord(service, ticket, id);
          if (!awaitingCommit(current)) return;
          await writeBody(service, { ...ctx, body: () => null }, request, ticket, id, current, undefined);
        });
        record = await ownedRecord(service, ticket, id);
      }
    }
    return headResponse(record, request);
  }

  /**
   * The committed upload `id` when `token` (used up) is the one that completed it; a commit still
   * running is waited for (then 423). `undefined`: the ticket's refusal stands.
   */
  async #completedBy(token: string, id: string): Promise<TusRecord | undefined> {
    const service = this.#service;
    const hash = tokenHashOf(token);
    const read = async () => {
      const record = await readRecord(service.state, id);
      const ours = record?.completedBy === hash && record.expiresAt > service.now();
      return ours ? record : undefined;
    };
    const record = await read();
    if (!record || record.fileId !== undefined) return record;
    const settled = await settledUpload(service.state, id, COMMIT_WAIT_MS);
    const after = await read();
    if (after?.fileId !== undefined) return after;
    // Still committing: retry. Not committed and nobody at it: the commit failed after using the
    // ticket up, nothing was stored, and the ticket's 410 stands.
    if (after && !settled) throw stillCommitting();
    return undefined;
  }

  /**
   * `OPTIONS`: the version and extensions, and with a valid ticket its own cap as `Tus-Max-Size`
   * (what a creation is held to). Without one (garbage, used, expired) nothing ticket-specific: tus
   * 1.0 sets `Tus-Max-Size` only for "a known hard limit", and no upload is allowed at all then;
   * the routes' `maxBytes` is no such limit either (a ticket's own cap replaces it).
   */
  async #discovery(token: string): Promise<PlainAnswer> {
    const headers: Record<string, string> = {
      "tus-version": TUS_VERSION,
      "tus-extension": TUS_EXTENSIONS,
      "tus-checksum-algorithm": TUS_CHECKSUM_ALGORITHMS.join(","),
    };
    const ticket = await verifyTusTicket(this.#service, token).catch(() => undefined);
    if (ticket) headers["tus-max-size"] = String(ticket.limits.maxBytes);
    return tusAnswer(204, headers);
  }

  async #create(
    request: RequestView,
    ctx: UploadRequestContext,
    ticket: TusTicket,
    hasBody: boolean,
  ): Promise<PlainAnswer> {
    const service = this.#service;
    if (service.now() - this.#lastSweep > SWEEP_EVERY_MS) void this.sweep().catch((e) => ctx.report(e));
    const concat = parseUploadConcat(request.header("upload-concat"));
    const rawMetadata = request.header("upload-metadata") ?? undefined;
    const metadata = parseUploadMetadata(rawMetadata ?? null);
    await checkRateLimit(
      service.config,
      { action: "upload", route: "ticket", scope: ticket.limits.scope, ticketId: ticket.verified.fileId },
      request,
    );
    // A copy: the view's URL is shared.
    const url = new URL(request.url.href);
    url.search = "";
    const expires = { "upload-expires": httpDate(ticket.expiresAt) };
    if (concat?.kind === "final") {
      const made = await createFinalUpload(service, ctx, ticket, url, concat.urls, rawMetadata, metadata);
      return tusAnswer(201, { ...expires, location: `${url.href}/${made.id}`, ...handleHeader(made) });
    }
    const length = integerHeader(request, "upload-length");
    const deferred = request.header("upload-defer-length")?.trim();
    if (deferred !== undefined && deferred !== "1") {
      throw tusError("INVALID_REQUEST", "Upload-Defer-Length must be 1");
    }
    if ((length === undefined) === (deferred === undefined)) {
      throw tusError("INVALID_REQUEST", "Send exactly one of Upload-Length and Upload-Defer-Length");
    }
    const { id, record } = await createTusUpload(service, ticket, {
      ...(length !== undefined ? { length } : {}),
      metadata,
      ...(rawMetadata ? { rawMetadata } : {}),
      partial: concat?.kind === "partial",
    });
    const headers: Record<string, string> = { ...expires, location: `${url.href}/${id}` };
    // creation-with-upload: a body in the creation request is the first chunk.
    const media = parseMediaType(request.header("content-type"));
    if (media?.essence === TUS_PATCH_TYPE && hasBody) {
      const written = await this.#locked(id, (current) =>
        writeBody(service, ctx, request, ticket, id, current, undefined),
      ).catch((error: unknown) => {
        // The upload exists either way: tell the client where, so it resumes.
        if (isFileBridgeError(error)) return error;
        throw error;
      });
      if (written instanceof FileBridgeError) {
        const refused = tusErrorAnswer(written);
        return { ...refused, headers: { ...refused.headers, location: headers.location as string } };
      }
      headers["upload-offset"] = String(written.record.offset);
      Object.assign(headers, handleHeader(written));
    } else if (record.length === 0 && !record.partial) {
      // An empty upload is complete at creation.
      const written = await this.#locked(id, (current) =>
        writeBody(service, { ...ctx, body: () => null }, request, ticket, id, current, undefined),
      );
      Object.assign(headers, handleHeader(written));
    }
    return tusAnswer(201, headers);
  }

  async #patch(
    request: RequestView,
    ctx: UploadRequestContext,
    ticket: TusTicket,
    id: string,
  ): Promise<PlainAnswer> {
    const service = this.#service;
    await ownedRecord(service, ticket, id);
    if (parseMediaType(request.header("content-type"))?.essence !== TUS_PATCH_TYPE) {
      throw tusError(
        "UNSUPPORTED_MEDIA_TYPE",
        `A PATCH body must be ${TUS_PATCH_TYPE}`,
        TUS_STATUS.unsupportedMediaType,
      );
    }
    const offset = integerHeader(request, "upload-offset");
    if (offset === undefined) throw tusError("INVALID_REQUEST", "Upload-Offset is required");
    const length = integerHeader(request, "upload-length");
    const checksum = parseUploadChecksum(request.header("upload-checksum"));
    const written = await this.#locked(id, async () => {
      const record = await ownedRecord(service, ticket, id);
      if (record.fileId !== undefined || record.parts) {
        throw tusError("TOKEN_ALREADY_USED", "This upload is complete", 410);
      }
      if (offset !== record.offset) {
        throw tusError("UPLOAD_IN_PROGRESS", `Upload-Offset must be ${record.offset}`, 409, {
          offset: record.offset,
        });
      }
      const sized = withLength(record, length, ticket);
      // A deferred length set now: the upload's share becomes that length (or is refused).
      if (sized.length !== undefined && record.length === undefined) {
        await claimStaging(service, ticket, id, { need: sized.length });
      }
      return writeBody(service, ctx, request, ticket, id, sized, checksum);
    });
    return tusAnswer(204, {
      "upload-offset": String(written.record.offset),
      "upload-expires": httpDate(written.record.expiresAt),
      ...handleHeader(written),
    });
  }

  async #terminate(ticket: TusTicket, id: string): Promise<PlainAnswer> {
    const service = this.#service;
    await this.#locked(id, async () => {
      const record = await ownedRecord(service, ticket, id);
      if (record.fileId !== undefined) throw tusError("TOKEN_ALREADY_USED", "This upload is complete", 410);
      await service.state.delete(tusRecordKey(id));
      if ((await service.state.get(tusTicketKey(ticket.verified.fileId))) === id) {
        await service.state.delete(tusTicketKey(ticket.verified.fileId));
      }
      await service.staging.remove(id);
      service.hashes.drop(id);
      await releaseStaging(service, ticket.limits.scope, [id]);
      return record;
    });
    return tusAnswer(204);
  }

  /** Runs `work` holding the upload's lock (423 when another request holds it). */
  async #locked<T>(id: string, work: (record: TusRecord) => Promise<T>): Promise<T> {
    const service = this.#service;
    const lock = await lockUpload(service.state, id, service.lockTtlMs);
    try {
      const record = await service.state.get<TusRecord>(tusRecordKey(id));
      if (!record) throw noSuchUpload();
      return await work(record);
    } finally {
      await lock.release();
    }
  }
}

/** How long a `HEAD` waits for a running commit before answering 423 (the client retries). */
const COMMIT_WAIT_MS = 3000;

/** A `HEAD` that came while the commit runs: 423, retryable (tus clients retry 423). */
function stillCommitting(): FileBridgeError {
  return tusError("UPLOAD_IN_PROGRESS", "The upload is being committed; retry", TUS_STATUS.locked, {
    retryable: true,
  });
}

/** `X-HTTP-Method-Override` on a `POST` (clients behind proxies that drop `PATCH`/`DELETE`). */
function methodOf(request: RequestView): string {
  const override = request.header("x-http-method-override")?.trim().toUpperCase();
  if (request.method === "POST" && override && ["PATCH", "DELETE", "HEAD"].includes(override))
    return override;
  return request.method;
}

/** A deferred length set by this `PATCH` (`Upload-Length`), checked against the offset and cap. */
function withLength(record: TusRecord, length: number | undefined, ticket: TusTicket): TusRecord {
  if (length === undefined) return record;
  if (record.length !== undefined) {
    if (record.length !== length) throw tusError("INVALID_REQUEST", "Upload-Length cannot change");
    return record;
  }
  checkDeclaredLength(ticket.verified.claims ?? {}, length);
  if (length > ticket.limits.maxBytes) {
    throw tusError("FILE_TOO_LARGE", `The upload is larger than ${ticket.limits.maxBytes} bytes`, 413, {
      limit: ticket.limits.maxBytes,
    });
  }
  if (length < record.offset) throw tusError("INVALID_REQUEST", "Upload-Length is below the offset");
  return { ...record, length };
}

/**
 * The headers of a committed upload, for clients that want the file at once: its handle
 * (`Upload-Handle`) and the sha256 the server computed (`Upload-Sha256`, hex).
 */
function handleHeader(written: {
  committed?: { handle: string; file: { sha256: string } };
}): Record<string, string> {
  if (!written.committed) return {};
  return { "upload-handle": written.committed.handle, "upload-sha256": written.committed.file.sha256 };
}

function headResponse(record: TusRecord, request: RequestView): PlainAnswer {
  const headers: Record<string, string> = {
    "upload-offset": String(record.fileId !== undefined ? (record.length ?? record.offset) : record.offset),
    "upload-expires": httpDate(record.expiresAt),
  };
  if (record.fileId !== undefined && record.handle && record.sha256) {
    headers["upload-handle"] = record.handle;
    headers["upload-sha256"] = record.sha256;
  }
  if (record.length !== undefined) headers["upload-length"] = String(record.length);
  else headers["upload-defer-length"] = "1";
  if (record.rawMetadata) headers["upload-metadata"] = record.rawMetadata;
  if (record.partial) headers["upload-concat"] = "partial";
  if (record.parts) {
    const base = new URL(request.url.href);
    base.search = "";
    const prefix = base.href.slice(0, base.href.lastIndexOf("/"));
    headers["upload-concat"] = `final;${record.parts.map((part) => `${prefix}/${part}`).join(" ")}`;
  }
  return tusAnswer(200, headers);
}
