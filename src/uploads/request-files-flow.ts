/**
 * The flow behind `UploadHandleResolver.requestFiles`: a tool asks the person for files through the
 * host port (URL-mode elicitation), whatever SDK generation runs the server. The SDK-facing work
 * (sending `elicitation/create`, the completion notification, the 2026-07-28 `input_required`
 * round) is the adapter's, behind `HostRequestContext.elicitUrl` / `notifyElicitationComplete` /
 * `elicitationAnswers`.
 */
import { FileBridgeError, isFileBridgeError, toToolErrorResult } from "../errors/file-bridge-error.js";
import type { Duration } from "../internal/duration.js";
import { isJsonRpcErrorLike } from "../mcp/errors.js";
import type { HostRequestContext } from "../mcp/host.js";
import type { CallToolResult } from "../mcp/types.js";
import type { StoredFile } from "../storage/types.js";
import { clientFilesCapability } from "./files-wire.js";
import type { FileRequests } from "./request-files.js";
import type { FileRequest, RequestFilesOptions, WaitOptions } from "./request-files-types.js";
import { formatUploadHandle } from "./upload-handle.js";

/** The MCP Apps extension id a client declares when it renders `ui://` widgets. */
const MCP_APPS_EXTENSION_ID = "io.modelcontextprotocol/ui";

/**
 * Options of `UploadHandleResolver.requestFiles`: what to ask for, and how long to wait.
 *
 * @example
 * ```ts
 * const options: RequestFilesCallOptions = { message: "Upload the contract (PDF)", accept: [".pdf"], maxFiles: 1, timeout: "20m" };
 * ```
 */
export interface RequestFilesCallOptions extends RequestFilesOptions {
  /**
   * How long to wait for the upload once the person agreed.
   * @default the resolver's `fileRequests.timeout` ("15m")
   */
  timeout?: Duration;
}

/**
 * What `UploadHandleResolver.requestFiles` ends with. `result` is always a ready tool result; with
 * `status: "uploaded"` the files are there to use:
 * - `uploaded`: the person uploaded `files` (in upload order; `handles` are their `upload://` handles);
 * - `upload_required`: the client cannot open URLs (no `elicitation.url` capability, or it failed to):
 *   `result` gives the model the link to pass on, and the handle to use afterwards;
 * - `declined` / `cancelled`: the person said no or dismissed the request (`result.isError`);
 * - `timeout`: no upload in time (`result.isError`, code `TIMEOUT`);
 * - `input_required` (SDK v2, protocol 2026-07-28): `result` is the `input_required` result that
 *   asks the client to open the link; return it from the tool, and the client's retry runs the tool
 *   again, where `requestFiles` then waits for the upload. A retry that waited `roundWait` without
 *   bytes arriving ends the same way with a state-only `input_required` (the client retries at once).
 * - `expired`: the link expired before the person finished the upload (`result.isError`, code
 *   `TOKEN_EXPIRED`; an upload still receiving bytes at the expiry is waited for);
 * - `pending` (the `await_upload` poll path only): not uploaded yet (`result` says how far the upload
 *   got; call again).
 *
 * @example
 * ```ts
 * const outcome: FileRequestOutcome = await uploads.requestFiles(server, extra, { message: "Upload the photos" });
 * if (outcome.status !== "uploaded") return outcome.result;
 * ```
 */
export type FileRequestOutcome =
  | {
      status: "uploaded";
      /** The request id (also the `elicitationId`). */
      requestId: string;
      files: StoredFile[];
      handles: string[];
      result: CallToolResult;
    }
  | {
      status: "upload_required";
      requestId: string;
      /**
       * Which rung of the ladder the client got: `files` (it declared the files extension: the
       * result carries `file` + `upload`, the draft's shapes, for the request's own ticket), `widget`
       * (it renders MCP Apps and the upload tool has the widget: the model is told to call it),
       * `link` (the upload link in the text).
       */
      via: "files" | "widget" | "link";
      files?: undefined;
      handles?: undefined;
      result: CallToolResult;
    }
  | {
      status: "declined" | "cancelled" | "timeout" | "input_required" | "pending" | "expired";
      requestId: string;
      files?: undefined;
      handles?: undefined;
      result: CallToolResult;
    };

/** What an adapter throws to end a 2026-07-28 round with an `input_required` result (src/mcp/v2/elicitation.ts). */
const INPUT_REQUIRED_SIGNAL = Symbol.for("mcp-file-bridge.input-required");

function inputRequiredResult(error: unknown): CallToolResult | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const signal = error as { [INPUT_REQUIRED_SIGNAL]?: unknown; result?: unknown };
  return signal[INPUT_REQUIRED_SIGNAL] === true && typeof signal.result === "object" && signal.result !== null
    ? (signal.result as CallToolResult)
    : undefined;
}

/** Sends `notifications/progress` for an upload's offsets, when the caller asked for progress. */
export function progressNotifier(
  ctx: Pick<HostRequestContext, "notifyProgress">,
): ((offset: number, length: number | undefined) => Promise<void>) | undefined {
  const notify = ctx.notifyProgress;
  if (!notify) return undefined;
  return (offset, length) =>
    notify.call(
      ctx,
      offset,
      length,
      `${offset}${length === undefined ? "" : ` of ${length}`} bytes received`,
    );
}

