import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeWebReadableStream } from "node:stream/web";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import {
  type DownloadAnswer,
  forbiddenMethodAnswer,
  lazyWebStream,
  type NodeDownloadAnswer,
  type NodeUploadAnswer,
  nodeDownloadAnswer,
  nodeUploadAnswer,
  requestBodyAsNode,
  setNodeRequestBody,
  takeNodeResponseBody,
} from "../http/node-fast-path.js";
import type { RequestView } from "../http/request-view.js";
import { takeDownloadSource } from "../http/timeouts.js";
import { optionCheck } from "../internal/options.js";
import { takeResponseText } from "../internal/text-response.js";
import { takeFileRange } from "../storage/kit/file-range.js";
import { sendFileRange } from "./send-file-range.js";

// An upload service on Node (file routes on the fs or memory store, the minter, tus staged on disk)
// built from this entry alone loads no zod and no MCP code. The root exports the same functions and
// classes (one module each, so `instanceof` holds across both); the root also loads the MCP pieces
// and zod, about 3 MB of V8 old generation, which puts a server over the 8 MB above which V8 can run
// a full GC after every scavenge while big bodies stream in (docs/performance.md, Session 21).
export type { FileRoutes, FileRoutesOptions } from "../routes/create-file-routes.js";
export { createFileRoutes } from "../routes/create-file-routes.js";
export { SignedUrlMinter } from "../signing/signed-url-minter.js";
export type { SignedUrlMinterOptions } from "../signing/types.js";
export type { FsFileStore, FsStoreOptions } from "../storage/fs-store.js";
export { fsStore } from "../storage/fs-store.js";
export { memoryState } from "../storage/memory-state.js";
export { memoryStore } from "../storage/memory-store.js";
export type { FileStore, StateStore, StoredFile } from "../storage/types.js";
export { fsTusStaging } from "../uploads/tus/fs-staging.js";

const check = optionCheck("toNodeHandler");

/**
 * A web-standard handler such as the one `createFileRoutes()` returns.
 *
 * @example
 * ```ts
 * const handler: WebHandler = createFileRoutes({ store, minter });
 * const files = toNodeHandler(handler);
 * ```
 */
export type WebHandler = (request: Request) => Promise<Response | undefined>;

/**
 * A Node request handler that also fits express middleware (`next` is optional).
 *
 * @example
 * ```ts
 * const files: NodeHandler = toNodeHandler(createFileRoutes({ store, minter }));
 * app.use(files); // express: requests outside the file routes go on to next()
 * ```
 */
export type NodeHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  next?: (error?: unknown) => void,
) => void;

/**
 * Options of {@link toNodeHandler}.
 *
 * @example
 * ```ts
 * toNodeHandler(routes, { fallbackOrigin: "http://127.0.0.1:3000", onError: (error) => log.error(error) });
 * ```
 */
export interface NodeHandlerOptions {
  /**
   * Origin used to build the `Request` URL when the request has no usable `Host` header.
   * @default "http://localhost"
   */
  fallbackOrigin?: string;
  /**
   * Sees errors the handler threw (without `next`, they are answered with a bare 500) and errors
   * while writing a response.
   * @default undefined (ignored)
   */
  onError?: (error: unknown) => void;
}

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection"]);

/**
 * Runs a web-standard handler (`createFileRoutes()`) on `node:http` or express. The request body
 * streams (nothing is buffered), a client that goes away aborts `request.signal`, and the response
 * body is piped to `res` with backpressure. Downloads from the file routes take a fast path that
 * pipes the store's stream straight into the socket, and the routes' `onDownload` hook runs only
 * once `res` finished. When the handler answers `undefined`, `next()` is called (express), or a 404
 * is sent when there is no `next`.
 *
 * An answer sent before the request body was read in full (an early 401, 404 or 413, a timeout)
 * carries `Connection: close`, and the socket is ended instead of draining the rest of the announced
 * body; a handler's own `Connection: close` is kept as well.
 *
 * Mount it before any body parser (`express.json()` would consume upload bodies).
 *
 * @example
 * ```ts
 * import { createServer } from "node:http";
 * import { toNodeHandler } from "mcp-file-bridge/node";
 *
 * const files = toNodeHandler(createFileRoutes({ store, minter, state }));
 * createServer((req, res) => files(req, res)).listen(3000, "127.0.0.1");
 * // express: app.use(files);
 * ```
 */
export function toNodeHandler(handler: WebHandler, options: NodeHandlerOptions = {}): NodeHandler {
  if (typeof handler !== "function") {
    throw check.error("handler", "must be a function");
  }
  const fallbackOrigin = options.fallbackOrigin ?? "http://localhost";
  try {
    new URL(fallbackOrigin);
  } catch (cause) {
    throw check.error("fallbackOrigin", "must be an absolute URL", cause);
  }
  return (req, res, next) => {
    void serve(handler, req, res, next, fallbackOrigin, options.onError);
  };
}

