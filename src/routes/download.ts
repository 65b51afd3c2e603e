import type { Readable } from "node:stream";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import {
  type DownloadAnswer,
  type DownloadBody,
  lazyWebStream,
  setNodeResponseBody,
} from "../http/node-fast-path.js";
import { parseRange } from "../http/range.js";
import { type RequestView, webRequestView } from "../http/request-view.js";
import { JSON_HEADERS, report } from "../http/responses.js";
import { watchedDownload } from "../http/timeouts.js";
import { formatContentDisposition } from "../internal/content-disposition.js";
import { parseMediaType } from "../media/media-type.js";
import type { StoredFile } from "../storage/types.js";
import type { ResolvedRouteOptions } from "./options.js";
import type { DownloadEvent, VerifiedTokenClaims } from "./types.js";

/** The bytes a download sends: the whole file (200) or one satisfiable range (206). */
interface Slice {
  /** The range asked for and sent, or `undefined` for the whole file. */
  range: { start: number; end: number } | undefined;
  length: number;
  status: 200 | 206;
}

/**
 * `GET|HEAD {basePath}/download/{token}` as a web `Response` (the web path of the routes): the
 * {@link downloadAnswer} with its body as a web stream, which the Node adapter still recognizes and
 * pipes natively when it gets this `Response`.
 */
export async function handleDownload(
  config: ResolvedRouteOptions,
  request: Request,
  token: string,
): Promise<Response> {
  const answer = await downloadAnswer(config, webRequestView(request, new URL(request.url)), token);
  if (!answer.body) {
    return new Response(answer.text === "" ? null : answer.text, {
      status: answer.status,
      headers: answer.headers,
    });
  }
  const { stream, length, finish } = answer.body;
  let claimed = false;
  const body = lazyWebStream(stream, {
    onEnd: (bytes) => {
      if (!claimed && bytes === length) finish();
    },
  });
  const response = new Response(body, { status: answer.status, headers: answer.headers });
  setNodeResponseBody(response, {
    stream,
    claim: () => {
      claimed = true;
    },
    onSent: finish,
  });
  return response;
}

/**
 * `GET|HEAD {basePath}/download/{token}`: verifies the token and answers the file, with ranges,
 * ETag / `If-None-Match` / `If-Range`, and a safe `Content-Disposition`, as a status, headers and
 * either a text or the store's stream. The Node adapter writes it as it is (no web `Request` or
 * `Response`: a server that only serves files never loads Node's fetch implementation);
 * {@link handleDownload} makes a `Response` of it.
 */
export async function downloadAnswer(
  config: ResolvedRouteOptions,
  request: RequestView,
  token: string,
): Promise<DownloadAnswer> {
  // A single-use link is used up only when bytes are about to be sent: never by HEAD, a 304, a 416
  // or a missing file. Without `consume` on the verifier, only a HEAD is kept from using it up.
  const deferred = typeof config.minter.consume === "function";
  const claims = await config.minter.verify(token, {
    action: "download",
    consume: !deferred && request.method !== "HEAD",
  });
  const file = await config.store.head(claims.scope, claims.fileId);
  if (!file) throw new FileBridgeError("NOT_FOUND", "File not found");

  const etag = `"${file.sha256}"`;
  const headers = downloadHeaders(config, file, etag);
  const ifNoneMatch = request.header("if-none-match");
  if (ifNoneMatch && etagListMatches(ifNoneMatch, etag)) return { status: 304, headers, text: "" };

  const slice = requestedSlice(request, etag, file.size);
  if (slice === undefined) return rangeNotSatisfiable(headers, file.size);
  headers["content-length"] = String(slice.length);
  if (slice.range) headers["content-range"] = `bytes ${slice.range.start}-${slice.range.end}/${file.size}`;
  if (request.method === "HEAD") return { status: slice.status, headers, text: "" };

  const stream = await config.store.read(file.scope, file.id, slice.range ? { ...slice.range } : undefined);
  if (!stream) throw new FileBridgeError("NOT_FOUND", "File not found");
  if (deferred) {
    try {
      await config.minter.consume?.(claims);
    } catch (error) {
      stream.destroy();
      throw error;
    }
  }
  return {
    status: slice.status,
    headers,
    text: "",
    body: downloadBody(config, { file, token, claims, slice }, stream),
  };
}

