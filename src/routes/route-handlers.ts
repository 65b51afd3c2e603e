/**
 * The handlers behind the file routes, loaded on the routes' first matched request
 * (`createFileRoutes`): the download path and the upload protocol (`uploads/`) are code a server
 * that never serves a file route does not compile at start (issue 39, docs/performance.md,
 * Session 20).
 */
import type { Readable } from "node:stream";
import { report } from "../http/responses.js";
import { startWatchdog, type TimeoutKind, uploadTimeoutError } from "../http/timeouts.js";
import type { UploadHandlerConfig, UploadRequestContext } from "../uploads/handler-types.js";
import { DirectUploadHandler, TicketUploadHandler } from "../uploads/upload-handler.js";
import type { ResolvedRouteOptions } from "./options.js";

export { downloadAnswer, handleDownload } from "./download.js";

/** The routes' two upload handlers, made once per `createFileRoutes` call. */
export function uploadHandlers(config: UploadHandlerConfig): {
  upload: TicketUploadHandler;
  direct: DirectUploadHandler;
} {
  return { upload: new TicketUploadHandler(config), direct: new DirectUploadHandler(config) };
}

/** The milliseconds of the limit an upload hit. */
function timeoutOf(config: ResolvedRouteOptions, kind: TimeoutKind): number {
  if (kind === "idle") return config.idleTimeoutMs;
  if (kind === "total") return config.uploadTimeoutMs;
  return config.minUploadRate?.windowMs ?? 0;
}

/** The transport an upload handler gets: the body as a Node stream, the timeouts, `onError`. */
export function uploadContext(
  config: ResolvedRouteOptions,
  body: () => Readable | null,
  segments: readonly string[],
): UploadRequestContext {
  return {
    segments,
    body,
    // No body byte for `idleTimeout` (while the server is not the one holding it up), or more than
    // `uploadTimeout` in all: the handler aborts the staging and the upload fails with REQUEST_TIMEOUT.
    // Fewer than `minUploadRate` bytes per second over a whole window: 408 TRANSFER_TOO_SLOW.
    watch: (onTimeout) =>
      startWatchdog({
        idleMs: config.idleTimeoutMs,
        totalMs: config.uploadTimeoutMs,
        minRate: config.minUploadRate,
        onTimeout: (kind) =>
          onTimeout(uploadTimeoutError(kind, timeoutOf(config, kind), config.minUploadRate)),
      }),
    clocks: { idleMs: config.idleTimeoutMs, minBytesPerSecond: config.minUploadRate?.bytesPerSecond },
    report: (error) => report(config, error),
  };
}
