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

/** The SDK transport's members its common headers come from (both SDKs). */
export interface HeaderSource {
  _commonHeaders(): Promise<Headers>;
  _authProvider?: unknown;
  _requestInit?: unknown;
  _protocolVersion?: unknown;
  _sessionId?: unknown;
}

/** The headers a transport's direct calls sent, by the call's shape (see {@link callHeaders}). */
interface HeaderMemo {
  requestInit: unknown;
  version: unknown;
  session: unknown;
  byShape: Map<string, Record<string, string>>;
}
const headerMemos = new WeakMap<object, HeaderMemo>();
/** Shapes a transport's memo keeps at most (a proxy calls a few tools with one envelope). */
export const HEADER_SHAPES_MAX = 64;
/** The longest shape key kept (a long caller `_meta` is worked out each time). */
const SHAPE_KEY_MAX = 2048;

/**
 * The headers of a direct call on `transport`, as `make` (the SDK's own steps: `_commonHeaders`,
 * the body-derived `Mcp-*` headers, `content-type`, `accept`) makes them; a copy of what `make`
 * made for the same `shape` before, while nothing they come from changed (issue 43: the SDK's
 * `Headers` and its zod check of the whole message were a tenth of the hop's CPU per call).
 *
 * `shape` must name all a call adds to the transport's own inputs (SDK v2: the tool name and the
 * message's `_meta`; SDK v1: nothing). The transport's inputs are its `requestInit`, negotiated
 * version and session id, compared on every call; a transport with an auth provider (whose token
 * may change at any time) or without a negotiated version runs `make` every time.
 */
export async function callHeaders(
  transport: HeaderSource,
  shape: string,
  make: () => Promise<Record<string, string>>,
): Promise<Record<string, string>> {
  if (transport._authProvider !== undefined || typeof transport._protocolVersion !== "string") {
    return await make();
  }
  const inputs = {
    requestInit: transport._requestInit,
    version: transport._protocolVersion,
    session: transport._sessionId,
  };
  let memo = headerMemos.get(transport);
  if (
    memo === undefined ||
    memo.requestInit !== inputs.requestInit ||
    memo.version !== inputs.version ||
    memo.session !== inputs.session
  ) {
    memo = { ...inputs, byShape: new Map() };
    headerMemos.set(transport, memo);
  }
  const known = memo.byShape.get(shape);
  if (known !== undefined) return { ...known };
  const made = await make();
  const unchanged =
    transport._requestInit === inputs.requestInit &&
    transport._protocolVersion === inputs.version &&
    transport._sessionId === inputs.session;
  if (unchanged && shape.length <= SHAPE_KEY_MAX) {
    if (memo.byShape.size >= HEADER_SHAPES_MAX) {
      for (const oldest of memo.byShape.keys()) {
        memo.byShape.delete(oldest);
        break;
      }
    }
    memo.byShape.set(shape, { ...made });
  }
  return made;
}

/**
 * Who runs when a transport's lifetime signal aborts: one listener per signal for every call
 * under way on it (issue 43: adding and removing a listener on the signal per call cost more than
 * the rest of the stopper).
 */
const onClose = new WeakMap<AbortSignal, Set<() => void>>();

function whenClosed(signal: AbortSignal, run: () => void): void {
  let runs = onClose.get(signal);
  if (runs === undefined) {
    const set = new Set<() => void>();
    runs = set;
    onClose.set(signal, set);
    signal.addEventListener(
      "abort",
      () => {
        onClose.delete(signal);
        for (const each of [...set]) each();
      },
      { once: true },
    );
  }
  runs.add(run);
}

function notWhenClosed(signal: AbortSignal, run: () => void): void {
  onClose.get(signal)?.delete(run);
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
    // (as a listener added to an aborted signal, none runs when it aborted already)
    if (!closed.aborted) whenClosed(closed, this.#onClosed);
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
    notWhenClosed(this.#closed, this.#onClosed);
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
