import { FileBridgeError } from "../errors/file-bridge-error.js";
import { formatContentDisposition } from "../internal/content-disposition.js";
import { parseMediaType } from "../media/media-type.js";
import { lazyWebStream, setNodeResponseBody } from "./node-fast-path.js";
import type { ResolvedRouteOptions } from "./options.js";
import { parseRange } from "./range.js";
import { JSON_HEADERS, report } from "./responses.js";
import { watchedDownload } from "./timeouts.js";
import type { DownloadEvent } from "./types.js";

/**
 * `GET|HEAD {basePath}/download/{token}`: verifies the token and streams the file, with ranges,
 * ETag / `If-None-Match` / `If-Range`, and a safe `Content-Disposition`.
 */
export async function handleDownload(
  config: ResolvedRouteOptions,
  request: Request,
  token: string,
): Promise<Response> {
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
  const essence = parseMediaType(file.mimeType)?.essence;
  const disposition = essence && config.inlineTypes.has(essence) ? "inline" : "attachment";
  const headers = new Headers({
    "content-type": file.mimeType,
    etag,
    "accept-ranges": "bytes",
    "content-disposition": formatContentDisposition(disposition, file.name),
    "x-content-type-options": "nosniff",
    "cache-control": "private, no-store",
    "content-security-policy": "default-src 'none'; sandbox",
  });
  if (!Number.isNaN(file.createdAt)) headers.set("last-modified", new Date(file.createdAt).toUTCString());

  const ifNoneMatch = request.headers.get("if-none-match");
  if (ifNoneMatch && etagListMatches(ifNoneMatch, etag)) {
    return new Response(null, { status: 304, headers });
  }

  const ifRange = request.headers.get("if-range");
  const rangeHeader = ifRange !== null && ifRange.trim() !== etag ? null : request.headers.get("range");
  const range = parseRange(rangeHeader, file.size);
  if (range.kind === "unsatisfiable") {
    headers.set("content-range", `bytes */${file.size}`);
    const body = {
      error: {
        code: "RANGE_NOT_SATISFIABLE",
        message: "The requested range is outside the file",
        hint: "Request a byte range inside the file.",
      },
    };
    headers.set("content-type", JSON_HEADERS["content-type"]);
    headers.delete("content-disposition");
    return new Response(JSON.stringify(body), { status: 416, headers });
  }

  const start = range.kind === "partial" ? range.start : 0;
  const end = range.kind === "partial" ? range.end : file.size - 1;
  const length = file.size === 0 ? 0 : end - start + 1;
  const status = range.kind === "partial" ? 206 : 200;
  headers.set("content-length", String(length));
  if (range.kind === "partial") headers.set("content-range", `bytes ${start}-${end}/${file.size}`);

  if (request.method === "HEAD") return new Response(null, { status, headers });

  const stream = await config.store.read(
    file.scope,
    file.id,
    range.kind === "partial" ? { start, end } : undefined,
  );
  if (!stream) throw new FileBridgeError("NOT_FOUND", "File not found");
  if (deferred) {
    try {
      await config.minter.consume?.(claims);
    } catch (error) {
      stream.destroy();
      throw error;
    }
  }

  let done = false;
  const finish = (bytes: number) => {
    if (done) return;
    done = true;
    if (!config.onDownload) return;
    const event: DownloadEvent = { scope: file.scope, file, bytes, token, claims: { ...claims.claims } };
    if (range.kind === "partial") event.range = { start, end };
    Promise.resolve()
      .then(() => config.onDownload?.(event))
      .catch((error: unknown) => report(config, error));
  };
  // Every byte goes through a watchdog: a client that stops reading (or takes too long) ends the
  // transfer, and the store's stream is destroyed with it.
  const watched = watchedDownload(stream, config.idleTimeoutMs, config.downloadTimeoutMs);
  let claimed = false;
  const body = lazyWebStream(watched, {
    onEnd: (bytes) => {
      if (!claimed && bytes === length) finish(bytes);
    },
  });
  const response = new Response(body, { status, headers });
  setNodeResponseBody(response, {
    stream: watched,
    claim: () => {
      claimed = true;
    },
    onSent: () => finish(length),
  });
  return response;
}

function etagListMatches(header: string, etag: string): boolean {
  if (header.trim() === "*") return true;
  return header
    .split(",")
    .map((part) => part.trim().replace(/^W\//, ""))
    .includes(etag);
}
