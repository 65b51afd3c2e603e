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
  return new TransferWatchdog(options.idleMs, options.totalMs, options.minRate, options.onTimeout);
}

/**
 * The watchdog of {@link startWatchdog}. Every upload starts one, so its state lives in fields and
 * its steps in methods; only the three listeners a stream is given (`touch`, `pause`, `resume`) are
 * bound per instance.
 */
class TransferWatchdog implements Watchdog {
  readonly touch: (chunk?: { length: number }) => void;
  readonly pause: () => void;
  readonly resume: () => void;
  readonly stop: () => void;
  readonly #idleMs: number;
  readonly #windowMs: number;
  /** Bytes a whole rate window must bring (0: no rate check). */
  readonly #needed: number;
  readonly #totalAt: number;
  readonly #onTimeout: (kind: TimeoutKind) => void;
  // The idle clock and the rate window pause on their own: progress restarts the idle clock only.
  #idleAt: number;
  #rateOn: boolean;
  #windowAt: number;
  #bytes = 0;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Number.POSITIVE_INFINITY;

  constructor(
    idleMs: number,
    totalMs: number,
    minRate: MinRate | undefined,
    onTimeout: (kind: TimeoutKind) => void,
  ) {
    this.#idleMs = idleMs;
    this.#windowMs = minRate?.windowMs ?? 0;
    this.#needed = minRate ? (minRate.bytesPerSecond * this.#windowMs) / 1000 : 0;
    this.#onTimeout = onTimeout;
    const started = performance.now();
    this.#totalAt = totalMs > 0 ? started + totalMs : Number.POSITIVE_INFINITY;
    this.#idleAt = idleMs > 0 ? started + idleMs : Number.POSITIVE_INFINITY;
    this.#rateOn = this.#needed > 0;
    this.#windowAt = this.#rateOn ? started + this.#windowMs : Number.POSITIVE_INFINITY;
    this.touch = this.#touch.bind(this);
    this.pause = this.#pause.bind(this);
    this.resume = this.#resume.bind(this);
    this.stop = this.#stop.bind(this);
    this.#schedule();
  }

