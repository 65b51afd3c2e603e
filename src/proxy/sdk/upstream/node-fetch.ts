/**
 * The `fetch` the proxy gives both SDKs' Streamable HTTP client transports (issue 24, the upstream
 * hop): the same requests on `node:http`/`node:https` over a keep-alive agent of the connection's
 * own, answered with a plain `Response` whose body is the Node response fed into a web stream as it
 * arrives. Undici's `fetch` built a `Request`, cloned headers and body, converted the string body to
 * a stream and wrote headers and body separately for every call, and it left one abort listener per
 * request on the transport's long-lived signal until the request was collected (thousands of them
 * under load, each new request scanning them): about a third of the proxy's CPU per call.
 *
 * Only what the transports send on their hot path takes this route: a request to an `http:` or
 * `https:` URL with `redirect: "manual"` (the transports follow redirects themselves) and a string
 * body or none. Anything else (redirects to follow, other bodies, a `Request` input: the auth flows)
 * goes to the global `fetch` as before.
 */
import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type RequestOptions,
} from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { urlToHttpOptions } from "node:url";

/** A parsed JSON value. */
type JsonValue = unknown;

/**
 * What {@link NodeFetch.post} needs of a signal: an `AbortSignal`, or a lighter object that behaves
 * like one for `"abort"` (a direct call's `CallStopper`, issue 43: no `AbortController` and
 * `EventTarget` per call).
 */
export interface StopSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/** A `fetch` over `node:http`, and the agents to close with the connection. */
export interface NodeFetch {
  fetch: typeof fetch;
  /**
   * POSTs `body` to `url` with exactly `headers` (a `content-length` is added) on the same agents,
   * without a web `Response`: a 200 JSON answer is read whole, a 200 SSE answer as far as
   * `oneEventAsJson` would (see {@link PostAnswer}). Rejects as this `fetch` does: with the abort
   * reason when `signal` aborts before the answer, with `fetch failed` when the request fails (never
   * sent twice).
   */
  post(url: URL, headers: Record<string, string>, body: string, signal: StopSignal): Promise<PostAnswer>;
  /**
   * Keeps `answer` for the next call of this `fetch` whose request carries the header
   * {@link HELD_ANSWER_HEADER} with the token returned: that call sends nothing and is answered with
   * it (its body must be `body`). The header is removed from any request that carries it.
   */
  hold(body: string, answer: HeldAnswer): string;
  /** Drops a held answer that no `fetch` took (a response is destroyed). */
  release(token: string): void;
  /**
   * Keeps `answer` for the next call of this `fetch` whose body is exactly `body` (a request
   * carrying its own JSON-RPC id, for a client that sets no per-request headers: SDK v1's): that call
   * sends nothing and is answered with it. `drop` drops it (a response no one took is destroyed);
   * after `guard`, every other POST fails instead of going out until it is dropped.
   */
  holdBody(body: string, answer: HeldAnswer): { guard(): void; drop(): void };
  /** Closes the kept-alive sockets (requests in progress end). */
  close(): void;
}

/**
 * The request header naming a held answer (see {@link NodeFetch.hold}); it never leaves the process.
 */
export const HELD_ANSWER_HEADER = "x-mcp-file-bridge-held-answer";

/**
 * What a request sent with {@link NodeFetch.post} got, to hand to a `fetch` caller later: the
 * failure it rejects with, or the `Response` it resolves with (made once; `onDone` runs when its body
 * is over), which `discard` destroys when no one takes it.
 */
export type HeldAnswer =
  | { error: unknown }
  | { response(onDone: () => void): Response; discard(reason?: unknown): void };

/** What {@link NodeFetch.post} answers. */
export interface PostAnswer {
  /**
   * The JSON text of a 200 answer: the whole `application/json` body, or the data of a one-event SSE
   * body that `oneEventAsJson` turns into JSON. Absent for every other answer.
   */
  json?: string;
  /** `json` parsed, when it was parsed already (a one-event SSE answer): not parsed again. */
  message?: JsonValue;
  /** The `Response` this `fetch` would have resolved with, for a caller that takes it from here. */
  held: Extract<HeldAnswer, { response: unknown }>;
  /** The answer's headers. */
  headers: IncomingMessage["headers"];
}

/** Options of {@link nodeFetch}. */
export interface NodeFetchOptions {
  /**
   * Answer a POST whose SSE answer is complete in its first turn and is one JSON-RPC response (no
   * event id, no retry, at most {@link ONE_EVENT_MAX} bytes) as the `application/json` answer the
   * protocol also allows, so the client skips its SSE pipeline (web streams, an event parser) for it.
   * Only for a client that treats both answers alike: `true` for every POST (SDK v1's transport), or
   * a test of the POST's body for the ones it does (SDK v2's, where a `subscriptions/listen` stream's
   * end means something of its own). @default false
   */
  oneEventAsJson?: boolean | ((body: string) => boolean);
}

