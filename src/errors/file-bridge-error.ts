/**
 * Every error this package raises on purpose is a {@link FileBridgeError}. Its `code` is API: it is
 * stable across releases, documented in the README, and what callers (and tests) should branch on.
 *
 * @example
 * ```ts
 * const code: FileBridgeErrorCode = "FILE_TOO_LARGE";
 * if (isFileBridgeError(error, code)) console.log(error.status, error.data?.limit); // 413 52428800
 * ```
 */
export type FileBridgeErrorCode =
  | "INVALID_INPUT"
  | "UNSUPPORTED_INPUT"
  | "FORM_DISABLED"
  | "INVALID_BASE64"
  | "INVALID_DATA_URL"
  | "EMPTY_FILE"
  | "PATH_NOT_ALLOWED"
  | "PATH_UNAVAILABLE"
  | "NOT_FOUND"
  | "FILE_TOO_LARGE"
  | "TOO_MANY_FILES"
  | "QUOTA_EXCEEDED"
  | "DIGEST_MISMATCH"
  | "HOST_NOT_ALLOWED"
  | "FETCH_FAILED"
  | "TIMEOUT"
  | "REQUEST_TIMEOUT"
  | "TRANSFER_TOO_SLOW"
  | "ABORTED"
  | "INVALID_TOKEN"
  | "TOKEN_EXPIRED"
  | "TOKEN_ALREADY_USED"
  | "UPLOAD_IN_PROGRESS"
  | "UPLOAD_PENDING"
  | "RATE_LIMITED"
  | "FORBIDDEN"
  | "INVALID_CURSOR"
  | "INVALID_REQUEST"
  | "METHOD_NOT_ALLOWED"
  | "RANGE_NOT_SATISFIABLE"
  | "TOO_LARGE_TO_INLINE"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "INVALID_OPTION"
  | "STORAGE_ERROR";

/**
 * Per code: the HTTP status used when the error reaches an HTTP route, and what the caller should do
 * about it (shown to the model in tool results). A pair, not an object: 34 times `status:` and
 * `hint:` were 600 bytes of every user's bundle.
 */
type CodeInfo = readonly [status: number, hint: string];

const CODES: Record<FileBridgeErrorCode, CodeInfo> = {
  INVALID_INPUT: [400, "Send the file in one of the accepted forms."],
  UNSUPPORTED_INPUT: [400, "Send the file in one of the accepted forms listed above."],
  FORM_DISABLED: [
    400,
    "This server does not accept that form; send the file in one of the forms named above.",
  ],
  INVALID_BASE64: [400, "Encode the content as standard base64 (RFC 4648) without extra text."],
  INVALID_DATA_URL: [400, "Use a data URL of the form data:<type>;base64,<data>."],
  EMPTY_FILE: [400, "The file has no content; send a non-empty file."],
  PATH_NOT_ALLOWED: [403, "Use a path inside the server's allowed folders, or upload the file instead."],
  PATH_UNAVAILABLE: [
    500,
    "This server runs without a writable disk: the tool reads the file's bytes or stream, not its path.",
  ],
  NOT_FOUND: [404, "Check the URI or handle; it may have expired. Upload the file again."],
  FILE_TOO_LARGE: [413, "Send a smaller file, or use the upload URL flow for large files."],
  TOO_MANY_FILES: [413, "Send fewer files in one call, or combine them into one archive."],
  QUOTA_EXCEEDED: [
    413,
    "This scope's storage quota is used up; delete files it no longer needs, or wait for old ones to expire.",
  ],
  DIGEST_MISMATCH: [422, "The content does not match its declared size or digest; resend it."],
  HOST_NOT_ALLOWED: [403, "Fetching from that address is not allowed; upload the file instead."],
  FETCH_FAILED: [502, "The remote file could not be fetched; upload it instead."],
  TIMEOUT: [504, "The operation took too long; try again or upload the file instead."],
  REQUEST_TIMEOUT: [408, "The upload stalled or took too long; send it again on a steadier connection."],
  ABORTED: [400, "The transfer was aborted before it completed; try again."],
  INVALID_TOKEN: [401, "The link is invalid; ask for a new one."],
  TOKEN_EXPIRED: [410, "The link has expired; ask for a new one."],
  TOKEN_ALREADY_USED: [410, "The link was already used; ask for a new one."],
  UPLOAD_IN_PROGRESS: [
    409,
    "Another upload with this link is under way; wait for it, and retry only if it failed.",
  ],
  UPLOAD_PENDING: [
    409,
    "The person has not finished uploading; ask them to, or check the upload's status (check_upload), then call the tool again with the same handle.",
  ],
  TRANSFER_TOO_SLOW: [
    408,
    "The upload arrived too slowly; send it again on a faster or steadier connection.",
  ],
  RATE_LIMITED: [429, "Too many requests; wait a moment, then try again."],
  FORBIDDEN: [403, "The caller is not allowed to do this."],
  INVALID_CURSOR: [400, "Restart the listing without a cursor."],
  INVALID_REQUEST: [400, "Fix the request and try again."],
  METHOD_NOT_ALLOWED: [405, "Use one of the methods named in the message (and the Allow header)."],
  RANGE_NOT_SATISFIABLE: [416, "Request a byte range inside the file."],
  TOO_LARGE_TO_INLINE: [413, "The file is too large to return inline; request a download URL instead."],
  UNSUPPORTED_MEDIA_TYPE: [415, "Send a file of a supported type."],
  INVALID_OPTION: [500, "The server is misconfigured; this is a bug for its author."],
  STORAGE_ERROR: [500, "The server could not store or read the file; try again later."],
};

