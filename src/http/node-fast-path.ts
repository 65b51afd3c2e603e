import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import type { PlainAnswer, RequestView } from "./request-view.js";

/**
 * A private channel between `createFileRoutes()` and the `./node` adapter: the adapter may hand the
 * routes the raw `IncomingMessage` (so uploads skip the web-stream round trip), and the routes may
 * hand the adapter the store's Node read stream (so downloads pipe straight into the socket). Web
 * callers never see any of this: the `Request`/`Response` objects stay complete and usable.
 */

/** A download body the Node adapter may pipe directly. */
export interface NodeResponseBody {
  /** The store's read stream. */
  readonly stream: Readable;
  /** Called once the bytes were handed to the socket in full (`res` finished). */
  readonly onSent: () => void;
  /** Called when the adapter takes the stream, so the web body never fires `onSent` itself. */
  readonly claim: () => void;
}

/**
 * A download answer before it becomes a `Response`: a status, headers and a text (empty for HEAD, a
 * 304, or a body that streams), and for a `GET` that sends bytes, the store's stream.
 */
export interface DownloadAnswer extends PlainAnswer {
  readonly body?: DownloadBody;
}

/** The bytes of a download: the store's stream (behind its watchdog), their count, and the end. */
export interface DownloadBody {
  readonly stream: Readable;
  readonly length: number;
  /** Called once every byte was sent (it calls `onDownload`); later calls do nothing. */
  readonly finish: () => void;
}

/**
 * A handler's native answer to a `GET` or `HEAD` through the Node adapter: a download answer, or
 * `undefined` when the request is not one it serves this way (the adapter then takes the web path).
 */
export type NodeDownloadAnswer = (view: RequestView) => Promise<DownloadAnswer | undefined>;

const requestBodies = new WeakMap<Request, IncomingMessage>();
const downloadAnswers = new WeakMap<object, NodeDownloadAnswer>();
/** A handler's answer to a method no web `Request` can carry, or its promise (the routes' code loads). */
type ForbiddenMethodAnswer = (pathname: string) => Response | undefined | Promise<Response | undefined>;

const forbiddenMethodAnswers = new WeakMap<object, ForbiddenMethodAnswer>();
const responseBodies = new WeakMap<Response, NodeResponseBody>();
const uploadAnswers = new WeakMap<object, NodeUploadAnswer>();

/**
 * A handler's native answer to a request with a body through the Node adapter (a ticket `PUT`, a
 * tus request of any method): a plain answer, or `undefined` when the request is not one it serves
 * this way (the adapter then takes the web path;
 * nothing of the request was read).
 */
export type NodeUploadAnswer = (
  view: RequestView,
  body: () => Readable | null,
) => Promise<PlainAnswer | undefined>;

/** Registers, for a handler made by `createFileRoutes()`, its native `GET`/`HEAD` download answer. */
export function setNodeDownloadAnswer(handler: object, answer: NodeDownloadAnswer): void {
  downloadAnswers.set(handler, answer);
}

/** A registered handler's native download answer; `undefined` when it has none. */
export function nodeDownloadAnswer(handler: object): NodeDownloadAnswer | undefined {
  return downloadAnswers.get(handler);
}

/** Registers, for a handler made by `createFileRoutes()`, its native upload answer. */
export function setNodeUploadAnswer(handler: object, answer: NodeUploadAnswer): void {
  uploadAnswers.set(handler, answer);
}

/** A registered handler's native upload answer; `undefined` when it has none. */
export function nodeUploadAnswer(handler: object): NodeUploadAnswer | undefined {
  return uploadAnswers.get(handler);
}

/**
 * Registers, for a handler made by `createFileRoutes()`, its answer to a method no web `Request` can
 * carry (`TRACE`): a 405 with `Allow` for its own paths (a promise of it while the routes' code loads
 * at their first request), `undefined` for other paths.
 */
export function setForbiddenMethodAnswer(handler: object, answer: ForbiddenMethodAnswer): void {
  forbiddenMethodAnswers.set(handler, answer);
}

/**
 * A registered handler's answer to a method no web `Request` can carry; `null` when the handler did
 * not register one (it is not from `createFileRoutes()`).
 */
export function forbiddenMethodAnswer(
  handler: object,
  pathname: string,
): Response | undefined | null | Promise<Response | undefined> {
  const answer = forbiddenMethodAnswers.get(handler);
  return answer ? answer(pathname) : null;
}

/** Registers the Node request a web `Request` was made from. */
export function setNodeRequestBody(request: Request, incoming: IncomingMessage): void {
  requestBodies.set(request, incoming);
}

/**
 * The request body as a Node stream: the original `IncomingMessage` when the Node adapter made the
 * request and its web body was not touched, else a conversion of `request.body`.
 */
export function requestBodyAsNode(request: Request): Readable | null {
  const incoming = requestBodies.get(request);
  if (incoming && !request.bodyUsed && !request.body?.locked) {
    requestBodies.delete(request);
    return incoming;
  }
  if (!request.body) return null;
  return Readable.fromWeb(request.body as import("node:stream/web").ReadableStream<Uint8Array>);
}

/**
 * The request body as its own web stream, or `null` when it has none or when the Node adapter made
 * the request (its `IncomingMessage` is the body there: see {@link requestBodyAsNode}).
 */
export function requestBodyAsWeb(request: Request): ReadableStream<Uint8Array> | null {
  if (requestBodies.has(request)) return null;
  return request.body;
}

/** Registers a download body the Node adapter may take over. */
export function setNodeResponseBody(response: Response, body: NodeResponseBody): void {
  responseBodies.set(response, body);
}

/** Takes over a response's Node body, if it has one and its web body was not read. */
export function takeNodeResponseBody(response: Response): NodeResponseBody | null {
  const body = responseBodies.get(response);
  if (!body || response.bodyUsed || response.body?.locked) return null;
  responseBodies.delete(response);
  body.claim();
  return body;
}

/**
 * A web stream over a Node readable that reads only when pulled (high-water mark 0), so nothing is
 * read until a consumer asks, and `onEnd` runs only once the consumer pulled the last chunk.
 */
export function lazyWebStream(
  source: Readable,
  hooks: { onEnd?: (bytes: number) => void } = {},
): ReadableStream<Uint8Array> {
  let iterator: AsyncIterator<Buffer> | undefined;
  let bytes = 0;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        // A source that fails while nobody pulls (a download timed out) fails the web stream too.
        source.once("error", (error) => {
          try {
            controller.error(error);
          } catch {
            // already closed or errored
          }
        });
      },
      async pull(controller) {
        iterator ??= source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
        const next = await iterator.next();
        if (next.done) {
          controller.close();
          hooks.onEnd?.(bytes);
          return;
        }
        const chunk = next.value;
        bytes += chunk.byteLength;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      },
      cancel(reason) {
        source.destroy(reason instanceof Error ? reason : undefined);
      },
    },
    { highWaterMark: 0 },
  );
}
