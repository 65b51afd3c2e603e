/**
 * Idle and total timeouts of the file routes: a watchdog that fires once when a transfer made no
 * progress for `idleMs`, ran longer than `totalMs` (either `0` = off), or (uploads) moved fewer than
 * `minRate.bytesPerSecond` on average over a whole `minRate.windowMs`.
 */
import { Readable } from "node:stream";
import { FileBridgeError } from "../errors/file-bridge-error.js";

/** Which limit a watchdog hit. */
export type TimeoutKind = "idle" | "total" | "rate";

/** The slowest a transfer may be: on average `bytesPerSecond` over every `windowMs`. */
export interface MinRate {
  bytesPerSecond: number;
  windowMs: number;
}

/** A watchdog over one transfer. */
export interface Watchdog {
  /**
   * Progress was made: the idle clock starts again. Pass the chunk (it is a `"data"` listener) so
   * its length counts towards the minimum rate; a call without one turns the rate check off for
   * this transfer (it cannot be measured), so a caller that does not count never gets cut off.
   */
  touch(chunk?: { length: number }): void;
  /** Stops the idle clock (the server, not the client, is holding the transfer up). */
  pause(): void;
  /** Starts the idle clock again after {@link Watchdog.pause}. */
  resume(): void;
  /** Stops both clocks for good. */
  stop(): void;
}

/** Starts a watchdog; `onTimeout` runs at most once. Timers are `unref`'d. */
export function startWatchdog(options: {
  idleMs: number;
  totalMs: number;
  minRate?: MinRate | undefined;
  onTimeout: (kind: TimeoutKind) => void;
}): Watchdog {
  const { idleMs, totalMs, onTimeout } = options;
  let idle: NodeJS.Timeout | undefined;
  let stopped = false;
  const rate = startRateClock(options.minRate, () => fire("rate"));
  const fire = (kind: TimeoutKind) => {
    if (stopped) return;
    stop();
    onTimeout(kind);
  };
  const armIdle = () => {
    if (stopped || idleMs <= 0) return;
    if (idle) idle.refresh();
    else {
      idle = setTimeout(() => fire("idle"), idleMs);
      idle.unref();
    }
  };
  const total = totalMs > 0 ? setTimeout(() => fire("total"), totalMs) : undefined;
  total?.unref();
  const stop = () => {
    stopped = true;
    clearTimeout(idle);
    clearTimeout(total);
    rate.stop();
  };
  armIdle();
  return {
    touch: (chunk) => {
      rate.count(chunk);
      armIdle();
    },
    pause: () => {
      clearTimeout(idle);
      idle = undefined;
      rate.pause();
    },
    resume: () => {
      rate.resume();
      armIdle();
    },
    stop,
  };
}

/**
 * The minimum-rate clock: counts bytes per window and calls `onSlow` when a whole window (the server
 * not holding the transfer up) brought fewer than `bytesPerSecond × windowMs / 1000`. A pause
 * discards the window; the next one starts on resume.
 */
function startRateClock(
  minRate: MinRate | undefined,
  onSlow: () => void,
): { count(chunk?: { length: number }): void; pause(): void; resume(): void; stop(): void } {
  const needed = minRate ? (minRate.bytesPerSecond * minRate.windowMs) / 1000 : 0;
  let timer: NodeJS.Timeout | undefined;
  let bytes = 0;
  let off = needed <= 0;
  const arm = () => {
    clearTimeout(timer);
    if (off) return;
    bytes = 0;
    timer = setTimeout(() => {
      timer = undefined;
      if (bytes < needed) onSlow();
      else arm();
    }, minRate?.windowMs);
    timer.unref();
  };
  const stop = () => {
    off = true;
    clearTimeout(timer);
  };
  arm();
  return {
    count: (chunk) => {
      if (typeof chunk?.length === "number") bytes += chunk.length;
      else stop(); // a caller that does not say how much arrived cannot be measured
    },
    pause: () => {
      clearTimeout(timer);
      timer = undefined;
    },
    resume: () => {
      if (timer === undefined) arm();
    },
    stop,
  };
}

/**
 * The error an upload that stalled or ran too long fails with (`408 REQUEST_TIMEOUT`), or one that
 * sent its body slower than the minimum rate (`408 TRANSFER_TOO_SLOW`).
 */
export function uploadTimeoutError(kind: TimeoutKind, ms: number, minRate?: MinRate): FileBridgeError {
  if (kind === "rate") {
    const bytesPerSecond = minRate?.bytesPerSecond ?? 0;
    return new FileBridgeError(
      "TRANSFER_TOO_SLOW",
      `The upload sent less than ${bytesPerSecond} bytes per second over ${ms} ms`,
      { data: { minBytesPerSecond: bytesPerSecond, windowMs: ms } },
    );
  }
  return new FileBridgeError(
    "REQUEST_TIMEOUT",
    kind === "idle" ? `The upload sent no data for ${ms} ms` : `The upload took longer than ${ms} ms`,
    { data: { timeoutMs: ms, kind } },
  );
}

/** Largest piece a download is handed on in, so progress is seen even for stores with huge chunks. */
const SLICE = 64 * 1024;

/**
 * Wraps a download's source so every piece the consumer takes counts as progress. The pieces are at
 * most 64 KiB, and the next one is produced only when the consumer asks for it: when the client stops
 * reading, the consumer stops asking (backpressure) and the idle clock runs out. The stream is then
 * destroyed with a `REQUEST_TIMEOUT` error, which ends the transfer and destroys the source.
 */
export function watchedDownload(source: Readable, idleMs: number, totalMs: number): Readable {
  if (idleMs <= 0 && totalMs <= 0) return source;
  let watchdog: Watchdog | undefined;
  async function* pieces(): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of source as AsyncIterable<Buffer>) {
        for (let offset = 0; offset < chunk.length; offset += SLICE) {
          yield chunk.subarray(offset, offset + SLICE);
          watchdog?.touch(); // the consumer came back for more
        }
      }
    } finally {
      if (!source.destroyed) source.destroy();
    }
  }
  const stream = Readable.from(pieces(), { objectMode: false, highWaterMark: SLICE });
  watchdog = startWatchdog({
    idleMs,
    totalMs,
    onTimeout: (kind) => {
      const ms = kind === "idle" ? idleMs : totalMs;
      stream.destroy(
        new FileBridgeError(
          "REQUEST_TIMEOUT",
          kind === "idle"
            ? `The download made no progress for ${ms} ms`
            : `The download took longer than ${ms} ms`,
          { data: { timeoutMs: ms, kind } },
        ),
      );
    },
  });
  stream.once("close", () => watchdog?.stop());
  return stream;
}