/** The headers every answer about the file carries (200, 206, 304 and HEAD alike). */
function downloadHeaders(
  config: ResolvedRouteOptions,
  file: StoredFile,
  etag: string,
): Record<string, string> {
  const essence = parseMediaType(file.mimeType)?.essence;
  const disposition = essence && config.inlineTypes.has(essence) ? "inline" : "attachment";
  const headers: Record<string, string> = {
    "content-type": file.mimeType,
    etag,
    "accept-ranges": "bytes",
    "content-disposition": formatContentDisposition(disposition, file.name),
    "x-content-type-options": "nosniff",
    "cache-control": "private, no-store",
    "content-security-policy": "default-src 'none'; sandbox",
  };
  if (!Number.isNaN(file.createdAt)) headers["last-modified"] = new Date(file.createdAt).toUTCString();
  return headers;
}

/** What `Range` (honoured only when `If-Range` names the current ETag) asks for; `undefined` when unsatisfiable. */
function requestedSlice(request: RequestView, etag: string, size: number): Slice | undefined {
  const ifRange = request.header("if-range");
  const rangeHeader = ifRange !== null && ifRange.trim() !== etag ? null : request.header("range");
  const range = parseRange(rangeHeader, size);
  if (range.kind === "unsatisfiable") return undefined;
  if (range.kind === "partial") {
    return {
      range: { start: range.start, end: range.end },
      length: range.end - range.start + 1,
      status: 206,
    };
  }
  return { range: undefined, length: size, status: 200 };
}

/** The 416 answer: a JSON error body, a `Content-Range` naming the size, no `Content-Disposition`. */
function rangeNotSatisfiable(headers: Record<string, string>, size: number): DownloadAnswer {
  const body = {
    error: {
      code: "RANGE_NOT_SATISFIABLE",
      message: "The requested range is outside the file",
      hint: "Request a byte range inside the file.",
    },
  };
  const { "content-disposition": _disposition, ...rest } = headers;
  return {
    status: 416,
    headers: { ...rest, "content-range": `bytes */${size}`, "content-type": JSON_HEADERS["content-type"] },
    text: JSON.stringify(body),
  };
}

interface Transfer {
  file: StoredFile;
  token: string;
  claims: VerifiedTokenClaims;
  slice: Slice;
}

/**
 * The streamed body, behind a watchdog, with `onDownload` called once when every byte of the slice
 * was sent (by the web stream's end, or by the Node adapter once the socket took the last byte).
 */
function downloadBody(config: ResolvedRouteOptions, transfer: Transfer, stream: Readable): DownloadBody {
  const { file, token, claims, slice } = transfer;
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    if (!config.onDownload) return;
    const event: DownloadEvent = {
      scope: file.scope,
      file,
      bytes: slice.length,
      token,
      claims: { ...claims.claims },
    };
    if (slice.range) event.range = { ...slice.range };
    Promise.resolve()
      .then(() => config.onDownload?.(event))
      .catch((error: unknown) => report(config, error));
  };
  // Every byte goes through a watchdog: a client that stops reading (or takes too long) ends the
  // transfer, and the store's stream is destroyed with it.
  return {
    stream: watchedDownload(stream, config.idleTimeoutMs, config.downloadTimeoutMs),
    length: slice.length,
    finish,
  };
}

function etagListMatches(header: string, etag: string): boolean {
  if (header.trim() === "*") return true;
  return header
    .split(",")
    .map((part) => part.trim().replace(/^W\//, ""))
    .includes(etag);
}