/** JSON-RPC code of SDK request timeouts (`ErrorCode.RequestTimeout`). */
const REQUEST_TIMEOUT = -32001;

/** The `uploaded` outcome: the files, their handles, and the tool result listing them. */
export function uploaded(requests: FileRequests, requestId: string, files: StoredFile[]): FileRequestOutcome {
  return {
    status: "uploaded",
    requestId,
    files,
    handles: files.map((file) => formatUploadHandle(file.scope, file.id, requests.scopeRefs)),
    result: requests.resultFor(requestId, files) as CallToolResult,
  };
}

function timedOut(requestId: string, error: unknown): FileRequestOutcome {
  return { status: "timeout", requestId, result: toToolErrorResult(error) as CallToolResult };
}

/** A `timeout` or `expired` outcome: an error result whose structured content names the code. */
export function errorOutcome(
  status: "timeout" | "expired",
  requestId: string,
  error: FileBridgeError,
): FileRequestOutcome {
  const result: CallToolResult = {
    ...(toToolErrorResult(error) as CallToolResult),
    structuredContent: { status, request_id: requestId, error: { code: error.code, message: error.message } },
  };
  return { status, requestId, result };
}

/** The `expired` outcome (`TOKEN_EXPIRED`): the link expired before the person finished the upload. */
export function expiredOutcome(requestId: string, cause?: unknown): FileRequestOutcome {
  return errorOutcome(
    "expired",
    requestId,
    new FileBridgeError("TOKEN_EXPIRED", "The upload link expired before the user finished the upload", {
      data: { request_id: requestId },
      ...(cause === undefined ? {} : { cause }),
    }),
  );
}

/**
 * Waits for the upload; `TIMEOUT` becomes the `timeout` outcome, `TOKEN_EXPIRED` (the link expired
 * first) the `expired` one, `ABORTED` (the call was cancelled) is thrown.
 */
async function settle(
  requests: FileRequests,
  requestId: string,
  wait: () => Promise<StoredFile[]>,
): Promise<FileRequestOutcome> {
  try {
    return uploaded(requests, requestId, await wait());
  } catch (error) {
    if (isFileBridgeError(error, "TIMEOUT")) return timedOut(requestId, error);
    if (isFileBridgeError(error, "TOKEN_EXPIRED")) return expiredOutcome(requestId, error);
    throw error;
  }
}

/**
 * A 2026-07-28 retry that the person accepted: waits for the upload; where the adapter has rounds
 * (`waitAgain`), a round ends after `roundWait` without bytes with a state-only `input_required`, so
 * no single request outlasts the client's timeout while the person has not started (or stalled).
 */
async function waitRound(
  requests: FileRequests,
  ctx: HostRequestContext,
  scope: string,
  requestId: string,
  waitOptions: WaitOptions,
): Promise<FileRequestOutcome> {
  const waitAgain = ctx.waitAgain;
  if (!waitAgain) return settle(requests, requestId, () => requests.waitFor(scope, requestId, waitOptions));
  try {
    const files = await requests.waitFor(scope, requestId, {
      ...waitOptions,
      idle: requests.roundWaitMs / 1000,
    });
    return uploaded(requests, requestId, files);
  } catch (error) {
    if (
      isFileBridgeError(error, "TIMEOUT") &&
      (error.data as { idle?: unknown } | undefined)?.idle === true
    ) {
      return {
        status: "input_required",
        requestId,
        result: waitAgain.call(ctx, requestId) as CallToolResult,
      };
    }
    if (isFileBridgeError(error, "TIMEOUT")) return timedOut(requestId, error);
    if (isFileBridgeError(error, "TOKEN_EXPIRED")) return expiredOutcome(requestId, error);
    throw error;
  }
}

function declined(request: FileRequest, action: "decline" | "cancel"): FileRequestOutcome {
  return {
    status: action === "decline" ? "declined" : "cancelled",
    requestId: request.id,
    result: request.declinedResult(action) as CallToolResult,
  };
}

/**
 * The files-extension rung: the request's own single-use ticket as the draft's `{file, upload}`
 * (a raw-body PUT, or the multipart POST the ticket also takes), so a client that speaks the
 * extension uploads the person's file itself and passes `file.uri` (the request's handle) back.
 */
function viaFilesExtension(request: FileRequest): FileRequestOutcome {
  const expiresAt = new Date(request.expiresAt).toISOString();
  const file = { uri: request.handle };
  const upload = { transport: "https", method: "PUT", url: request.uploadUrl, expiresAt };
  const text = [
    request.message,
    `This server serves the MCP files extension: upload the user's file with the "upload" descriptor of this result (${upload.method} ${upload.url}, until ${expiresAt}; at most ${request.maxBytes} bytes), then pass ${file.uri} as the file argument.`,
  ].join("\n");
  return {
    status: "upload_required",
    via: "files",
    requestId: request.id,
    result: {
      content: [{ type: "text", text }],
      structuredContent: {
        status: "upload_required",
        request_id: request.id,
        file,
        upload,
        alternatives: [{ ...upload, method: "POST", multipart: { fileField: "file" } }],
      },
    },
  };
}

