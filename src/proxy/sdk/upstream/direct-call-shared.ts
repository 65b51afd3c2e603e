/**
 * What the two direct `tools/call` paths (`direct-call-v1.ts` on SDK v1, `direct-call.ts` on SDK v2)
 * share: what ends a request before its answer ({@link CallStopper}: its timeout, the caller's abort,
 * the client closing), the plain JSON-RPC answer check, the request ids moved for a hand-over. The
 * errors each end makes and what it tells the upstream are the caller's (each SDK words them its
 * own way). No SDK import here, so either path loads without the other SDK installed.
 */
import type { JsonObject } from "../../types.js";
import type { StopSignal } from "./node-fetch.js";

/** A plain JSON-RPC answer to the request: its result, or its error. */
export type PlainAnswer =
  | { result: JsonObject }
  | { error: { code: number; message: string; data?: unknown } };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The answer in `text` (or `parsed`, its JSON parsed already) if it is a plain response to request
 * `id`: exactly `jsonrpc`, `id` and `result` (one `plainResult` accepts) or `error` (an integer
 * `code`, a string `message`, any `data`).
 */
export function plainJsonRpcAnswer(
  text: string,
  id: number,
  parsed: unknown,
  plainResult: (result: unknown) => result is JsonObject,
): PlainAnswer | undefined {
  let message: unknown = parsed;
  if (message === undefined) {
    try {
      message = JSON.parse(text);
    } catch {
      return undefined;
    }
  }
  if (!isObject(message) || message.jsonrpc !== "2.0" || message.id !== id) return undefined;
  if (Object.keys(message).length !== 3) return undefined;
  if ("result" in message) return plainResult(message.result) ? { result: message.result } : undefined;
  const error = message.error;
  if (!isObject(error) || !Number.isSafeInteger(error.code) || typeof error.message !== "string") {
    return undefined;
  }
  const { code, message: said, data } = error as { code: number; message: string; data?: unknown };
  return data === undefined ? { error: { code, message: said } } : { error: { code, message: said, data } };
}

/** `headers` as a plain object (what `NodeFetch.post` takes). */
export function plainHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

/** The SDK transport's members a stopper reads: its lifetime signal, its error report. */
export interface StoppableTransport {
  _abortController?: AbortController;
  onerror?: (error: Error) => void;
}

/** The errors one SDK's request ends with, and what it does when one ends it. */
export interface StopWording {
  /** The caller's `signal` aborted with `reason`. */
  aborted(reason: unknown): Error;
  /** The request's `timeout` (ms) passed. */
  timedOut(timeout: number): Error;
  /** The client closed. */
  closed(): Error;
  /** Called once, when the first of the three ends the request (after {@link CallStopper.signal} aborts). */
  onStop?(error: Error, why: "abort" | "timeout" | "closed"): void;
}

/**
 * What ends a direct request before its answer, as it ends the client's: its timeout, the caller's
 * abort, the client closing (its transport's signal, whose reason also goes to the transport's
 * `onerror`, as the transport reports its own aborted fetch). The first one wins: `failure` is set
 * and `signal` (given to the request) aborts with it. `settle()` removes the timer and listeners.
 * `signal` is the stopper itself, a {@link StopSignal}: no `AbortController` per call (issue 43).
 */
export class CallStopper implements StopSignal {
  /** Aborted with {@link failure} when the request is ended. */
  readonly signal: StopSignal = this;
  /** The error the request ends with, once something ended it. */
  failure: Error | undefined;
  /** Whether {@link signal} aborted. */
  aborted = false;
  /** What {@link signal} aborted with ({@link failure}). */
  reason: unknown;
  #listeners: Array<() => void> | undefined;
  readonly #caller: AbortSignal | undefined;
  readonly #closed: AbortSignal;
  readonly #timer: NodeJS.Timeout;
  readonly #onAbort: () => void;
  readonly #onClosed: () => void;

  constructor(
    transport: StoppableTransport,
    signal: AbortSignal | undefined,
    timeout: number,
    wording: StopWording,
  ) {
    this.#caller = signal;
    const closed = transport._abortController?.signal as AbortSignal;
    this.#closed = closed;
    const stop = (error: Error, why: "abort" | "timeout" | "closed") => {
      if (this.failure) return;
      this.failure = error;
      this.#abort(error);
      wording.onStop?.(error, why);
    };
    this.#onAbort = () => stop(wording.aborted(signal?.reason), "abort");
    this.#onClosed = () => {
      stop(wording.closed(), "closed");
      transport.onerror?.(closed.reason as Error);
    };
    this.#timer = setTimeout(() => stop(wording.timedOut(timeout), "timeout"), timeout);
    signal?.addEventListener("abort", this.#onAbort, { once: true });
    closed.addEventListener("abort", this.#onClosed, { once: true });
  }

  /** As `AbortController.abort(reason)` does to its signal: set, then each listener once, in order. */
  #abort(reason: Error): void {
    this.aborted = true;
    this.reason = reason;
    const listeners = this.#listeners;
    this.#listeners = undefined;
    for (const listener of listeners ?? []) listener();
  }

  /** Adds an `"abort"` listener (each runs once: the signal aborts once); none once it aborted. */
  addEventListener(_type: "abort", listener: () => void): void {
    if (this.aborted) return;
    this.#listeners ??= [];
    if (!this.#listeners.includes(listener)) this.#listeners.push(listener);
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const at = this.#listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.#listeners?.splice(at, 1);
  }

  settle(): void {
    clearTimeout(this.#timer);
    this.#caller?.removeEventListener("abort", this.#onAbort);
    this.#closed.removeEventListener("abort", this.#onClosed);
  }
}

/** The SDK client's request id counter (the same member in both SDKs). */
export interface RequestIds {
  _requestMessageId: number;
}

/**
 * Starts `request()` (the client's `request` call) with the client's id counter set to `id`, the id
 * of the request already sent, and moves the counter past it again. Returns the pending request and
 * whether the client took the id at once (an SDK that takes it later would send another id).
 */
export function requestWithId<T>(
  client: RequestIds,
  id: number,
  request: () => Promise<T>,
): { pending: Promise<T>; tookId: boolean } {
  const next = client._requestMessageId;
  client._requestMessageId = id;
  try {
    const pending = request();
    return { pending, tookId: client._requestMessageId === id + 1 };
  } finally {
    client._requestMessageId = Math.max(next, id + 1);
  }
}
