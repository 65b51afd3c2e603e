/**
 * The Node side of the downstream hop on its hot path (issue 24): a JSON-RPC POST whose body the
 * endpoint already parsed goes to the SDK's web-standard transport as a body-less `Request` (the
 * transport takes the parsed body as `parsedBody`), and the `Response` it returns is written to `res`
 * here. SDK v1's Node transport did both through `@hono/node-server`, which flushed the headers in a
 * write of their own and wrote each chunk, then the end, apart: three socket writes for a call's
 * one-event SSE answer. Here the chunks that are ready together go out together, so a one-event
 * answer is one write (headers, event, end), while a stream that stays open (progress, then the
 * result later) still has each event on the wire as soon as it is enqueued.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";

/** SDK v1's default bound on a request body (`DEFAULT_MAX_REQUEST_BODY_SIZE`, 4 MiB; v2's too). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
const JSON_TYPE = /^application\/json\s*(;|$)/i;

/**
 * A POST body read and parsed here: the message; or the answer the SDK would have given, with the
 * text when it was not JSON.
 */
export type ReadBody = { parsed: unknown } | { status: number; code: number; message: string; text?: string };

/**
 * Reads a JSON POST body on Node's own stream and parses it, so the SDK gets it as `parsedBody` and
 * never turns the request body into a web stream. Only where the SDK would read the body itself: a
 * POST that accepts both reply types, with a JSON content type and no declared length over the limit
 * (`needLength`: a declared length at all); anything else (`undefined`) goes to the SDK as it is.
 * Too large and invalid JSON get SDK v1's own answers.
 */
export async function readJsonBody(req: IncomingMessage, needLength = false): Promise<ReadBody | undefined> {
  const accept = req.headers.accept ?? "";
  const length = req.headers["content-length"];
  if (
    req.method !== "POST" ||
    !JSON_TYPE.test(req.headers["content-type"] ?? "") ||
    !accept.includes("application/json") ||
    !accept.includes("text/event-stream") ||
    Number(length) > MAX_BODY_BYTES ||
    (needLength && length === undefined)
  ) {
    return undefined;
  }
  const body = await new Promise<Buffer | undefined>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
      else {
        // Over the limit: stop keeping it (the rest is drained, so the answer still gets through).
        req.off("data", onData);
        req.resume();
        resolve(undefined);
      }
    };
    req.on("data", onData);
    req.once("end", () => resolve(Buffer.concat(chunks, size)));
    req.once("error", reject);
  });
  if (body === undefined) {
    const message = `Payload Too Large: Request body must not exceed ${MAX_BODY_BYTES} bytes`;
    return { status: 413, code: -32000, message };
  }
  const text = body.toString("utf8");
  try {
    return { parsed: JSON.parse(text) };
  } catch {
    return { status: 400, code: -32700, message: "Parse error: Invalid JSON", text };
  }
}

/** Headers that describe a connection, not a message: Node sets its own. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection"]);

/**
 * A web `Request` with the Node request's method, URL and headers, and its body only when `withBody`
 * (`true`: the Node stream, for a POST whose body the endpoint did not read; a string: the body read
 * already): the SDK's web-standard transport reads nothing else of a request it is given the parsed
 * body of. `undefined` when no `Request` can carry it (a method the Fetch standard forbids).
 */
export function webRequest(
  req: IncomingMessage,
  withBody: boolean | string,
  signal?: AbortSignal,
): Request | undefined {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
  const url = `http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`;
  const method = req.method ?? "GET";
  const init: RequestInit = signal ? { method, headers, signal } : { method, headers };
  try {
    if (withBody === false || method === "GET" || method === "HEAD") return new Request(url, init);
    if (typeof withBody === "string") return new Request(url, { ...init, body: withBody });
    const body = Readable.toWeb(req) as ReadableStream<Uint8Array>;
    return new Request(url, { ...init, body, duplex: "half" } as RequestInit);
  } catch {
    return undefined;
  }
}

/** The response's headers as `writeHead` takes them (without hop-by-hop ones). */
function nodeHeaders(response: Response): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, key) => {
    if (!HOP_BY_HOP.has(key) && key !== "set-cookie") headers[key] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  return headers;
}

/**
 * How long the headers of a streamed answer wait for its first event, so they go out together (a
 * call's result usually comes within this; a longer call gets its headers at this point).
 */
const HEAD_WAIT_MS = 10;

/**
 * Writes a web `Response` to `res`, resolving once it is sent (or the client went away, which cancels
 * the body). Chunks that arrive in the same turn are held until the next one (`setImmediate`) and
 * written together; a body that ends before anything was written goes out with a `content-length`
 * in one write. The headers wait for the first chunk (at most {@link HEAD_WAIT_MS}) unless
 * `headAtOnce` (a long-lived stream such as a GET's).
 */
export async function writeWebResponse(
  response: Response,
  res: ServerResponse,
  headAtOnce = false,
): Promise<void> {
  const headers = nodeHeaders(response);
  if (response.body === null) {
    res.writeHead(response.status, headers);
    res.end();
    return;
  }
  const reader = response.body.getReader();
  let gone = false;
  const onClose = () => {
    if (res.writableFinished) return;
    gone = true;
    void reader.cancel().catch(() => undefined);
  };
  res.once("close", onClose);
  const held: Uint8Array[] = [];
  let headSent = false;
  const sendHead = () => {
    if (headSent || gone) return;
    headSent = true;
    res.writeHead(response.status, headers);
    if (held.length === 0) res.flushHeaders();
  };
  const headTimer = headAtOnce ? undefined : setTimeout(sendHead, HEAD_WAIT_MS);
  if (headAtOnce) sendHead();
  let flushing: NodeJS.Immediate | undefined;
  const flush = () => {
    flushing = undefined;
    if (held.length === 0 || gone) return;
    sendHead();
    res.write(held.length === 1 ? (held[0] as Uint8Array) : Buffer.concat(held));
    held.length = 0;
  };
  const settle = () => {
    clearTimeout(headTimer);
    if (flushing) clearImmediate(flushing);
    res.off("close", onClose);
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      held.push(value);
      flushing ??= setImmediate(flush);
    }
  } catch (error) {
    settle();
    if (!gone) res.destroy(error instanceof Error ? error : undefined);
    return;
  }
  settle();
  if (gone) return;
  const rest = held.length === 0 ? undefined : held.length === 1 ? held[0] : Buffer.concat(held);
  if (!headSent) {
    headSent = true;
    res.writeHead(response.status, { ...headers, "content-length": String(rest?.length ?? 0) });
  }
  res.end(rest);
}
