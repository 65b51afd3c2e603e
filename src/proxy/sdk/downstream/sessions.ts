/**
 * The 2025-era sessions of an HTTP endpoint (either SDK generation), each bound to the identity that
 * opened it: a session id is a bearer secret, and holding one must not let another user (or an
 * anonymous caller) act in, or listen on, someone else's session.
 */
import type { ProxyAuthInfo } from "../../http-host.js";

/** The verified user of a request (`extra.sub`), or `undefined` for an anonymous one. */
export function userOf(authInfo: ProxyAuthInfo | undefined): string | undefined {
  const sub = authInfo?.extra?.sub;
  return typeof sub === "string" && sub.length > 0 ? sub : undefined;
}

/** Open sessions by id, with the user each belongs to. */
export class SessionTable<T> {
  readonly #entries = new Map<string, { value: T; user: string | undefined }>();

  get size(): number {
    return this.#entries.size;
  }

  open(id: string, value: T, authInfo: ProxyAuthInfo | undefined): void {
    this.#entries.set(id, { value, user: userOf(authInfo) });
  }

  has(id: string): boolean {
    return this.#entries.has(id);
  }

  /** The session `id`, when it exists and belongs to the request's user (or both are anonymous). */
  find(id: string, authInfo: ProxyAuthInfo | undefined): T | undefined {
    const entry = this.#entries.get(id);
    return entry !== undefined && entry.user === userOf(authInfo) ? entry.value : undefined;
  }

  delete(id: string): boolean {
    return this.#entries.delete(id);
  }

  values(): T[] {
    return [...this.#entries.values()].map((entry) => entry.value);
  }
}
