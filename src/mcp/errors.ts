import { FileBridgeError, toJsonRpcError } from "../errors/file-bridge-error.js";

/**
 * A JSON-RPC error a request handler throws: every SDK generation answers a thrown error that has a
 * numeric `code` with `{ code, message, data }`. Built without the SDK's error class, so the package
 * loads without an SDK installed. The message is the bare text: the client's SDK adds its own
 * `MCP error <code>: ` prefix when it reports the error, so a prefix here would arrive twice
 * (`MCP error -32602: MCP error -32602: …`).
 *
 * @example
 * ```ts
 * throw new McpRequestError(-32602, "resource x://a not found", { uri: "x://a" });
 * ```
 */
export class McpRequestError extends Error {
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = "McpRequestError";
    this.code = code;
    this.data = data;
  }
}

/** Whether a thrown value already is a JSON-RPC error (an integer `code`), which handlers pass on as it is. */
export function isJsonRpcErrorLike(error: unknown): error is Error & { code: number; data?: unknown } {
  return error instanceof Error && Number.isSafeInteger((error as { code?: unknown }).code);
}

/**
 * The JSON-RPC error a request handler throws for any thrown value: JSON-RPC errors pass as they are,
 * a `FileBridgeError` becomes `-32602` (or `-32603` for server faults) with its code in `data`, and
 * anything else `-32603` without its message. `extra.uri` is added to `data`.
 */
export function toMcpRequestError(error: unknown, extra: { uri?: string } = {}): Error {
  if (isJsonRpcErrorLike(error)) return error;
  const shape = toJsonRpcError(error, extra);
  return new McpRequestError(shape.code, shape.message, shape.data);
}

/** The error `elicitUrl` fails with when the client did not declare `elicitation.url` (every adapter). */
export function noUrlElicitation(): FileBridgeError {
  return new FileBridgeError("INVALID_INPUT", "The client cannot open URLs (no elicitation.url capability)");
}
