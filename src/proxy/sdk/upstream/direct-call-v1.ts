/**
 * A plain `tools/call` on a 2025 Streamable HTTP upstream without the SDK v1 client's request
 * machinery (issue 43, the proxy hop): its `Protocol` (a promise, handlers, timers per request), the
 * transport's web `Request`/`Response` and `Headers`, and zod on the JSON-RPC message and the result
 * cost a fifth of the v1 proxy's CPU per pass-through call; a plain node:http forwarder pays none of it.
 * The SDK v2 counterpart is `direct-call.ts`; this one follows it.
 *
 * The request is the one the client would send: the next id of its counter, the headers of its
 * transport (`_commonHeaders`: the session id, the protocol version, the target's headers; then
 * `content-type` and `accept`), on the connection's own agents ({@link NodeFetch.post}). Its timeout
 * and the caller's abort end it as they end the client's request (a `notifications/cancelled` goes
 * to the upstream, the 2025 cancellation), and so does the client closing. Two answers are settled
 * here: a 200 JSON response (or a one-event SSE one) carrying the request's id and either an error
 * (→ the SDK's `McpError.fromError`) or a result object without `_meta` (the SDK's schemas pass such
 * a result through as a shallow copy, its members untouched; see {@link plainAnswerV1}). **Every
 * other outcome** (a failed request, an HTTP error, an SSE stream, a result with `_meta`, a message
 * that is not plain JSON-RPC…) is handed to the client as if it had sent the request itself: its
 * `request()` runs with the same id and its `fetch` is answered with what arrived
 * ({@link NodeFetch.holdBody}), so the SDK decides what it means. Nothing is sent twice.
 *
 * The client's and transport's members used here are internal to the SDK; `directCallsPossibleV1`
 * checks that they are there and the call goes the SDK way when they are not.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod/v4";
import type { JsonObject } from "../../types.js";
import {
  CallStopper,
  callHeaders,
  type HeaderSource,
  isObject,
  type PlainAnswer,
  plainHeaders,
  plainJsonRpcAnswer,
  requestWithId,
} from "./direct-call-shared.js";
import type { HeldAnswer, NodeFetch } from "./node-fetch.js";

/** Accepts any result as it is (the SDK would otherwise drop unknown fields). */
export const RAW_RESULT = z.looseObject({});

/** The SDK v1 client's members a direct call reads and moves (its request ids, its options). */
interface ClientInternals {
  _requestMessageId: number;
  _options?: { enforceStrictCapabilities?: boolean };
}

/** The SDK v1 transport's members a direct call reads and sets. */
interface TransportInternals extends HeaderSource {
  _abortController?: AbortController;
  _fetch?: unknown;
  _authProvider?: unknown;
  _sessionId?: string;
  send(message: unknown): Promise<void>;
  onerror?: (error: Error) => void;
}

/** Set once a hand-over found the SDK client taking request ids later than `request()` returns. */
let idsTakenLater = false;

/** The options of one direct call: those `UpstreamConnection` gives `client.request`. */
export interface DirectCallV1Options {
  signal?: AbortSignal;
  /** In milliseconds. */
  timeout: number;
}

/**
 * Whether the SDK v1 client and transport offer what a direct call uses, and `http` is the fetch of
 * that transport (so a held answer reaches it). Not with an auth provider (its flows answer a 401).
 */
export function directCallsPossibleV1(client: Client, http: NodeFetch): boolean {
  if (idsTakenLater || !(client.transport instanceof StreamableHTTPClientTransport)) return false;
  const transport = client.transport as unknown as TransportInternals;
  const internals = client as unknown as Partial<ClientInternals>;
  return (
    transport._fetch === http.fetch &&
    transport._authProvider === undefined &&
    typeof transport._commonHeaders === "function" &&
    transport._abortController?.signal instanceof AbortSignal &&
    !transport._abortController.signal.aborted &&
    typeof internals._requestMessageId === "number" &&
    internals._options?.enforceStrictCapabilities !== true
  );
}

/**
 * The answer in `text` (or `parsed`, its JSON parsed already) if it is a plain response to request
 * `id`: exactly `jsonrpc`, `id` and
 * `result` (an object without `_meta`: what the SDK v1 schemas return as a shallow copy) or `error`
 * (an integer `code`, a string `message`, any `data`).
 */
export function plainAnswerV1(text: string, id: number, parsed?: unknown): PlainAnswer | undefined {
  return plainJsonRpcAnswer(text, id, parsed, plainResultV1);
}

