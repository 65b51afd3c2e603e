/**
 * What the upload route reads of a request: method, URL (parsed once), headers, the abort signal,
 * and the web `Request` for the hooks that receive one. The web path wraps its `Request`; the Node
 * adapter's native upload path reads the `IncomingMessage` and builds a `Request` only when a hook
 * (a CORS function, `rateLimit` reading `info.request`, an upload page) asks for it.
 */
export interface RequestView {
  readonly method: string;
  /** The request URL, parsed once. */
  readonly url: URL;
  /** A header's value as `Headers.get` gives it (repeated headers joined with `, `), or `null`. */
  header(name: string): string | null;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
  /**
   * Aborts {@link RequestView.signal}, when the view owns it (the Node adapter's native path makes
   * one controller per request): an upload then stops its staging through the request's own signal
   * instead of a second controller chained to it. Absent on a web `Request`, whose signal is not ours.
   */
  readonly abort?: (reason: unknown) => void;
  /**
   * Calls `listener` with {@link RequestView.signal}'s reason when it aborts from now on, and returns
   * the function that stops listening. Present when the view owns the signal (the Node adapter's
   * native path): a plain callback there, because an `addEventListener`/`removeEventListener` pair
   * on an `AbortSignal` costs a few microseconds, a share of a small upload's whole cost.
   */
  readonly onAbort?: (listener: (reason: unknown) => void) => () => void;
  /** The web `Request` (on the Node path, built on first use). */
  web(): Request;
}

/** A view of a web `Request` whose URL was already parsed. */
export function webRequestView(request: Request, url: URL): RequestView {
  return {
    method: request.method,
    url,
    header: (name) => request.headers.get(name),
    signal: request.signal,
    web: () => request,
  };
}

/** An answer of the routes before it becomes a `Response` (the Node adapter writes it as it is). */
export interface PlainAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly text: string;
}
