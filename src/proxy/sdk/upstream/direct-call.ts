/**
 * A plain `tools/call` on a 2026-07-28 Streamable HTTP upstream without the SDK v2 client's request
 * machinery (issue 24, the upstream hop): its `Protocol` (a promise, handlers, timers per request),
 * the transport's web `Response`, zod on the JSON-RPC message and the result, and the era codec's
 * decoding cost about half the proxy's JavaScript per pass-through call.
 *
 * The request is the one the client would send: the next id of its counter, its `_meta` envelope,
 * the headers of its transport (`_commonHeaders`, the body-derived `Mcp-*` ones, `content-type`,
 * `accept`), on the connection's own agents ({@link NodeFetch.post}). Its timeout, the caller's
 * abort (which closes the request's stream: the 2026-07-28 cancellation on Streamable HTTP) and the
 * client closing end it as they end the client's request. Two answers are settled here: a 200 JSON
 * response (or a one-event SSE one) carrying the request's id and either an error (→ the SDK's
 * `ProtocolError`) or a result whose shape the SDK's schemas provably accept unchanged (text
 * content, `resultType: "complete"`; see {@link plainResult}). **Every other outcome** (a failed
 * request, an HTTP error, an SSE stream, images, `input_required`, a malformed result…) is handed to
 * the client as if it had sent the request itself: its `request()` runs with the same id and its
 * `fetch` is answered with what arrived ({@link NodeFetch.hold}), so the SDK decides what it means.
 * Nothing is sent twice.
 *
 * The client's and transport's members used here are internal to the SDK; `directCallsPossible` checks
 * that they are there and the call goes the SDK way when they are not.
 */