/**
 * Every error code, in documentation order.
 *
 * @example
 * ```ts
 * for (const code of FILE_BRIDGE_ERROR_CODES) console.log(code, statusForCode(code)); // INVALID_INPUT 400 …
 * ```
 */
export const FILE_BRIDGE_ERROR_CODES = Object.freeze(Object.keys(CODES) as FileBridgeErrorCode[]);

/**
 * Options accepted by {@link FileBridgeError}.
 *
 * @example
 * ```ts
 * const options: FileBridgeErrorOptions = { data: { id }, cause: error };
 * throw new FileBridgeError("NOT_FOUND", "no such report", options);
 * ```
 */
export interface FileBridgeErrorOptions {
  /** The underlying error, if any. */
  cause?: unknown;
  /** Structured details safe to show to the caller (e.g. `{ uri }`, `{ limit }`). */
  data?: Record<string, unknown>;
  /** What the caller should do, when the code's usual hint would mislead. @default the code's hint */
  hint?: string;
}

/**
 * The one error class of this package.
 *
 * @example
 * ```ts
 * try {
 *   await bridge.resolve(args.file, { scope });
 * } catch (error) {
 *   if (isFileBridgeError(error) && error.code === "FILE_TOO_LARGE") {
 *     // tell the user to use the upload URL flow
 *   }
 * }
 * ```
 */
export class FileBridgeError extends Error {
  override readonly name = "FileBridgeError";
  /** Stable machine-readable code; see the README's error table. */
  readonly code: FileBridgeErrorCode;
  /** HTTP status for this code. */
  readonly status: number;
  /** Structured details safe to show to the caller. */
  readonly data: Record<string, unknown> | undefined;

  constructor(code: FileBridgeErrorCode, message: string, options: FileBridgeErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = CODES[code][0];
    this.data = options.data;
    this.#hint = options.hint;
  }

  readonly #hint: string | undefined;

  /** What the caller should do about this error. */
  get hint(): string {
    return this.#hint ?? CODES[this.code][1];
  }
}

/**
 * True for a {@link FileBridgeError}, also one made by another copy of this package (matched by
 * `name` and `code`, so it works across realms and duplicate installs).
 *
 * @example
 * ```ts
 * if (isFileBridgeError(error, "NOT_FOUND")) return notFound();
 * ```
 */