/** Methods the Fetch standard forbids in a `Request` (Node delivers only TRACE to handlers). */
const FORBIDDEN_METHODS = new Set(["CONNECT", "TRACE", "TRACK"]);

function requestUrl(req: IncomingMessage, fallbackOrigin: string): URL {
  const path = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? "/";
  const host = req.headers.host;
  const encrypted = (req.socket as { encrypted?: boolean } | undefined)?.encrypted === true;
  try {
    return host ? new URL(path, `${encrypted ? "https" : "http"}://${host}`) : new URL(path, fallbackOrigin);
  } catch {
    return new URL(path, fallbackOrigin);
  }
}

function toRequest(req: IncomingMessage, signal: AbortSignal, url: URL): Request {
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    if (name.startsWith(":")) continue; // HTTP/2 pseudo-headers
    headers.append(name, req.rawHeaders[i + 1] as string);
  }
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  const init: RequestInit & { duplex?: "half" } = { method, headers, signal };
  if (hasBody) {
    init.body = lazyWebStream(req);
    init.duplex = "half";
  }
  const request = new Request(url, init);
  if (hasBody) setNodeRequestBody(request, req);
  return request;
}

async function serve(
  handler: WebHandler,
  req: IncomingMessage,
  res: ServerResponse,
  next: ((error?: unknown) => void) | undefined,
  fallbackOrigin: string,
  onError: ((error: unknown) => void) | undefined,
): Promise<void> {
  const aborter = requestAborter(res);

  const method = (req.method ?? "GET").toUpperCase();
  if (FORBIDDEN_METHODS.has(method)) {
    // No web `Request` can carry this method. The file routes answer 405 with `Allow` for their own
    // paths; anything else goes on to `next()`, or is a 501 (the method is not supported here).
    let answer: Response | undefined | null;
    try {
      answer = await forbiddenMethodAnswer(handler, requestUrl(req, fallbackOrigin).pathname);
    } catch {
      answer = undefined;
    }
    if (answer === undefined || answer === null) {
      if (next) {
        next();
        return;
      }
      res.writeHead(
        answer === null ? 501 : 404,
        closeIfUnread(req, { "content-type": "text/plain; charset=utf-8" }),
      );
      res.end(answer === null ? "Not Implemented" : "Not Found");
      return;
    }
    await writeAnswer(req, answer, res, onError);
    return;
  }

  const download = method === "GET" || method === "HEAD" ? nodeDownloadAnswer(handler) : undefined;
  if (download && (await serveNativeDownload(download, req, res, aborter, fallbackOrigin, onError))) return;
  // A ticket PUT, or a tus request (POST, HEAD, PATCH, DELETE, OPTIONS under `tus/`).
  const native = method !== "GET" ? nodeUploadAnswer(handler) : undefined;
  if (native && (await serveNativeUpload(native, req, res, aborter, fallbackOrigin, onError, method))) return;

  let request: Request;
  try {
    request = toRequest(req, aborter.signal, requestUrl(req, fallbackOrigin));
  } catch {
    // The request cannot be represented as a web `Request`: the client's fault, not the server's.
    res.writeHead(400, closeIfUnread(req, { "content-type": "text/plain; charset=utf-8" }));
    res.end("Bad Request");
    return;
  }
  let response: Response | undefined;
  try {
    response = await handler(request);
  } catch (error) {
    if (next) {
      next(error);
      return;
    }
    onError?.(error);
    if (!res.headersSent) {
      res.writeHead(500, closeIfUnread(req, { "content-type": "text/plain; charset=utf-8" }));
    }
    res.end("Internal Server Error");
    return;
  }
  if (!response) {
    if (next) {
      next();
      return;
    }
    res.writeHead(404, closeIfUnread(req, { "content-type": "text/plain; charset=utf-8" }));
    res.end("Not Found");
    return;
  }
  await writeAnswer(req, response, res, onError);
}

/**
 * The abort side of one request: a signal that aborts when the client goes away (`res` closes before
 * the answer was sent) or on `abort`, and `onAbort` listeners, called with its reason right after it
 * aborted (the native upload path's {@link RequestView.onAbort}).
 */
interface RequestAborter {
  readonly signal: AbortSignal;
  abort(reason: unknown): void;
  onAbort(listener: (reason: unknown) => void): () => void;
}

function requestAborter(res: ServerResponse): RequestAborter {
  const controller = new AbortController();
  const { signal } = controller;
  let listeners: Set<(reason: unknown) => void> | undefined;
  const abort = (reason: unknown) => {
    if (signal.aborted) return;
    controller.abort(reason);
    if (listeners) for (const listener of [...listeners]) listener(signal.reason);
  };
  res.once("close", () => {
    if (!res.writableFinished) abort(new FileBridgeError("ABORTED", "The client went away"));
  });
  return {
    signal,
    abort,
    onAbort(listener) {
      listeners ??= new Set();
      listeners.add(listener);
      return () => {
        listeners?.delete(listener);
      };
    },
  };
}