/**
 * `url` as the options `node:http` makes of it, kept for the last URL (issue 43: a `URL` given to
 * `request` is turned into them on every call; a connection's direct calls all go to one URL).
 */
function targetOf(last: { href: string; options: RequestOptions } | undefined, url: URL) {
  const href = url.href;
  if (last?.href === href) return last;
  const { protocol, hostname, port, path, auth } = urlToHttpOptions(url);
  const options: RequestOptions =
    auth === undefined ? { protocol, hostname, port, path } : { protocol, hostname, port, path, auth };
  return { href, options };
}

/** JSON-RPC requests that change nothing on the server, so a repeat is harmless. */
const READ_ONLY_METHODS = new Set([
  "ping",
  "tools/list",
  "prompts/list",
  "prompts/get",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "completion/complete",
  "server/discover",
]);

/**
 * Whether a request may be sent again after its socket was reset: not a POST, or a POST whose
 * JSON-RPC messages are all notifications, responses, or read-only requests. A `tools/call` (or
 * any request that may act) is never repeated: the server may have run it before it went away.
 */
export function safeToRepeat(method: string, body: string | undefined): boolean {
  if (method !== "POST") return method === "GET" || method === "HEAD" || method === "DELETE";
  if (body === undefined) return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return false;
  }
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  return messages.every((message) => {
    if (typeof message !== "object" || message === null) return false;
    const { id, method: name } = message as { id?: unknown; method?: unknown };
    if (typeof name !== "string") return true; // a response
    return id === undefined || READ_ONLY_METHODS.has(name);
  });
}

/** The largest one-event SSE answer turned into JSON (larger ones stream as they are). */
const ONE_EVENT_MAX = 64 * 1024;

/**
 * The data of an SSE text that is exactly one `message` event carrying a JSON-RPC response (no id,
 * no retry, no comment, LF line ends), or `undefined`.
 */
export function oneResponseEvent(text: string): string | undefined {
  return responseEvent(text)?.data;
}

/** {@link oneResponseEvent}'s data, and the message it parsed (each answer is parsed once). */
function responseEvent(text: string): { data: string; message: JsonValue } | undefined {
  if (!text.endsWith("\n\n") || text.includes("\r")) return undefined;
  const data: string[] = [];
  for (const line of text.slice(0, -2).split("\n")) {
    if (line === "event: message" || line === "event:message") continue;
    if (!line.startsWith("data:")) return undefined;
    data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
  }
  if (data.length === 0) return undefined;
  const joined = data.join("\n");
  try {
    const message = JSON.parse(joined) as Record<string, unknown> | null;
    const response =
      message !== null &&
      typeof message === "object" &&
      "id" in message &&
      ("result" in message || "error" in message);
    return response ? { data: joined, message: message as JsonValue } : undefined;
  } catch {
    return undefined;
  }
}

/** Statuses whose response has no body (`new Response` refuses one). */
const NULL_BODY = new Set([101, 204, 205, 304]);

/** The request headers as a plain object (a `Headers`, pairs or a record). */
function plainHeaders(headers: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers === undefined) return out;
  if (headers instanceof Headers) {
    headers.forEach((value, name) => {
      out[name] = value;
    });
  } else if (Array.isArray(headers))
    for (const [name, value] of headers) out[name.toLowerCase()] = value as string;
  else for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value;
  return out;
}

/** Whether `init` is a request this fetch serves itself (see the module comment). */
function servable(input: unknown, init: RequestInit | undefined): input is URL | string {
  if (!(input instanceof URL) && typeof input !== "string") return false;
  if (init?.redirect !== "manual") return false;
  return init.body === undefined || init.body === null || typeof init.body === "string";
}

/** The error undici rejects a failed fetch with (the SDKs and our logs name its cause). */
function fetchFailed(cause: unknown): TypeError {
  return new TypeError("fetch failed", { cause });
}

function isEventStream(res: IncomingMessage): boolean {
  return /^text\/event-stream\s*(;|$)/i.test(res.headers["content-type"] ?? "");
}

function isJson(res: IncomingMessage): boolean {
  return /^application\/json\s*(;|$)/i.test(res.headers["content-type"] ?? "");
}

