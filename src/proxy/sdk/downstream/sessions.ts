/**
 * The 2025-era sessions of an HTTP endpoint (either SDK generation), each bound to the identity that
 * opened it: a session id is a bearer secret, and holding one must not let another user (or an
 * anonymous caller) act in, or listen on, someone else's session. Sessions are bounded (issue 21,
 * part 3): with auth configured an anonymous caller opens none (401); each user, and all anonymous
 * callers together, hold at most a few (429 past the cap); a session idle (no request or stream in
 * progress) for `idleMs` is closed.
 */
import type { ProxyAuthInfo } from "../../http-host.js";

/** The verified user of a request (`extra.sub`), or `undefined` for an anonymous one. */
export function userOf(authInfo: ProxyAuthInfo | undefined): string | undefined {
  const sub = authInfo?.extra?.sub;
  return typeof sub === "string" && sub.length > 0 ? sub : undefined;
}

/**
 * Bounds of an endpoint's sessions and streams.
 *
 * @example
 * ```ts
 * const limits: EndpointLimits = { sessionsPerUser: 16, anonymousSessions: 64, sessionIdleMs: 600_000 };
 * ```
 */
export interface EndpointLimits {
  /** `subscriptions/listen` streams one user (or all anonymous callers) may hold open (SDK v2). */
  listenStreams?: number;
  /** Open 2025-era sessions per verified user. */
  sessionsPerUser?: number;
  /** Open 2025-era sessions of all anonymous callers together. */
  anonymousSessions?: number;
  /** A session with no request or stream in progress for this long is closed. */
  sessionIdleMs?: number;
  /** Auth is configured: an anonymous caller may not open a session (401). */
  requireAuth?: boolean;
  /**
   * The `resourceSubscriptions` URIs of a `subscriptions/listen` request the caller may hear
   * `resources/updated` for (SDK v2): the proxy keeps upstream URIs and its own files' URIs of the
   * caller's scope, and drops the rest. @default all kept
   */
  listenUris?: (uris: readonly string[], authInfo: ProxyAuthInfo | undefined) => string[];
}

/** Default: open sessions per user. */
export const DEFAULT_SESSIONS_PER_USER = 16;
/** Default: open sessions of all anonymous callers together. */
export const DEFAULT_ANONYMOUS_SESSIONS = 64;
/** Default: idle time after which a session is closed (10 minutes). */
export const DEFAULT_SESSION_IDLE_MS = 10 * 60_000;

interface Entry<T> {
  value: T;
  user: string | undefined;
  lastSeen: number;
  busy: number;
}

/** Why a session may not open: the HTTP status and message to answer with. */
export interface SessionRefusal {
  status: 401 | 429;
  message: string;
}

/** Open sessions by id, with the user each belongs to. */
export class SessionTable<T> {
  readonly #entries = new Map<string, Entry<T>>();
  /** Sessions being opened (admitted, not yet initialized or refused), by user key. */
  readonly #pending = new Map<string, number>();
  readonly #perUser: number;
  readonly #anonymous: number;
  readonly #idleMs: number;
  readonly #requireAuth: boolean;
  readonly #close: (value: T) => Promise<void>;
  readonly #sweeper: NodeJS.Timeout;

  /** `close` ends a session (its transport); the table forgets it when the transport reports closing. */
  constructor(limits: EndpointLimits, close: (value: T) => Promise<void>) {
    this.#perUser = limits.sessionsPerUser ?? DEFAULT_SESSIONS_PER_USER;
    this.#anonymous = limits.anonymousSessions ?? DEFAULT_ANONYMOUS_SESSIONS;
    this.#idleMs = limits.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
    this.#requireAuth = limits.requireAuth === true;
    this.#close = close;
    this.#sweeper = setInterval(() => this.#sweep(), Math.max(250, Math.min(this.#idleMs / 4, 60_000)));
    this.#sweeper.unref();
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * Admits a new session for the caller, or says why not. Admitted: call the returned `release()`
   * once the opening request is answered (the slot then counts only if the session opened).
   */
  admit(authInfo: ProxyAuthInfo | undefined): SessionRefusal | { release(): void } {
    const user = userOf(authInfo);
    if (authInfo === undefined && this.#requireAuth) {
      return { status: 401, message: "Unauthorized: sessions need a bearer token" };
    }
    const key = user === undefined ? "" : `u:${user}`;
    const cap = user === undefined ? this.#anonymous : this.#perUser;
    let open = this.#pending.get(key) ?? 0;
    for (const entry of this.#entries.values()) if (entry.user === user) open++;
    if (open >= cap) {
      return {
        status: 429,
        message: `Too many open sessions (${open}); close one or wait for an idle one to end`,
      };
    }
    this.#pending.set(key, (this.#pending.get(key) ?? 0) + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const left = (this.#pending.get(key) ?? 1) - 1;
        if (left > 0) this.#pending.set(key, left);
        else this.#pending.delete(key);
      },
    };
  }

  open(id: string, value: T, authInfo: ProxyAuthInfo | undefined): void {
    this.#entries.set(id, { value, user: userOf(authInfo), lastSeen: Date.now(), busy: 0 });
  }

  has(id: string): boolean {
    return this.#entries.has(id);
  }

  /** The session `id`, when it exists and belongs to the request's user (or both are anonymous). */
  find(id: string, authInfo: ProxyAuthInfo | undefined): T | undefined {
    const entry = this.#entries.get(id);
    return entry !== undefined && entry.user === userOf(authInfo) ? entry.value : undefined;
  }

  /**
   * Marks session `id` busy until `done` fires (a request or stream in progress): it does not idle
   * out meanwhile, and its idle time starts again when the last one ends.
   */
  hold(id: string, done: { once(event: "close", listener: () => void): unknown }): void {
    const entry = this.#entries.get(id);
    if (!entry) return;
    entry.busy++;
    entry.lastSeen = Date.now();
    done.once("close", () => {
      entry.busy--;
      entry.lastSeen = Date.now();
    });
  }

  delete(id: string): boolean {
    return this.#entries.delete(id);
  }

  values(): T[] {
    return [...this.#entries.values()].map((entry) => entry.value);
  }

  /** Stops the idle sweep (the endpoint closes the sessions). */
  stop(): void {
    clearInterval(this.#sweeper);
  }

  #sweep(): void {
    const now = Date.now();
    for (const [id, entry] of this.#entries) {
      if (entry.busy > 0 || now - entry.lastSeen < this.#idleMs) continue;
      this.#entries.delete(id);
      void this.#close(entry.value).catch(() => undefined);
    }
  }
}