/** The widget rung: the model calls the upload tool, whose result the host renders as the upload widget. */
function viaWidget(request: FileRequest, toolName: string): FileRequestOutcome {
  const fallback = request.fallbackResult() as CallToolResult;
  const text = `${request.message}\nCall the ${toolName} tool: this host shows its upload widget, where the user picks the file. Then pass the handle it answers with as the file argument.`;
  return {
    status: "upload_required",
    via: "widget",
    requestId: request.id,
    result: {
      content: [{ type: "text", text }, ...fallback.content],
      structuredContent: { ...fallback.structuredContent, via: "widget", tool: toolName },
    },
  };
}

/**
 * Asks the person for files through `ctx` (see `UploadHandleResolver.requestFiles`). Errors: the
 * call's cancellation (`ABORTED`), and whatever an adapter throws to end a round (2026-07-28:
 * `input_required`) — never a JSON-RPC error of the client, which becomes the fallback.
 */
export async function requestFilesThrough(
  requests: FileRequests,
  ctx: HostRequestContext,
  scope: string,
  options: RequestFilesCallOptions,
  ladder: { widgetTool?: string | undefined } = {},
): Promise<FileRequestOutcome> {
  // While bytes of a resumable upload arrive, the open call gets MCP progress (which also keeps a
  // client's `resetTimeoutOnProgress` timeout from firing).
  const onProgress = progressNotifier(ctx);
  const waitOptions = {
    signal: ctx.signal,
    ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
    ...(onProgress ? { onProgress } : {}),
  };
  // A retry under 2026-07-28: the first round asked; the answer came back with the retry.
  const resumed = ctx.elicitationAnswers ? [...ctx.elicitationAnswers][0] : undefined;
  if (resumed) {
    const [requestId, answer] = resumed;
    if (answer.action !== "accept") {
      const text = `The user ${answer.action === "decline" ? "declined" : "cancelled"} the upload request. Do not ask again unless the user wants to.`;
      return {
        status: answer.action === "decline" ? "declined" : "cancelled",
        requestId,
        result: {
          content: [{ type: "text", text }],
          structuredContent: {
            status: answer.action === "decline" ? "declined" : "cancelled",
            request_id: requestId,
          },
          isError: true,
        },
      };
    }
    return waitRound(requests, ctx, scope, requestId, waitOptions);
  }

  const { timeout: _timeout, ...asked } = options;
  const request = await requests.create(scope, asked);
  // The ladder, from what the client declared: files extension → URL elicitation → widget → link.
  // The revision Claude Code ships ignores the draft's `{file, upload}`: it goes down the ladder.
  const files = clientFilesCapability(ctx.clientCapabilities);
  if (files?.upload && files.spelling !== "upload_required") return viaFilesExtension(request);
  const fallback = (): FileRequestOutcome => {
    const widgetTool = ladder.widgetTool;
    if (
      widgetTool !== undefined &&
      (ctx.clientCapabilities?.extensions as Record<string, unknown> | undefined)?.[MCP_APPS_EXTENSION_ID] !==
        undefined
    ) {
      return viaWidget(request, widgetTool);
    }
    return {
      status: "upload_required",
      via: "link",
      requestId: request.id,
      result: request.fallbackResult() as CallToolResult,
    };
  };
  if (!ctx.elicitUrl || !ctx.clientCapabilities?.elicitation?.url) return fallback();
  let answer: Awaited<ReturnType<NonNullable<HostRequestContext["elicitUrl"]>>>;
  try {
    answer = await ctx.elicitUrl(request.elicitation, {
      timeoutMs: Math.max(1000, request.expiresAt - Date.now()),
    });
  } catch (error) {
    if (ctx.signal.aborted) {
      throw new FileBridgeError("ABORTED", "The tool call was cancelled", { cause: ctx.signal.reason });
    }
    // The client answered with an error, or never answered while the link lived.
    if (isJsonRpcErrorLike(error)) {
      if (error.code === REQUEST_TIMEOUT) {
        return timedOut(
          request.id,
          new FileBridgeError("TIMEOUT", "The client did not answer the upload request in time", {
            cause: error,
          }),
        );
      }
      return fallback();
    }
    // An adapter ending the round (2026-07-28): the tool returns the input_required result.
    const asked = inputRequiredResult(error);
    if (asked) return { status: "input_required", requestId: request.id, result: asked };
    throw error; // a fault
  }
  if (answer.action !== "accept") return declined(request, answer.action);
  const outcome = await settle(requests, request.id, () => request.wait(waitOptions));
  if (outcome.status === "uploaded") {
    // The client may close its "waiting" state now; a failure here does not undo the upload.
    await ctx.notifyElicitationComplete?.(request.id).catch(() => undefined);
  }
  return outcome;
}