/** A result object without `_meta`: what the SDK v1 schemas return as a shallow copy. */
function plainResultV1(result: unknown): result is JsonObject {
  return isObject(result) && !Object.hasOwn(result, "_meta") && !Object.hasOwn(result, "__proto__");
}

/**
 * Sends `tools/call` with `params` on `client`'s connection (see the module comment) and resolves
 * with what `await client.request(..., RAW_RESULT)` would, or rejects with what it would reject
 * with. `client` must be a connected SDK v1 client for which {@link directCallsPossibleV1}.
 */
export async function directToolCallV1(
  client: Client,
  http: NodeFetch,
  url: URL,
  params: JsonObject,
  options: DirectCallV1Options,
): Promise<JsonObject> {
  const internals = client as unknown as ClientInternals;
  const transport = client.transport as unknown as TransportInternals;
  const { signal, timeout } = options;
  signal?.throwIfAborted();
  const started = Date.now();
  const request = { method: "tools/call", params };
  const id = internals._requestMessageId++;
  const body = JSON.stringify({ ...request, jsonrpc: "2.0", id });

  // What ends the request before its answer, as it ends the client's: its timeout and the caller's
  // abort (both tell the upstream with `notifications/cancelled`, the reason worded as the SDK
  // words it), the client closing.
  const stopper = new CallStopper(transport, signal, timeout, {
    aborted: (reason) =>
      reason instanceof McpError ? reason : new McpError(ErrorCode.RequestTimeout, String(reason)),
    timedOut: (ms) => McpError.fromError(ErrorCode.RequestTimeout, "Request timed out", { timeout: ms }),
    closed: () => new McpError(ErrorCode.ConnectionClosed, "Connection closed"),
    onStop: (error, why) => {
      if (why === "closed") return;
      const reason = why === "abort" ? String(signal?.reason) : String(error);
      const notice = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason } };
      transport
        .send(notice)
        .catch((cause: unknown) => transport.onerror?.(new Error(`Failed to send cancellation: ${cause}`)));
    },
  });

  let held: HeldAnswer;
  try {
    // (nothing of the message goes into SDK v1's headers)
    const headers = await callHeaders(transport, "", async () => {
      const made = plainHeaders(await transport._commonHeaders());
      made["content-type"] = "application/json";
      made.accept = "application/json, text/event-stream";
      return made;
    });
    if (stopper.failure) throw stopper.failure;
    const answer = await http.post(url, headers, body, stopper.signal);
    if (stopper.failure) {
      answer.held.discard();
      throw stopper.failure;
    }
    const plain = answer.json === undefined ? undefined : plainAnswerV1(answer.json, id, answer.message);
    if (plain !== undefined) {
      answer.held.discard();
      // as the transport does with every answer
      const session = answer.headers["mcp-session-id"];
      if (typeof session === "string" && session !== "") transport._sessionId = session;
      if ("error" in plain) {
        const { code, message: said, data } = plain.error;
        throw McpError.fromError(code, said, data);
      }
      return { ...plain.result };
    }
    held = answer.held;
  } catch (error) {
    if (stopper.failure || error instanceof McpError) throw stopper.failure ?? error;
    // the request failed (`fetch failed`): the client sees the same failure
    held = { error };
  } finally {
    stopper.settle();
  }
  return await handOver(client, http, { id, body, request, held }, signal, timeout - (Date.now() - started));
}

/**
 * Runs `client.request` for the request already sent, with its id: the client's `fetch` is answered
 * with `held` instead of sending it again (the held answer is keyed by the request's body, which
 * carries its id), and the SDK makes of that answer what it always does.
 */
async function handOver(
  client: Client,
  http: NodeFetch,
  sent: { id: number; body: string; request: { method: string; params: JsonObject }; held: HeldAnswer },
  signal: AbortSignal | undefined,
  timeout: number,
): Promise<JsonObject> {
  const internals = client as unknown as ClientInternals;
  const hold = http.holdBody(sent.body, sent.held);
  try {
    const { pending, tookId } = requestWithId(internals, sent.id, () =>
      client.request(sent.request as never, RAW_RESULT, {
        ...(signal ? { signal } : {}),
        timeout: Math.max(timeout, 1),
      }),
    );
    // An SDK that does not take the request's id at once would send another body: no POST goes
    // out until the held answer is dropped (nothing is sent twice), and no call goes direct again.
    if (!tookId) {
      idsTakenLater = true;
      hold.guard();
    }
    return (await pending) as JsonObject;
  } finally {
    hold.drop();
  }
}
