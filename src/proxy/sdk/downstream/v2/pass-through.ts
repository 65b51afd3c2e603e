/**
 * The pass-through fast path of the v2 endpoint (issue 24): a 2026-07-28 `tools/call` of a tool the
 * proxy does not rewrite goes to the core without a per-request SDK server (a `Server`, its
 * `Protocol` and transport, a web `Request` and `Response`, the request and result parsed by zod
 * twice). Only requests whose every part is plain take it, checked here field by field and with the
 * SDK's own classification (`classifyInboundRequest`, the step `createMcpHandler` routes by); anything
 * else (progress asked for, another envelope key, a header the SDK would look closer at, a 2025 request)
 * goes the SDK way. Likewise only a plain success is answered here; any other outcome is handed to the
 * SDK's server to answer (see `createProxyServerV2`'s `settled`), so error codes and result validation
 * stay the SDK's.
 */
import type { IncomingMessage } from "node:http";
import { classifyInboundRequest } from "@modelcontextprotocol/server";
import type { JsonObject } from "../../../types.js";
import { isPlainObject, onlyKeys, type PlainCall, plainCall } from "../pass-through.js";

/** The revision the fast path serves (the SDK serves it too; anything else goes the SDK way). */
const REVISION = "2026-07-28";
const PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
const CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo";
const CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";
const SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo";

/** A client envelope with the three reserved keys only, each of the plainest shape. */
function plainEnvelope(meta: unknown): boolean {
  if (
    !isPlainObject(meta) ||
    !onlyKeys(meta, [PROTOCOL_VERSION_KEY, CLIENT_INFO_KEY, CLIENT_CAPABILITIES_KEY])
  )
    return false;
  if (meta[PROTOCOL_VERSION_KEY] !== REVISION) return false;
  const info = meta[CLIENT_INFO_KEY];
  if (
    info !== undefined &&
    !(
      isPlainObject(info) &&
      onlyKeys(info, ["name", "version"]) &&
      typeof info.name === "string" &&
      typeof info.version === "string"
    )
  )
    return false;
  const capabilities = meta[CLIENT_CAPABILITIES_KEY];
  if (!isPlainObject(capabilities)) return false;
  for (const key in capabilities) if (!isPlainObject(capabilities[key])) return false;
  return true;
}

/**
 * The call, when `parsed` (the POST body of `req`) is a 2026-07-28 `tools/call` of the plainest
 * shape (see `plainCall`) with the client envelope in `_meta` (no `progressToken`: progress goes the
 * SDK way); `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` equal to the body's; no session id;
 * and the SDK's own classification says "modern". `undefined` otherwise.
 */
export function passThroughCall(req: IncomingMessage, parsed: unknown): PlainCall | undefined {
  const headers = req.headers;
  if (
    req.method !== "POST" ||
    headers["mcp-protocol-version"] !== REVISION ||
    headers["mcp-method"] !== "tools/call" ||
    headers["mcp-session-id"] !== undefined
  )
    return undefined;
  const call = plainCall(parsed, plainEnvelope);
  if (call === undefined || headers["mcp-name"] !== call.name) return undefined;
  return sdkSaysModern(parsed as { params: { _meta: JsonObject } }, call.name) ? call : undefined;
}

/**
 * Envelopes (`_meta` as JSON text) the SDK's classification called a 2026-07-28 request, so it is not
 * run again for them (issue 43: zod on the whole message and the envelope was a tenth of the hop's
 * CPU). Sound because, for a body {@link plainCall} and {@link plainEnvelope} let through, nothing
 * but `_meta` can change the SDK's answer: the JSON-RPC members are fixed in shape (a `"2.0"`, a
 * string or integer id, `tools/call`, a plain name, an object of arguments, which the SDK's request
 * schema passes as they are), and so are the headers (checked equal to the body's). Bounded: a client
 * sends one envelope per connection, so a few entries serve everyone; once full, the oldest entry
 * makes room (envelopes of clients long gone, or sent on purpose, never freeze the memo); a long
 * envelope is never kept, and the SDK classifies it as before.
 */
const modernEnvelopes = new Set<string>();
/** Entries {@link modernEnvelopes} keeps at most. */
export const MODERN_ENVELOPES_MAX = 64;
/** The longest envelope text {@link modernEnvelopes} keeps. */
const ENVELOPE_KEY_MAX = 2048;

/** Whether the SDK's own classification routes `body` (a plain call of `name`) to 2026-07-28. */
function sdkSaysModern(body: { params: { _meta: JsonObject } }, name: string): boolean {
  const key = JSON.stringify(body.params._meta);
  if (modernEnvelopes.has(key)) return true;
  const route = classifyInboundRequest({
    httpMethod: "POST",
    protocolVersionHeader: REVISION,
    mcpMethodHeader: "tools/call",
    mcpNameHeader: name,
    body,
  });
  if (route.kind !== "modern" || route.classification.revision !== REVISION) return false;
  if (key.length <= ENVELOPE_KEY_MAX) {
    if (modernEnvelopes.size >= MODERN_ENVELOPES_MAX) {
      for (const oldest of modernEnvelopes) {
        modernEnvelopes.delete(oldest);
        break;
      }
    }
    modernEnvelopes.add(key);
  }
  return true;
}

/** How many envelopes the classification memo holds (for tests). */
export function modernEnvelopeCount(): number {
  return modernEnvelopes.size;
}

/**
 * The JSON-RPC answer the SDK's 2026-07-28 encoding gives a plain result: `resultType: "complete"`
 * and the server's identity in `_meta` stamped on.
 */
export function resultBody(
  id: string | number,
  result: JsonObject,
  serverInfo: { name: string; version: string },
): string {
  return JSON.stringify({
    result: { ...result, resultType: "complete", _meta: { [SERVER_INFO_KEY]: serverInfo } },
    jsonrpc: "2.0",
    id,
  });
}