function abortReason(signal: StopSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

function responseInit(res: IncomingMessage): ResponseInit & { status: number; headers: Headers } {
  const headers = new Headers();
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
  return { status: res.statusCode ?? 502, statusText: res.statusMessage ?? "", headers };
}

/**
 * A web `Response` over a Node response: its body streams as the chunks arrive, with back-pressure,
 * after `prefix` (chunks already read off it, the response then paused).
 */
function webResponse(
  res: IncomingMessage,
  method: string,
  onDone: () => void,
  prefix: Buffer[] = [],
  failedWith?: unknown,
): Response {
  const init = responseInit(res);
  const { status } = init;
  if (NULL_BODY.has(status) || method === "HEAD") {
    res.resume();
    res.once("end", onDone);
    return new Response(null, init);
  }
  let finished = false;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of prefix)
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
      const fail = (cause: unknown) => {
        if (finished) return;
        finished = true;
        onDone();
        controller.error(new TypeError("terminated", { cause }));
      };
      res.on("data", (chunk: Buffer) => {
        if (finished) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
        if ((controller.desiredSize ?? 1) <= 0) res.pause();
      });
      res.once("end", () => {
        if (finished) return;
        finished = true;
        onDone();
        controller.close();
      });
      res.once("error", fail);
      // closed before its end (the socket went away, or the request was aborted): the stream fails
      if (res.destroyed) fail(failedWith ?? new Error("other side closed"));
      else res.once("close", () => fail(new Error("other side closed")));
    },
    pull() {
      res.resume();
    },
    cancel() {
      finished = true;
      onDone();
      res.destroy();
    },
  });
  return new Response(body, init);
}

/** Makes the `Response` of an answer, once, with the `onDone` of the `fetch` that hands it out. */
type MakeResponse = (onDone: () => void) => Response;

/**
 * The answer to a POST whose SSE body may be one JSON-RPC response: its first chunks are read, and
 * when the body ends in the same turn as one response event it becomes an `application/json` answer
 * (`data`: the event's JSON); otherwise the stream goes on as it is (what was read first, then the
 * rest as it arrives).
 */
function oneEventOrStream(
  res: IncomingMessage,
  answer: (make: MakeResponse, data?: string, message?: JsonValue) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let turn: NodeJS.Immediate | undefined;
  let settled = false;
  const settle = (ended: boolean) => {
    if (settled) return;
    settled = true;
    if (turn) clearImmediate(turn);
    res.off("data", onData);
    res.off("end", onEnd);
    res.off("close", onClose);
    const event = ended ? responseEvent(Buffer.concat(chunks, size).toString("utf8")) : undefined;
    if (event !== undefined) {
      const { data } = event;
      const make = (onDone: () => void) => {
        onDone();
        const init = responseInit(res);
        init.headers.set("content-type", "application/json");
        init.headers.delete("content-length");
        return new Response(data, init);
      };
      answer(make, data, event.message);
      return;
    }
    if (ended) {
      answer((onDone) => {
        onDone();
        return new Response(Buffer.concat(chunks, size), responseInit(res));
      });
      return;
    }
    res.pause();
    answer((onDone) => webResponse(res, "POST", onDone, chunks));
  };
  const onData = (chunk: Buffer) => {
    chunks.push(chunk);
    size += chunk.length;
    if (size > ONE_EVENT_MAX) settle(false);
    else turn ??= setImmediate(() => settle(false));
  };
  const onEnd = () => settle(true);
  const onClose = () => settle(false);
  res.on("data", onData);
  res.once("end", onEnd);
  res.once("close", onClose);
}

/**
 * A 200 JSON answer read to its end (`text`: the body); a body cut before its end is answered as
 * the stream it was, failing after what arrived.
 */
function wholeBody(res: IncomingMessage, answer: (make: MakeResponse, text?: string) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let failure: unknown;
  const settle = (ended: boolean) => {
    res.off("data", onData);
    res.off("end", onEnd);
    res.off("close", onClose);
    res.off("error", onError);
    if (!ended) {
      // as the stream would have failed had it been handed out at once
      answer((onDone) => webResponse(res, "POST", onDone, chunks, failure));
      return;
    }
    const body = Buffer.concat(chunks, size);
    answer((onDone) => {
      onDone();
      return new Response(body, responseInit(res));
    }, body.toString("utf8"));
  };
  const onData = (chunk: Buffer) => {
    chunks.push(chunk);
    size += chunk.length;
  };
  const onEnd = () => settle(true);
  const onClose = () => settle(false);
  const onError = (error: unknown) => {
    failure = error;
  };
  res.on("data", onData);
  res.once("end", onEnd);
  res.once("close", onClose);
  res.once("error", onError);
}