import {
  type Client,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
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
import { HELD_ANSWER_HEADER, type HeldAnswer, type NodeFetch } from "./node-fetch.js";
import { withoutEnvelope } from "./shared.js";

/** Accepts any result as it is (the SDK would otherwise drop unknown fields). */
export const RAW_RESULT = z.looseObject({});

/** The SDK client's members a direct call reads and moves (its request ids, its envelope). */
interface ClientInternals {
  _requestMessageId: number;
  _outboundMetaEnvelope(): Readonly<Record<string, unknown>> | undefined;
}

/** The SDK transport's members a direct call reads (its headers, its lifetime signal). */
interface TransportInternals extends HeaderSource {
  _applyBodyDerivedHeaders(headers: Headers, message: unknown): void;
  _abortController?: AbortController;
  _fetch?: unknown;
  hasPerRequestStream?: boolean;
  onerror?: (error: Error) => void;
}

/** Set once a hand-over found the SDK client taking request ids later than `request()` returns. */
let idsTakenLater = false;

/** The options of one direct call: those `UpstreamConnectionV2` gives `client.request`. */
export interface DirectCallOptions {
  signal?: AbortSignal;
  /** In milliseconds. */
  timeout: number;
}

/**
 * Whether the SDK's client and transport offer what a direct call uses, and `http` is the fetch of
 * that transport (so a held answer reaches it).
 */
export function directCallsPossible(client: Client, http: NodeFetch): boolean {
  if (idsTakenLater || !(client.transport instanceof StreamableHTTPClientTransport)) return false;
  const transport = client.transport as unknown as TransportInternals;
  const internals = client as unknown as Partial<ClientInternals>;
  return (
    transport.hasPerRequestStream === true &&
    transport._fetch === http.fetch &&
    typeof transport._commonHeaders === "function" &&
    typeof transport._applyBodyDerivedHeaders === "function" &&
    transport._abortController?.signal instanceof AbortSignal &&
    !transport._abortController.signal.aborted &&
    typeof internals._requestMessageId === "number" &&
    typeof internals._outboundMetaEnvelope === "function"
  );
}

/**
 * A `tools/call` result the SDK's schemas accept and return unchanged but for its order: an object
 * with `resultType: "complete"`, `content` an array of text blocks (no annotations, no `_meta`),
 * `isError` boolean if present, `_meta` an object if present. Other members pass as they are.
 */
export function plainResult(result: unknown): result is JsonObject {
  if (!isObject(result) || result.resultType !== "complete" || Object.hasOwn(result, "__proto__"))
    return false;
  const { content, isError, _meta: meta } = result;
  if (!Array.isArray(content)) return false;
  for (const block of content) {
    if (!isObject(block) || block.type !== "text" || typeof block.text !== "string") return false;
    if (block.annotations !== undefined || block._meta !== undefined) return false;
  }
  if (isError !== undefined && typeof isError !== "boolean") return false;
  return meta === undefined || (isObject(meta) && !Object.hasOwn(meta, "__proto__"));
}

/**
 * What `withoutEnvelope(await client.request(...))` gives for a {@link plainResult}: the SDK's
 * JSON-RPC schema puts `_meta` first (its one declared key), the codec drops `resultType`, then the
 * reserved `_meta` keys go.
 */
export function sdkShaped(result: JsonObject): JsonObject {
  const { resultType: _type, _meta: meta, ...rest } = result;
  if (meta === undefined) return rest;
  return withoutEnvelope({ _meta: meta, ...rest });
}

/** The answer in `text` (or `parsed`, its JSON parsed already) if it is a plain response to request `id` (see the module comment). */
export function plainAnswer(text: string, id: number, parsed?: unknown): PlainAnswer | undefined {
  return plainJsonRpcAnswer(text, id, parsed, plainResult);
}

/** The `accept` the transport sends: the caller's types, then JSON and SSE, once each. */
function accept(headers: Headers): string {
  const userAccept = headers.get("accept");
  if (userAccept === lastAccept.user) return lastAccept.sent;
  const types = [
    ...(userAccept?.split(",").map((s) => s.trim().toLowerCase()) ?? []),
    "application/json",
    "text/event-stream",
  ];
  lastAccept = { user: userAccept, sent: [...new Set(types)].join(", ") };
  return lastAccept.sent;
}

/** The last `accept` worked out (a connection's transport sends the same one every time). */
let lastAccept: { user: string | null; sent: string } = {
  user: null,
  sent: "application/json, text/event-stream",
};

/**
 * Sends `tools/call` with `params` on `client`'s connection (see the module comment) and resolves
 * with what `withoutEnvelope(await client.request(...))` would, or rejects with what it would
 * reject with. `client` must be a connected 2026-07-28 client for which {@link directCallsPossible}.
 */
export async function directToolCall(
  client: Client,
  http: NodeFetch,
  url: URL,
  params: JsonObject,
  options: DirectCallOptions,
): Promise<JsonObject> {
  const internals = client as unknown as ClientInternals;
  const transport = client.transport as unknown as TransportInternals;
  const { signal, timeout } = options;
  if (signal?.aborted) {
    const reason = signal.reason;
    throw reason instanceof SdkError ? reason : new SdkError(SdkErrorCode.RequestTimeout, String(reason));
  }
  const started = Date.now();
  const request = { method: "tools/call", params };
  const id = internals._requestMessageId++;
  const envelope = internals._outboundMetaEnvelope();
  const message =
    envelope === undefined
      ? { ...request, jsonrpc: "2.0", id }
      : {
          ...request,
          jsonrpc: "2.0",
          id,
          params: { ...params, _meta: { ...envelope, ...(params._meta as object | undefined) } },
        };
  const body = JSON.stringify(message);

  // What ends the request before its answer, as it ends the client's: its timeout, the caller's
  // abort, the client closing (its transport's signal).
  const stopper = new CallStopper(transport, signal, timeout, {
    aborted: (reason) => new SdkError(SdkErrorCode.RequestTimeout, String(reason)),
    timedOut: (ms) => new SdkError(SdkErrorCode.RequestTimeout, "Request timed out", { timeout: ms }),
    closed: () => new SdkError(SdkErrorCode.ConnectionClosed, "Connection closed"),
  });

  let held: HeldAnswer;
  try {
    // The body-derived headers come from the tool's name and the message's `_meta` (the rest of
    // the message is ours, of one shape; the SDK checks it whole with zod).
    const meta = (message.params as { _meta?: unknown })._meta;
    const shape = `${typeof params.name === "string" ? `"${params.name}` : "-"}\n${JSON.stringify(meta) ?? ""}`;
    const headers = await callHeaders(transport, shape, async () => {
      const made = await transport._commonHeaders();
      transport._applyBodyDerivedHeaders(made, message);
      made.set("content-type", "application/json");
      made.set("accept", accept(made));
      return plainHeaders(made);
    });
    if (stopper.failure) throw stopper.failure;
    const answer = await http.post(url, headers, body, stopper.signal);
    if (stopper.failure) {
      answer.held.discard();
      throw stopper.failure;
    }
    const plain = answer.json === undefined ? undefined : plainAnswer(answer.json, id, answer.message);
    if (plain !== undefined) {
      answer.held.discard();
      if ("error" in plain) {
        const { code, message: said, data } = plain.error;
        throw ProtocolError.fromError(code, said, data);
      }
      return sdkShaped(plain.result);
    }
    held = answer.held;
  } catch (error) {
    if (stopper.failure || error instanceof ProtocolError) throw stopper.failure ?? error;
    // the request failed (`fetch failed`): the client sees the same failure
    held = { error };
  } finally {
    stopper.settle();
  }
  return await handOver(client, http, { id, body, request, held }, signal, timeout - (Date.now() - started));
}

/**
 * Runs `client.request` for the request already sent, with its id: the client's `fetch` is answered
 * with `held` instead of sending it again, and the SDK makes of that answer what it always does.
 */
async function handOver(
  client: Client,
  http: NodeFetch,
  sent: { id: number; body: string; request: { method: string; params: JsonObject }; held: HeldAnswer },
  signal: AbortSignal | undefined,
  timeout: number,
): Promise<JsonObject> {
  const internals = client as unknown as ClientInternals;
  const token = http.hold(sent.body, sent.held);
  try {
    const { pending, tookId } = requestWithId(internals, sent.id, () =>
      client.request(sent.request as never, RAW_RESULT, {
        ...(signal ? { signal } : {}),
        timeout: Math.max(timeout, 1),
        headers: { [HELD_ANSWER_HEADER]: token },
      }),
    );
    // An SDK that does not take the request's id at once (not 2.x as tested) would send another
    // id: the held answer is refused to it (nothing is sent twice) and no call goes direct again.
    if (!tookId) idsTakenLater = true;
    return withoutEnvelope((await pending) as JsonObject);
  } finally {
    http.release(token);
  }
}