/** A header of a Node request as `Headers.get` gives it: every occurrence, joined with `, `. */
function rawHeader(req: IncomingMessage, name: string): string | null {
  let value: string | null = null;
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const key = raw[i] as string;
    if (key.length !== name.length || key.toLowerCase() !== name) continue;
    value = value === null ? (raw[i + 1] as string) : `${value}, ${raw[i + 1] as string}`;
  }
  return value;
}

/**
 * The request view the native paths give the file routes: the URL parsed once, headers read from the
 * raw ones, a web `Request` built only if a hook asks for it (`built()` gives it then). An upload's
 * view can abort the request's one controller. `undefined` when the URL does not parse (nothing was
 * read; the web path takes the request). `method` is the request's, upper-case.
 */
function nativeView(
  req: IncomingMessage,
  aborter: RequestAborter,
  fallbackOrigin: string,
  method: string,
): { view: RequestView; built: () => Request | undefined } | undefined {
  let url: URL;
  try {
    url = requestUrl(req, fallbackOrigin);
  } catch {
    return undefined;
  }
  const signal = aborter.signal;
  let web: Request | undefined;
  const view: RequestView = {
    method,
    url,
    signal,
    // An upload aborts its staging (timeout, body error) through this request's one controller.
    ...(method !== "GET" && method !== "HEAD" ? { abort: aborter.abort, onAbort: aborter.onAbort } : {}),
    header: (name) => rawHeader(req, name.toLowerCase()),
    web: () => {
      web ??= toRequest(req, signal, url);
      return web;
    },
  };
  return { view, built: () => web };
}

/**
 * The native path of an upload `PUT` or a tus request to the file routes: the routes read the
 * `IncomingMessage` through a request view (the URL parsed once) and answer with a plain status,
 * headers and text, written with one `res.end`; a web `Request` is built only if a hook asks for it.
 * `false` when the routes do not serve this request natively (nothing was read; the web path takes
 * it).
 */
async function serveNativeUpload(
  native: NodeUploadAnswer,
  req: IncomingMessage,
  res: ServerResponse,
  aborter: RequestAborter,
  fallbackOrigin: string,
  onError: ((error: unknown) => void) | undefined,
  method: string,
): Promise<boolean> {
  const request = nativeView(req, aborter, fallbackOrigin, method);
  if (!request) return false;
  let answer: Awaited<ReturnType<NodeUploadAnswer>>;
  try {
    answer = await native(request.view, () => {
      const web = request.built();
      return web ? requestBodyAsNode(web) : req;
    });
  } catch (error) {
    // The routes answer their own errors; anything else is a bare 500, as on the web path.
    onError?.(error);
    answer = {
      status: 500,
      headers: { "content-type": "text/plain; charset=utf-8" },
      text: "Internal Server Error",
    };
  }
  if (!answer) return false;
  try {
    // A copy that `withLength` adds to: `Object.assign`, not a spread (see `withCorsRecord`).
    const headers: Record<string, string> = Object.assign({}, answer.headers);
    // A `HEAD` (tus) has no body: no length, as on the web path.
    if (method !== "HEAD") withLength(headers, answer.status, answer.text);
    res.writeHead(answer.status, closeIfUnread(req, headers));
    res.end(method === "HEAD" ? undefined : answer.text);
  } catch (error) {
    onError?.(error);
    if (!res.destroyed) res.destroy();
  }
  return true;
}

/**
 * The native path of a download (`GET`/`HEAD`) from the file routes: the routes read the
 * `IncomingMessage` through a request view and answer with a status, headers, and a text or the
 * store's stream, written here; no web `Request` or `Response` is made unless a hook asks for the
 * request. `false` when the routes do not serve this request natively (the web path takes it).
 */