export function isFileBridgeError(error: unknown, code?: FileBridgeErrorCode): error is FileBridgeError {
  if (error instanceof FileBridgeError) return code === undefined || error.code === code;
  if (typeof error !== "object" || error === null) return false;
  const candidate = error as { name?: unknown; code?: unknown };
  return (
    candidate.name === "FileBridgeError" &&
    typeof candidate.code === "string" &&
    candidate.code in CODES &&
    (code === undefined || candidate.code === code)
  );
}

/**
 * The HTTP status for a code.
 *
 * @example
 * ```ts
 * statusForCode("FILE_TOO_LARGE"); // 413
 * ```
 */
export function statusForCode(code: FileBridgeErrorCode): number {
  return CODES[code][0];
}

/**
 * The shape of an MCP `CallToolResult` that reports a failure.
 *
 * @example
 * ```ts
 * const result: ToolErrorResult = toToolErrorResult(new FileBridgeError("EMPTY_FILE", "the file is empty"));
 * // result.content[0].text: "Error EMPTY_FILE: the file is empty. The file has no content; send a non-empty file."
 * ```
 */
export interface ToolErrorResult {
  [key: string]: unknown;
  isError: true;
  content: Array<{ type: "text"; text: string }>;
  structuredContent?: Record<string, unknown>;
}

/**
 * Turns any thrown value into an MCP tool result with `isError: true` whose text names the error code
 * and what to do. Errors that are not {@link FileBridgeError}s are reported without their message, so
 * internal details (paths, stack traces) never reach the model.
 *
 * @example
 * ```ts
 * server.registerTool("convert", { inputSchema }, async (args) => {
 *   try { ... } catch (error) { return toToolErrorResult(error); }
 * });
 * ```
 */
export function toToolErrorResult(error: unknown): ToolErrorResult {
  const known = isFileBridgeError(error) ? error : undefined;
  const code: FileBridgeErrorCode = known?.code ?? "STORAGE_ERROR";
  const message = known?.message ?? "Internal error while handling the file.";
  const hint = known?.hint ?? CODES[code][1];
  return {
    isError: true,
    content: [
      { type: "text", text: `Error ${code}: ${/[.!?]$/.test(message) ? message : `${message}.`} ${hint}` },
    ],
  };
}

/**
 * A JSON-RPC error object, as an MCP request handler may throw or return it.
 *
 * @example
 * ```ts
 * const { code, message, data }: JsonRpcErrorShape = toJsonRpcError(error, { uri });
 * throw new McpError(code, message, data);
 * ```
 */
export interface JsonRpcErrorShape {
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

/**
 * JSON-RPC "invalid params", what MCP uses for unknown resources.
 *
 * @example
 * ```ts
 * toJsonRpcError(new FileBridgeError("NOT_FOUND", "no such file")).code === JSONRPC_INVALID_PARAMS; // true
 * ```
 */
export const JSONRPC_INVALID_PARAMS = -32602;
/**
 * JSON-RPC "internal error".
 *
 * @example
 * ```ts
 * toJsonRpcError(new Error("disk full")).code === JSONRPC_INTERNAL_ERROR; // true (message: "Internal error")
 * ```
 */
export const JSONRPC_INTERNAL_ERROR = -32603;

/**
 * Maps an error to the JSON-RPC error a `resources/read` (or other request) should answer with:
 * caller mistakes (not found, bad URI, too large to inline) are `-32602` with `data.code` and, when
 * given, `data.uri`; anything else is `-32603` without internal details.
 *
 * @example
 * ```ts
 * const { code, message, data } = toJsonRpcError(error, { uri });
 * throw new McpError(code, message, data);
 * ```
 */
export function toJsonRpcError(error: unknown, extra: { uri?: string } = {}): JsonRpcErrorShape {
  if (isFileBridgeError(error) && error.status < 500) {
    return {
      code: JSONRPC_INVALID_PARAMS,
      message: error.message,
      data: { ...error.data, ...extra, code: error.code },
    };
  }
  return {
    code: JSONRPC_INTERNAL_ERROR,
    message: "Internal error",
    data: { ...extra, code: isFileBridgeError(error) ? error.code : "STORAGE_ERROR" },
  };
}
