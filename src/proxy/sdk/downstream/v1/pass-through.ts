/**
 * The pass-through fast path of the v1 endpoint (issue 24): on an open 2025 session, a plain
 * `tools/call` of a tool the proxy does not rewrite goes to the core without the session's SDK
 * transport and server (a web `Request`, the SSE stream, the `Protocol`, zod on the message, the
 * request and the result). Only a call whose every part is plain takes it (no `_meta` at all, so no
 * progress; a protocol version header the SDK's transport accepts); only a plain success is answered
 * here, as the one SSE event the SDK's transport sends; any other outcome goes to the session's
 * server to answer (`createProxyServer`'s `settledOf`).
 */
import type { IncomingMessage } from "node:http";
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import type { JsonObject } from "../../../types.js";
import { isPlainObject, type PlainCall, plainCall } from "../pass-through.js";

/** No `_meta`, or an empty one. */
function noMeta(meta: unknown): boolean {
  if (meta === undefined) return true;
  if (!isPlainObject(meta)) return false;
  for (const _key in meta) return false;
  return true;
}

/**
 * The call, when `parsed` (the POST body of `req`, a request on an open session) is a plain
 * `tools/call` (see `plainCall`) without `_meta`, and `MCP-Protocol-Version` names a version the
 * SDK's transport accepts. `undefined` otherwise.
 */
export function passThroughCallV1(req: IncomingMessage, parsed: unknown): PlainCall | undefined {
  const version = req.headers["mcp-protocol-version"];
  if (req.method !== "POST" || typeof version !== "string" || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))
    return undefined;
  return plainCall(parsed, noMeta);
}

/** The request id of a `notifications/cancelled` message, if `parsed` is one. */
export function cancelledId(parsed: unknown): string | number | undefined {
  if (!isPlainObject(parsed) || parsed.method !== "notifications/cancelled" || !isPlainObject(parsed.params))
    return undefined;
  const id = parsed.params.requestId;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

/** The SSE answer SDK v1's transport gives a request's one result: one `message` event. */
export function sseAnswer(id: string | number, result: JsonObject): string {
  return `event: message\ndata: ${JSON.stringify({ result, jsonrpc: "2.0", id })}\n\n`;
}
