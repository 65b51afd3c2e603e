/**
 * What the endpoints' pass-through fast paths share (issue 24), SDK-free: the plainest `tools/call`
 * shape, the plainest tool result, and the settled outcome of a call the endpoint ran itself. A
 * plain call of a tool the core calls a pass-through goes to {@link ProxyCore.callTool} without the
 * SDK's server; anything less plain goes the SDK way (see `v1/pass-through.ts`, `v2/pass-through.ts`).
 */
import type { JsonObject } from "../../types.js";

/**
 * A `tools/call` the endpoint already ran: what the core returned, or what it threw. The SDK's
 * server answers with it when the endpoint leaves the answer to the SDK (an error, a richer result).
 */
export type SettledCall = { result: JsonObject } | { error: unknown };

/** A plain `tools/call`: its JSON-RPC id, the tool name and the params a handler would get. */
export interface PlainCall {
  id: string | number;
  name: string;
  /** `name` and `arguments`, without `_meta`. */
  params: JsonObject;
}

/**
 * Tool names that need no encoding in a header (no Base64 sentinel, no spaces): the SDK v2 client
 * sends them in `Mcp-Name` byte for byte.
 */
const PLAIN_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether `value` has no key but `allowed` ones. */
export function onlyKeys(value: JsonObject, allowed: readonly string[]): boolean {
  for (const key in value) if (!allowed.includes(key)) return false;
  return true;
}

/**
 * The call, when `parsed` is a JSON-RPC `tools/call` of the plainest shape: `jsonrpc`, `id` (a string
 * or an integer), `method` and `params` and nothing else; `params` with a plain `name`, optional object
 * `arguments`, and `_meta` only as `plainMeta` allows (the caller's generation decides; a
 * `progressToken` never passes).
 */
export function plainCall(parsed: unknown, plainMeta: (meta: unknown) => boolean): PlainCall | undefined {
  if (
    !isPlainObject(parsed) ||
    !onlyKeys(parsed, ["jsonrpc", "id", "method", "params"]) ||
    parsed.jsonrpc !== "2.0" ||
    parsed.method !== "tools/call"
  )
    return undefined;
  const { id, params } = parsed;
  if (!(typeof id === "string" || Number.isSafeInteger(id))) return undefined;
  if (!isPlainObject(params) || !onlyKeys(params, ["name", "arguments", "_meta"])) return undefined;
  const { name, arguments: args } = params;
  if (typeof name !== "string" || !PLAIN_NAME.test(name)) return undefined;
  if (args !== undefined && !isPlainObject(args)) return undefined;
  if (!plainMeta(params._meta)) return undefined;
  return {
    id: id as string | number,
    name,
    params: args === undefined ? { name } : { name, arguments: args },
  };
}

/** A text content block of the plainest shape. */
function plainContent(block: unknown): boolean {
  return (
    isPlainObject(block) &&
    onlyKeys(block, ["type", "text"]) &&
    block.type === "text" &&
    typeof block.text === "string"
  );
}

/**
 * Whether a tool result is one both SDKs pass through their result schema unchanged: text content
 * only, optional `structuredContent` (an object) and `isError` (a boolean), no `_meta`, no
 * `resultType` (an input-required result, for one, goes the SDK way).
 */
export function plainResult(result: JsonObject): boolean {
  if (!onlyKeys(result, ["content", "structuredContent", "isError"])) return false;
  const { content, structuredContent, isError } = result;
  if (!Array.isArray(content) || !content.every(plainContent)) return false;
  if (structuredContent !== undefined && !isPlainObject(structuredContent)) return false;
  return isError === undefined || typeof isError === "boolean";
}

/**
 * A route that answers with a call's settled outcome instead of running the call again (the SDK
 * server then validates and encodes it exactly as if it had run it).
 */
export function replay(settled: SettledCall): () => Promise<JsonObject> {
  return async () => {
    if ("error" in settled) throw settled.error;
    return settled.result;
  };
}