/**
 * Makes the `fetch` of one upstream connection (its own keep-alive agents, closed with it).
 *
 * @example
 * ```ts
 * const http = nodeFetch();
 * const transport = new StreamableHTTPClientTransport(url, { fetch: http.fetch });
 * // … later
 * http.close();
 * ```
 */
export function nodeFetch(options: NodeFetchOptions = {}): NodeFetch {
  const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

  function send(url: URL, init: RequestInit, retried: boolean): Promise<Response> {
    const signal = init.signal ?? undefined;
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const method = (init.method ?? "GET").toUpperCase();
    const headers = plainHeaders(init.headers);
    const text = typeof init.body === "string" ? init.body : undefined;
    const body = text === undefined ? undefined : Buffer.from(text);
    const oneEvent =
      method === "POST" &&
      (typeof options.oneEventAsJson === "function"
        ? text !== undefined && options.oneEventAsJson(text)
        : options.oneEventAsJson === true);
    if (body !== undefined) headers["content-length"] = String(body.length);
    const secure = url.protocol === "https:";
    return new Promise<Response>((resolve, reject) => {
      let req: ClientRequest;
      let answered = false;
      let bodyStream: IncomingMessage | undefined;
      const onAbort = () => {
        const reason = abortReason(signal as AbortSignal);
        if (!answered) reject(reason);
        req.destroy();
        bodyStream?.destroy(reason instanceof Error ? reason : undefined);
      };
      const done = () => signal?.removeEventListener("abort", onAbort);
      const requestOptions = { method, headers, agent: secure ? agents.https : agents.http };
      req = (secure ? httpsRequest : httpRequest)(url, requestOptions, (res) => {
        answered = true;
        bodyStream = res;
        try {
          if (oneEvent && res.statusCode === 200 && isEventStream(res)) {
            oneEventOrStream(res, (make) => resolve(make(done)));
            return;
          }
          resolve(webResponse(res, method, done));
        } catch (error) {
          done();
          res.destroy();
          reject(fetchFailed(error));
        }
      });
      req.once("error", (error: NodeJS.ErrnoException) => {
        if (answered) return;
        done();
        if (signal?.aborted) return;
        // A kept-alive socket reset as this request went out: most often the server had closed it
        // idle and never saw the request, but a server that crashed while handling it ends the same
        // way. So only a request that is safe to send twice goes once more, on a fresh socket.
        if (req.reusedSocket && error.code === "ECONNRESET" && !retried && safeToRepeat(method, text)) {
          send(url, init, true).then(resolve, reject);
          return;
        }
        reject(fetchFailed(error));
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      req.end(body);
    });
  }

  /** Where the last POST went (see {@link targetOf}). */
  let lastTarget: { href: string; options: RequestOptions } | undefined;

  function post(
    url: URL,
    headers: Record<string, string>,
    text: string,
    signal: StopSignal,
  ): Promise<PostAnswer> {
    if (signal.aborted) return Promise.reject(abortReason(signal));
    const body = Buffer.from(text);
    headers["content-length"] = String(body.length);
    const oneEvent =
      typeof options.oneEventAsJson === "function"
        ? options.oneEventAsJson(text)
        : options.oneEventAsJson === true;
    const secure = url.protocol === "https:";
    const sent = targetOf(lastTarget, url);
    lastTarget = sent;
    return new Promise<PostAnswer>((resolve, reject) => {
      let req: ClientRequest;
      let settled = false;
      let response: IncomingMessage | undefined;
      const onAbort = () => {
        const reason = abortReason(signal);
        if (!settled) reject(reason);
        settled = true;
        req.destroy();
        response?.destroy(reason instanceof Error ? reason : undefined);
      };
      const answer = (res: IncomingMessage, make: MakeResponse, json?: string, message?: JsonValue) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener("abort", onAbort);
        let made = false;
        const held = {
          response(onDone: () => void) {
            made = true;
            return make(onDone);
          },
          discard(reason?: unknown) {
            if (!made) res.destroy(reason instanceof Error ? reason : undefined);
          },
        };
        const headers = res.headers;
        if (json === undefined) resolve({ held, headers });
        else resolve(message === undefined ? { json, held, headers } : { json, message, held, headers });
      };
      const requestOptions = {
        ...sent.options,
        method: "POST",
        headers,
        agent: secure ? agents.https : agents.http,
      };
      req = (secure ? httpsRequest : httpRequest)(requestOptions, (res) => {
        response = res;
        if (res.statusCode === 200 && oneEvent && isEventStream(res)) {
          oneEventOrStream(res, (make, data, message) => answer(res, make, data, message));
        } else if (res.statusCode === 200 && isJson(res)) {
          wholeBody(res, (make, json) => answer(res, make, json));
        } else {
          res.pause();
          answer(res, (onDone) => webResponse(res, "POST", onDone));
        }
      });
      req.once("error", (error: NodeJS.ErrnoException) => {
        if (response || settled) return;
        settled = true;
        signal.removeEventListener("abort", onAbort);
        reject(fetchFailed(error));
      });
      signal.addEventListener("abort", onAbort, { once: true });
      req.end(body);
    });
  }

  /** The held-answer token a request carries, in whatever form its headers come. */
  function heldToken(headers: RequestInit["headers"]): string | undefined {
    if (headers === undefined) return undefined;
    if (headers instanceof Headers) return headers.get(HELD_ANSWER_HEADER) ?? undefined;
    const entries = Array.isArray(headers) ? headers : Object.entries(headers);
    for (const [name, value] of entries) {
      if (name?.toLowerCase() === HELD_ANSWER_HEADER) return String(value);
    }
    return undefined;
  }

  /** Answers kept by `hold`, by token. */
  const held = new Map<string, { body: string; answer: HeldAnswer }>();
  let tokens = 0;

  /** A call carrying a held answer's token: answered with it, nothing sent. */
  function heldAnswer(token: string, init: RequestInit): Promise<Response> {
    const entry = held.get(token) as { body: string; answer: HeldAnswer };
    held.delete(token);
    const { answer } = entry;
    const signal = init.signal ?? undefined;
    if (init.body !== entry.body || signal?.aborted) {
      if ("discard" in answer) answer.discard();
      return Promise.reject(
        signal?.aborted ? abortReason(signal) : new Error("a held answer's request was not the one sent"),
      );
    }
    if ("error" in answer) return Promise.reject(answer.error);
    const onAbort = () => answer.discard(abortReason(signal as AbortSignal));
    signal?.addEventListener("abort", onAbort, { once: true });
    return Promise.resolve(answer.response(() => signal?.removeEventListener("abort", onAbort)));
  }

  /** Answers kept by `holdBody`, by request body; `guarded`: how many of them refuse other POSTs. */
  const heldBodies = new Map<string, HeldAnswer>();
  let guarded = 0;

  /** A call whose body is a held one: answered with it, nothing sent. */
  function heldBodyAnswer(answer: HeldAnswer, init: RequestInit): Promise<Response> {
    const signal = init.signal ?? undefined;
    if (signal?.aborted) {
      if ("discard" in answer) answer.discard();
      return Promise.reject(abortReason(signal));
    }
    if ("error" in answer) return Promise.reject(answer.error);
    const onAbort = () => answer.discard(abortReason(signal as AbortSignal));
    signal?.addEventListener("abort", onAbort, { once: true });
    return Promise.resolve(answer.response(() => signal?.removeEventListener("abort", onAbort)));
  }

  const nodeHttpFetch = ((input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    if (heldBodies.size > 0 && typeof init?.body === "string") {
      const answer = heldBodies.get(init.body);
      if (answer !== undefined) {
        heldBodies.delete(init.body);
        return heldBodyAnswer(answer, init);
      }
    }
    if (guarded > 0 && (init?.method ?? "GET").toUpperCase() === "POST") {
      return Promise.reject(new Error("a held answer's request was not the one sent"));
    }
    const token = heldToken(init?.headers);
    if (token !== undefined) {
      // Its request was sent already (a `tools/call` is never sent twice): a token no longer held
      // (used, released) fails the call instead of sending it again.
      if (held.has(token)) return heldAnswer(token, init as RequestInit);
      return Promise.reject(new Error("a held answer's request was already answered"));
    }
    if (!servable(input, init)) return fetch(input, init);
    const url = input instanceof URL ? input : new URL(input);
    if (url.protocol !== "http:" && url.protocol !== "https:") return fetch(input, init);
    return send(url, init as RequestInit, false);
  }) as typeof fetch;

  return {
    fetch: nodeHttpFetch,
    post,
    hold(body, answer) {
      const token = String(++tokens);
      held.set(token, { body, answer });
      return token;
    },
    release(token) {
      const entry = held.get(token);
      if (!entry) return;
      held.delete(token);
      if ("discard" in entry.answer) entry.answer.discard();
    },
    holdBody(body, answer) {
      heldBodies.set(body, answer);
      let guarding = false;
      let dropped = false;
      return {
        guard() {
          if (dropped || guarding) return;
          guarding = true;
          guarded++;
        },
        drop() {
          if (dropped) return;
          dropped = true;
          if (guarding) guarded--;
          if (heldBodies.get(body) !== answer) return;
          heldBodies.delete(body);
          if ("discard" in answer) answer.discard();
        },
      };
    },
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