  #touch(chunk?: { length: number }): void {
    // A caller that does not say how much arrived cannot be measured: the rate check goes off.
    if (typeof chunk?.length === "number") this.#bytes += chunk.length;
    else this.#rateOn = false;
    this.#restartIdle();
    this.#schedule();
  }

  #pause(): void {
    this.#idleAt = Number.POSITIVE_INFINITY;
    // A pause discards the rate window; the next one starts on resume.
    this.#windowAt = Number.POSITIVE_INFINITY;
  }

  #resume(): void {
    if (this.#rateOn && this.#windowAt === Number.POSITIVE_INFINITY) {
      this.#bytes = 0;
      this.#windowAt = performance.now() + this.#windowMs;
    }
    this.#restartIdle();
    this.#schedule();
  }

  #stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #restartIdle(): void {
    if (this.#idleMs > 0) this.#idleAt = performance.now() + this.#idleMs;
  }

  #nextDeadline(): number {
    return Math.min(this.#idleAt, this.#totalAt, this.#rateOn ? this.#windowAt : Number.POSITIVE_INFINITY);
  }

  #schedule(): void {
    const next = this.#nextDeadline();
    // A timer due no later than the next deadline stays: when it fires it sets itself again.
    if (this.#stopped || next === Number.POSITIVE_INFINITY || (this.#timer && this.#timerAt <= next)) return;
    clearTimeout(this.#timer);
    this.#timerAt = next;
    this.#timer = setTimeout(TransferWatchdog.#fire, Math.max(1, Math.ceil(next - performance.now())), this);
    this.#timer.unref();
  }

  /** The timer's callback (one function for every watchdog: the watchdog is its argument). */
  static #fire(watchdog: TransferWatchdog): void {
    watchdog.#check();
  }

  #check(): void {
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    if (this.#stopped) return;
    const now = performance.now();
    let hit: TimeoutKind | undefined;
    let hitAt = Number.POSITIVE_INFINITY;
    if (now >= this.#idleAt) [hit, hitAt] = ["idle", this.#idleAt];
    if (now >= this.#totalAt && this.#totalAt < hitAt) [hit, hitAt] = ["total", this.#totalAt];
    if (this.#rateOn && now >= this.#windowAt) {
      // A whole window brought too few bytes: too slow. Else the next window starts now.
      if (this.#bytes < this.#needed && this.#windowAt < hitAt) hit = "rate";
      else if (this.#bytes >= this.#needed) {
        this.#bytes = 0;
        this.#windowAt = now + this.#windowMs;
      }
    }
    if (hit) {
      this.#stop();
      this.#onTimeout(hit);
      return;
    }
    this.#schedule();
  }
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
  const stream = new WatchedDownload(source);
  const watchdog = startWatchdog({
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
  stream.watchdog = watchdog;
  stream.once("close", () => watchdog.stop());
  return stream;
}

/**
 * The source's bytes in pieces of at most {@link SLICE}, each handed on only when the consumer asks
 * (`_read`), which is what counts as progress. It takes the source's chunks one at a time as `data`
 * events (pausing it in between: no promise or async iterator per piece, where a 1 GiB download is
 * 16,384 of them, and no copy), and destroys the source when it is destroyed itself.
 */
class WatchedDownload extends Readable {
  watchdog: Watchdog | undefined;
  readonly #source: Readable;
  #chunk: Buffer | null = null;
  #offset = 0;
  #wanted = false;
  #ended = false;
  #started = false;
  #taken = false;

  constructor(source: Readable) {
    super({ highWaterMark: SLICE });
    this.#source = source;
    source.once("end", () => {
      this.#ended = true;
      this.#pump();
    });
    source.on("error", (error) => this.destroy(error)); // a second error after the first is dropped
    source.once("close", () => {
      if (!this.#ended && !this.destroyed) {
        this.destroy(Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" }));
      }
    });
  }

  /**
   * Hands the source over to `take` while nothing was asked of it yet (see
   * {@link takeDownloadSource}): when `take` accepts it, this stream reads nothing from then on,
   * and destroying it (a timeout) leaves the source to the taker.
   */
  takeOver<T>(take: (source: Readable) => T | undefined): T | undefined {
    if (this.#started || this.#taken || this.destroyed) return undefined;
    const taken = take(this.#source);
    if (taken !== undefined) this.#taken = true;
    return taken;
  }

  override _read(): void {
    this.watchdog?.touch(); // the consumer came back for more
    if (this.#taken) return;
    if (!this.#started) {
      this.#started = true;
      const source = this.#source;
      source.on("data", (chunk: Buffer) => {
        source.pause();
        this.#chunk = chunk;
        this.#offset = 0;
        this.#pump();
      });
    }
    this.#wanted = true;
    this.#pump();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#chunk = null;
    if (!this.#taken && !this.#source.destroyed) this.#source.destroy();
    callback(error);
  }

  /** Hands on pieces while the consumer wants them; asks the source for its next chunk when out. */
  #pump(): void {
    while (this.#wanted && !this.destroyed) {
      const chunk = this.#chunk;
      if (chunk === null) {
        if (this.#ended) {
          this.#wanted = false;
          this.push(null);
        } else this.#source.resume(); // its next chunk comes as a "data" event (or "end")
        return;
      }
      const whole = this.#offset === 0 && chunk.length <= SLICE;
      const piece = whole ? chunk : chunk.subarray(this.#offset, this.#offset + SLICE);
      this.#offset += piece.length;
      if (this.#offset >= chunk.length) this.#chunk = null;
      this.#wanted = this.push(piece);
    }
  }
}

/**
 * Offers the store's stream behind a download made by {@link watchedDownload} to `take`, while
 * nothing has been read from it; when `take` accepts it (returns a value), the caller sends it its
 * own way: `progress()` counts as the consumer taking bytes (the idle clock starts again); a
 * timeout still destroys `download` (with its error), which then no longer touches the source: the
 * caller stops, destroys the source itself, and destroys `download` when done. `undefined` when
 * `take` declines or reading has begun.
 *
 * @example
 * ```ts
 * const taken = takeDownloadSource(download, (source) => takeFileRange(source));
 * if (taken) await sendItMyWay(taken.value, taken.source, taken.progress);
 * ```
 */
export function takeDownloadSource<T>(
  download: Readable,
  take: (source: Readable) => T | undefined,
): { value: T; source: Readable; progress(): void } | undefined {
  let source: Readable = download;
  let value: T | undefined;
  if (download instanceof WatchedDownload) {
    value = download.takeOver((inner) => {
      source = inner;
      return take(inner);
    });
  } else if (!download.readableFlowing && download.readableLength === 0 && !download.destroyed) {
    value = take(download);
  }
  if (value === undefined) return undefined;
  const watched = download instanceof WatchedDownload ? download : undefined;
  return { value, source, progress: () => watched?.watchdog?.touch() };
}
