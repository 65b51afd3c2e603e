import { createHash, createHmac, hkdfSync } from "../internal/node-builtins.js";

const SCOPE_REF_DOMAIN = "mcp-file-bridge/scope-ref/v1\0";
const KEYED_INFO = "mcp-file-bridge/scope-ref/hmac/v1";
/** Scopes whose reference is kept; the cache is dropped whole when it is full (no per-entry LRU). */
const CACHE_LIMIT = 10_000;

/**
 * How one deployment turns scopes into their opaque references (see `scopeRef`): an HMAC-SHA-256
 * under a key derived (HKDF) from the server secret, truncated to 128 bits, base64url (22
 * characters). The same on every replica that shares the secret and after a restart; without the
 * secret nobody can compute the reference of a scope, even a guessable one such as a user name.
 * A `SignedUrlMinter` builds one from its keys (`minter.scopeRefs`): every piece given that minter
 * (or a minter with the same keys) agrees on references.
 *
 * References are cached per scope (a page of `resources/list` computes each scope's once).
 *
 * @example
 * ```ts
 * const refs = new ScopeRefs([secretBytes]);
 * refs.of("user-42"); // "Zq8…", 22 characters
 * refs.matches(refs.of("user-42"), "user-42"); // true
 * ```
 */
export class ScopeRefs {
  /** True when references are keyed (a secret was given). */
  readonly keyed: boolean;
  readonly #keys: Buffer[];
  readonly #cache = new Map<string, string>();
  readonly #older = new Map<string, string[]>();

  /**
   * @param secrets The server secrets, current first (a rotated-out secret after it keeps the
   *   references made under it resolving). None: the unkeyed SHA-256 reference.
   */
  constructor(secrets: readonly Uint8Array[] = []) {
    this.#keys = secrets.map((secret) =>
      Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), KEYED_INFO, 32)),
    );
    this.keyed = this.#keys.length > 0;
  }

  /** The reference of `scope` (under the current secret). */
  of(scope: string): string {
    let ref = this.#cache.get(scope);
    if (ref === undefined) {
      const key = this.#keys[0];
      ref = key === undefined ? unkeyedScopeRef(scope) : keyedRef(key, scope);
      if (this.#cache.size >= CACHE_LIMIT) this.#cache.clear();
      this.#cache.set(scope, ref);
    }
    return ref;
  }

  /**
   * True when `ref` stands for `scope`: its reference under the current secret, under an older
   * secret still listed, or the unkeyed reference earlier versions issued (so handles and URIs
   * handed out before keying keep resolving for their owner). Only ever asked about the caller's
   * own scope: a match grants nothing the caller does not already have.
   */
  matches(ref: string, scope: string): boolean {
    if (ref === this.of(scope)) return true;
    if (!this.keyed) return false;
    let older = this.#older.get(scope);
    if (older === undefined) {
      older = [...this.#keys.slice(1).map((key) => keyedRef(key, scope)), unkeyedScopeRef(scope)];
      if (this.#older.size >= CACHE_LIMIT) this.#older.clear();
      this.#older.set(scope, older);
    }
    return older.includes(ref);
  }
}

function keyedRef(key: Buffer, scope: string): string {
  return createHmac("sha256", key)
    .update(SCOPE_REF_DOMAIN)
    .update(scope)
    .digest()
    .subarray(0, 16)
    .toString("base64url");
}

/** The unkeyed reference: a domain-separated SHA-256 of the scope, the same in every deployment. */
export function unkeyedScopeRef(scope: string): string {
  return createHash("sha256")
    .update(SCOPE_REF_DOMAIN)
    .update(scope)
    .digest()
    .subarray(0, 16)
    .toString("base64url");
}

/** References for pieces that have no secret (no minter): the unkeyed form. */
export const UNKEYED_SCOPE_REFS = new ScopeRefs();

/**
 * The scope references of a piece's minter (`minter.scopeRefs`), else the unkeyed ones.
 */
export function scopeRefsOf(minter: unknown): ScopeRefs {
  const refs = (minter as { scopeRefs?: unknown } | null | undefined)?.scopeRefs;
  return refs instanceof ScopeRefs ? refs : UNKEYED_SCOPE_REFS;
}