async function serveNativeDownload(
  native: NodeDownloadAnswer,
  req: IncomingMessage,
  res: ServerResponse,
  aborter: RequestAborter,
  fallbackOrigin: string,
  onError: ((error: unknown) => void) | undefined,
): Promise<boolean> {
  const request = nativeView(req, aborter, fallbackOrigin, req.method === "HEAD" ? "HEAD" : "GET");
  if (!request) return false;
  let answer: DownloadAnswer | undefined;
  try {
    answer = await native(request.view);
  } catch (error) {
    onError?.(error);
    answer = {
      status: 500,
      headers: { "content-type": "text/plain; charset=utf-8" },
      text: "Internal Server Error",
    };
  }
  if (!answer) return false;
  const { body } = answer;
  try {
    // A copy that `withLength` adds to: `Object.assign`, not a spread (see `withCorsRecord`).
    const headers: Record<string, string> = Object.assign({}, answer.headers);
    if (!body) withLength(headers, answer.status, answer.text);
    res.writeHead(answer.status, closeIfUnread(req, headers));
    if (!body || req.method === "HEAD") {
      body?.stream.destroy();
      res.end(answer.text);
      return true;
    }
    // A range of an open file (fsStore) is read here into reused buffers; other stores pipe.
    const taken = takeDownloadSource(body.stream, takeFileRange);
    if (taken) await sendFileRange(res, taken.value, { download: body.stream, ...taken });
    else await pipeline(body.stream, res);
    body.finish();
  } catch (error) {
    body?.stream.destroy();
    onError?.(error);
    if (!res.destroyed) res.destroy();
  }
  return true;
}

async function writeAnswer(
  req: IncomingMessage,
  response: Response,
  res: ServerResponse,
  onError: ((error: unknown) => void) | undefined,
): Promise<void> {
  try {
    await writeResponse(req, response, res);
  } catch (error) {
    onError?.(error);
    if (!res.destroyed) res.destroy();
  }
}

/**
 * Gives an answer whose whole text is known its `Content-Length` (unless it has one, or its status
 * has no body): Node would otherwise send it chunked, in more pieces, for the client to reassemble.
 */
function withLength<T extends Record<string, string | string[]>>(
  headers: T,
  status: number,
  text: string,
): T {
  if (status < 200 || status === 204 || status === 304) return headers;
  if (headers["content-length"] === undefined && headers["transfer-encoding"] === undefined) {
    (headers as Record<string, string>)["content-length"] = String(Buffer.byteLength(text));
  }
  return headers;
}

/** True when a `Connection` header value carries the `close` option. */
function wantsClose(value: string | null): boolean {
  return value?.split(",").some((option) => option.trim().toLowerCase() === "close") === true;
}

/** True when the request announced a body (a length above 0, or chunked). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (length !== undefined && length.trim() !== "0");
}

/**
 * Adds `Connection: close` when the answer goes out before the request body was read in full (an
 * early 401, 404 or 413, a timeout). Node then ends the socket once the answer is sent instead of
 * reading (and throwing away) the rest of the announced body to keep the connection alive: a client
 * that announces gigabytes cannot make the server read them.
 */
function closeIfUnread<T extends Record<string, string | string[]>>(req: IncomingMessage, headers: T): T {
  if (hasBody(req) && !req.complete) {
    lingerThenClose(req);
    return { ...headers, connection: "close" };
  }
  return headers;
}

/** How long a refused connection stays half-open after the answer, at most. */
const LINGER_MS = 1000;

/**
 * Closes a refused connection the careful way. When Node has sent the answer it ends the socket
 * (`destroySoon`); closing a socket with unread bytes makes the kernel send a reset, and a client that
 * is still writing its body may then lose the answer before reading it. So the socket is ended (the
 * client sees the answer, then end-of-stream) and destroyed a moment later (`LINGER_MS`, or sooner
 * when the client closes), and nothing more is read meanwhile: the request stays paused, so at most
 * a few kilobytes already in flight are taken in.
 */
function lingerThenClose(req: IncomingMessage): void {
  const socket = req.socket as Socket & { destroySoon?: () => void };
  if (!socket || Object.hasOwn(socket, "destroySoon")) return;
  // Node's http server calls `socket.destroySoon()` once an answer with `Connection: close` is sent.
  socket.destroySoon = () => {
    req.pause();
    if (socket.writable) socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once("close", () => clearTimeout(timer));
  };
}

async function writeResponse(req: IncomingMessage, response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, key) => {
    if (!HOP_BY_HOP.has(key) && key !== "set-cookie") headers[key] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  if (wantsClose(response.headers.get("connection"))) headers.connection = "close";
  const bodyless = req.method === "HEAD" || response.body === null;
  const text = bodyless ? undefined : takeResponseText(response);
  if (text !== undefined) withLength(headers, response.status, text);
  res.writeHead(response.status, closeIfUnread(req, headers));

  if (bodyless) {
    res.end();
    await response.body?.cancel().catch(() => undefined);
    return;
  }
  if (text !== undefined) {
    res.end(text);
    return;
  }
  const fast = takeNodeResponseBody(response);
  if (fast) {
    // A range of an open file (fsStore) is read here into reused buffers; other stores pipe.
    const taken = takeDownloadSource(fast.stream, takeFileRange);
    if (taken) await sendFileRange(res, taken.value, { download: fast.stream, ...taken });
    else await pipeline(fast.stream, res);
    fast.onSent();
    return;
  }
  await pipeline(Readable.fromWeb(response.body as NodeWebReadableStream<Uint8Array>), res);
}
