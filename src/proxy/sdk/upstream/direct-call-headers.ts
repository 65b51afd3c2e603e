/**
 * The request headers of a direct `tools/call` on SDK v2 (`direct-call.ts`; SDK v1's `direct-call-v1.ts`
 * keeps its `_commonHeaders` the same way, see {@link keptHeaders}), worked out by the
 * transport once per connection and kind of call instead of on every call (issue 43, the proxy hop):
 * `_commonHeaders()` builds a web `Headers` from the connection's `requestInit`, and
 * `_applyBodyDerivedHeaders` runs zod on the whole message to add `MCP-Protocol-Version`,
 * `Mcp-Method` and `Mcp-Name`; then the `Headers` is copied to a plain object. Together a tenth of
 * the v2 proxy's JavaScript per pass-through call, for headers that are the same on every call of a
 * tool on one connection.
 *
 * What the transport's answer depends on, and so what the memo is keyed by: the `requestInit`
 * headers (by identity: a new object starts afresh), the session id, the connection's protocol
 * version, the request's `_meta` (the envelope, whose version names the revision) and the tool name.
 * The arguments and the id are not read by either step for a request of this shape (the JSON-RPC
 * request schema takes any params object). With an auth provider the token may change between calls,
 * so nothing is kept; a request whose `_meta` is not exactly the client's envelope is not kept either.
 */

/** The SDK v2 transport's members the headers come from. */
export interface HeaderSource {
  _commonHeaders(): Promise<Headers>;
  _applyBodyDerivedHeaders(headers: Headers, message: unknown): void;
  _authProvider?: unknown;
  _requestInit?: { headers?: unknown };
  _sessionId?: string;
  _protocolVersion?: string;
}

/** The kept headers of one connection, valid while its `requestInit` headers are this object. */
interface Memo {
  init: unknown;
  byKey: Map<string, Readonly<Record<string, string>>>;
}

const memos = new WeakMap<object, Memo>();
/** Kinds of call kept per connection at most (one per tool and envelope); past it, worked out each time. */
export const HEADER_MEMO_MAX = 256;

/** The `accept` the transport sends: the caller's types, then JSON and SSE, once each. */
function accept(headers: Headers): string {
  const userAccept = headers.get("accept");
  const types = [
    ...(userAccept?.split(",").map((s) => s.trim().toLowerCase()) ?? []),
    "application/json",
    "text/event-stream",
  ];
  return [...new Set(types)].join(", ");
}

/** The transport's headers for `message`, worked out as it does (no memo). */
async function fresh(transport: HeaderSource, message: unknown): Promise<Record<string, string>> {
  const headers = await transport._commonHeaders();
  transport._applyBodyDerivedHeaders(headers, message);
  headers.set("content-type", "application/json");
  headers.set("accept", accept(headers));
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

/**
 * The headers the transport sends with `message` (a `tools/call` request whose `params._meta` is
 * `envelope`, the client's own), `content-type` and `accept` included, as a fresh plain object the
 * caller may change.
 */
export async function directCallHeaders(
  transport: HeaderSource,
  message: { params: { name?: unknown; _meta?: unknown } },
  envelope: unknown,
): Promise<Record<string, string>> {
  const name = message.params.name;
  if (
    transport._authProvider !== undefined ||
    typeof name !== "string" ||
    envelope === undefined ||
    message.params._meta !== envelope
  )
    return await fresh(transport, message);
  const key = `${transport._sessionId ?? ""}\n${transport._protocolVersion ?? ""}\n${name}\n${JSON.stringify(envelope)}`;
  return await keptHeaders(transport, transport._requestInit?.headers, key, () => fresh(transport, message));
}

/**
 * The headers kept for `key` on `transport` while its configured headers are `init` (by identity),
 * else `work()`'s, kept (up to {@link HEADER_MEMO_MAX} keys per connection): a fresh copy each time.
 * The key must name everything else the headers depend on. Shared by both SDKs' direct calls.
 */
export async function keptHeaders(
  transport: object,
  init: unknown,
  key: string,
  work: () => Promise<Record<string, string>>,
): Promise<Record<string, string>> {
  let memo = memos.get(transport);
  if (memo === undefined || memo.init !== init) {
    memo = { init, byKey: new Map() };
    memos.set(transport, memo);
  }
  const kept = memo.byKey.get(key);
  if (kept !== undefined) return { ...kept };
  const headers = await work();
  if (memo.byKey.size < HEADER_MEMO_MAX) memo.byKey.set(key, { ...headers });
  return headers;
}
