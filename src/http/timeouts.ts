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

/**
 * Starts a watchdog; `onTimeout` runs at most once. One timer (`unref`'d) serves the three limits: it
 * is set for the earliest deadline, progress only moves the deadlines, and when the timer fires it
 * either finds a limit hit or is set again for the next deadline (so a chunk costs no timer call).
 */
export function startWatchdog(options: {
  idleMs: number;
  totalMs: number;
  minRate?: MinRate | undefined;
  onTimeout: (kind: TimeoutKind) => void;
}): Watchdog {
  const { idleMs, totalMs, minRate, onTimeout } = options;
  const windowMs = minRate?.windowMs ?? 0;
  const needed = minRate ? (minRate.bytesPerSecond * windowMs) / 1000 : 0;
  const started = performance.now();
  const totalAt = totalMs > 0 ? started + totalMs : Number.POSITIVE_INFINITY;
  // The idle clock and the rate window pause on their own: progress restarts the idle clock only.
  let idleAt = idleMs > 0 ? started + idleMs : Number.POSITIVE_INFINITY;
  let rateOn = needed > 0;
  let windowAt = rateOn ? started + windowMs : Number.POSITIVE_INFINITY;
  let bytes = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let timerAt = Number.POSITIVE_INFINITY;

  const nextDeadline = () => Math.min(idleAt, totalAt, rateOn ? windowAt : Number.POSITIVE_INFINITY);
  const schedule = () => {
    const next = nextDeadline();
    // A timer due no later than the next deadline stays: when it fires it sets itself again.
    if (stopped || next === Number.POSITIVE_INFINITY || (timer && timerAt <= next)) return;
    clearTimeout(timer);
    timerAt = next;
    timer = setTimeout(check, Math.max(1, Math.ceil(next - performance.now())));
    timer.unref();
  };
  const check = () => {
    timer = undefined;
    timerAt = Number.POSITIVE_INFINITY;
    if (stopped) return;
    const now = performance.now();
    let hit: TimeoutKind | undefined;
    let hitAt = Number.POSITIVE_INFINITY;
    if (now >= idleAt) [hit, hitAt] = ["idle", idleAt];
    if (now >= totalAt && totalAt < hitAt) [hit, hitAt] = ["total", totalAt];
    if (rateOn && now >= windowAt) {
      // A whole window brought too few bytes: too slow. Else the next window starts now.
      if (bytes < needed && windowAt < hitAt) hit = "rate";
      else if (bytes >= needed) {
        bytes = 0;
        windowAt = now + windowMs;
      }
    }
    if (hit) {
      stop();
      onTimeout(hit);
      return;
    }
    schedule();
  };
  const stop = () => {
    stopped = true;
    clearTimeout(timer);
    timer = undefined;
  };
  const restartIdle = () => {
    if (idleMs > 0) idleAt = performance.now() + idleMs;
  };
  schedule();
  return {
    touch: (chunk) => {
      // A caller that does not say how much arrived cannot be measured: the rate check goes off.
      if (typeof chunk?.length === "number") bytes += chunk.length;
      else rateOn = false;
      restartIdle();
      schedule();
    },
    pause: () => {
      idleAt = Number.POSITIVE_INFINITY;
      // A pause discards the rate window; the next one starts on resume.
      windowAt = Number.POSITIVE_INFINITY;
    },
    resume: () => {
      if (rateOn && windowAt === Number.POSITIVE_INFINITY) {
        bytes = 0;
        windowAt = performance.now() + windowMs;
      }
      restartIdle();
      schedule();
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
