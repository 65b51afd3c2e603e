/**
 * The tus 1.0 endpoint behind an upload ticket, as `createFileRoutes()` routes to it:
 * `POST|OPTIONS {basePath}/tus/{token}` (creation, discovery) and
 * `HEAD|PATCH|DELETE|OPTIONS {basePath}/tus/{token}/{id}` (offset, write, termination). The ticket
 * in the path binds every request to its scope; an upload of another ticket or scope answers like
 * an unknown one (404), and the URL carries the signed ticket and a random id, never the scope.
 */
import { FileBridgeError, isFileBridgeError } from "../../errors/file-bridge-error.js";
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
  tusError,
  tusErrorResponse,
  tusResponse,
} from "./protocol.js";
import {
  isUploadId,
  lockUpload,
  settledUpload,
  type TusRecord,
  tusRecordKey,
  tusTicketKey,
} from "./records.js";
import { noSuchUpload, ownedRecord, type TusService, type TusTicket, verifyTusTicket } from "./service.js";

/** How often creation also sweeps expired staging (in the background). */
const SWEEP_EVERY_MS = 60_000;

/**
 * The tus handler. `handle` never throws: refusals are answered with their tus status.
 *
 * @example
 * ```ts
 * const tus = new TusUploadHandler(tusService(config, { staging: fsTusStaging("/srv/tus") }));
 * const response = await tus.handle(request, ctx); // ctx.segments: [token] or [token, id]
 * ```
 */
export class TusUploadHandler implements UploadHandler {
  readonly #service: TusService;
  #lastSweep = 0;

  constructor(service: TusService) {
    this.#service = service;
  }

  /** Removes expired staging; resolves with how many uploads it removed. */
  async sweep(): Promise<number> {
    this.#lastSweep = this.#service.now();
    return this.#service.staging.sweep(this.#lastSweep);
  }

  async handle(request: Request, ctx: UploadRequestContext): Promise<Response> {
    try {
      const method = methodOf(request);
      if (method === "OPTIONS") return this.#discovery();
      assertTusResumable(request);
      const ticket = await verifyTusTicket(this.#service, ctx.segments[0] as string);
      const id = ctx.segments[1];
      if (id === undefined) {
        if (method !== "POST")
          throw new FileBridgeError("METHOD_NOT_ALLOWED", "Use POST to create an upload");
        return await this.#create(request, ctx, ticket);
      }
      if (!isUploadId(id)) throw noSuchUpload();
      if (method === "HEAD") {
        await ownedRecord(this.#service, ticket, id);
        await settledUpload(this.#service.state, id);
        return headResponse(await ownedRecord(this.#service, ticket, id), request);
      }
      if (method === "PATCH") return await this.#patch(request, ctx, ticket, id);
      if (method === "DELETE") return await this.#terminate(ticket, id);
      throw new FileBridgeError("METHOD_NOT_ALLOWED", "Use HEAD, PATCH or DELETE on an upload");
    } catch (error) {
      if (!isFileBridgeError(error) || error.status >= 500) ctx.report(error);
      return tusErrorResponse(error);
    }
  }

  #discovery(): Response {
    return tusResponse(204, {
      "tus-version": TUS_VERSION,
      "tus-extension": TUS_EXTENSIONS,
      "tus-max-size": String(this.#service.config.maxBytes),
      "tus-checksum-algorithm": TUS_CHECKSUM_ALGORITHMS.join(","),
    });
  }

  async #create(request: Request, ctx: UploadRequestContext, ticket: TusTicket): Promise<Response> {
    const service = this.#service;
    if (service.now() - this.#lastSweep > SWEEP_EVERY_MS) void this.sweep().catch((e) => ctx.report(e));
    const concat = parseUploadConcat(request.headers.get("upload-concat"));
    const rawMetadata = request.headers.get("upload-metadata") ?? undefined;
    const metadata = parseUploadMetadata(rawMetadata ?? null);
    await checkRateLimit(
      service.config,
      { action: "upload", route: "ticket", scope: ticket.limits.scope, ticketId: ticket.verified.fileId },
      request,
    );
    const url = new URL(request.url);
    url.search = "";
    const expires = { "upload-expires": httpDate(ticket.expiresAt) };
    if (concat?.kind === "final") {
      const made = await createFinalUpload(service, ctx, ticket, url, concat.urls, rawMetadata, metadata);
      return tusResponse(201, { ...expires, location: `${url.href}/${made.id}`, ...handleHeader(made) });
    }
    const length = integerHeader(request, "upload-length");
    const deferred = request.headers.get("upload-defer-length")?.trim();
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
    const media = parseMediaType(request.headers.get("content-type"));
    if (media?.essence === TUS_PATCH_TYPE && request.body !== null) {
      const written = await this.#locked(id, (current) =>
        writeBody(service, ctx, request, ticket, id, current, undefined),
      ).catch((error: unknown) => {
        // The upload exists either way: tell the client where, so it resumes.
        if (isFileBridgeError(error)) return error;
        throw error;
      });
      if (written instanceof FileBridgeError) {
        const refused = tusErrorResponse(written);
        refused.headers.set("location", headers.location as string);
        return refused;
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
    return tusResponse(201, headers);
  }

  async #patch(
    request: Request,
    ctx: UploadRequestContext,
    ticket: TusTicket,
    id: string,
  ): Promise<Response> {
    const service = this.#service;
    await ownedRecord(service, ticket, id);
    if (parseMediaType(request.headers.get("content-type"))?.essence !== TUS_PATCH_TYPE) {
      throw tusError(
        "UNSUPPORTED_MEDIA_TYPE",
        `A PATCH body must be ${TUS_PATCH_TYPE}`,
        TUS_STATUS.unsupportedMediaType,
      );
    }
    const offset = integerHeader(request, "upload-offset");
    if (offset === undefined) throw tusError("INVALID_REQUEST", "Upload-Offset is required");
    const length = integerHeader(request, "upload-length");
    const checksum = parseUploadChecksum(request.headers.get("upload-checksum"));
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
      return writeBody(service, ctx, request, ticket, id, withLength(record, length, ticket), checksum);
    });
    return tusResponse(204, {
      "upload-offset": String(written.record.offset),
      "upload-expires": httpDate(written.record.expiresAt),
      ...handleHeader(written),
    });
  }

  async #terminate(ticket: TusTicket, id: string): Promise<Response> {
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
      return record;
    });
    return tusResponse(204);
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

/** `X-HTTP-Method-Override` on a `POST` (clients behind proxies that drop `PATCH`/`DELETE`). */
function methodOf(request: Request): string {
  const override = request.headers.get("x-http-method-override")?.trim().toUpperCase();
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

function headResponse(record: TusRecord, request: Request): Response {
  const headers: Record<string, string> = {
    "upload-offset": String(record.fileId !== undefined ? (record.length ?? record.offset) : record.offset),
    "upload-expires": httpDate(record.expiresAt),
  };
  if (record.length !== undefined) headers["upload-length"] = String(record.length);
  else headers["upload-defer-length"] = "1";
  if (record.rawMetadata) headers["upload-metadata"] = record.rawMetadata;
  if (record.partial) headers["upload-concat"] = "partial";
  if (record.parts) {
    const base = new URL(request.url);
    base.search = "";
    const prefix = base.href.slice(0, base.href.lastIndexOf("/"));
    headers["upload-concat"] = `final;${record.parts.map((part) => `${prefix}/${part}`).join(" ")}`;
  }
  return tusResponse(200, headers);
}
