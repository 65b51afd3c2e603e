/**
 * HMAC-SHA256 (RFC 2104) for the signed-URL paths, which run it on every mint and every verify: two
 * one-shot digests (`crypto.hash`) over the key's inner and outer pads, which the key computes once.
 * `createHmac` builds an `Hmac` object per call, and under OpenSSL 3 each one looks the digest up
 * again (`HMAC_Init_ex` → `evp_generic_fetch`): 3–4% of the main thread's CPU in a 4 KiB upload
 * (docs/performance.md, Session 13). The bytes are exactly `createHmac("sha256", key)`'s
 * (test/signing/hmac.test.ts); a Node without `crypto.hash` (before 20.12) gets `createHmac` itself.
 */
import { createHash, createHmac, oneShotHash } from "../internal/node-builtins.js";

const BLOCK = 64;
const DIGEST = 32;

/** One HMAC-SHA256 key, ready to authenticate messages synchronously. */
export class HmacSha256 {
  readonly #key: Buffer;
  /** `crypto.hash`, or `undefined` on a Node without it. */
  readonly #hash = oneShotHash();
  /** The inner pad, then room for a message (grown when a longer one comes). */
  #inner: Buffer;
  /** The outer pad, then the inner digest. */
  readonly #outer: Buffer;

  /** @param key The secret (copied; a key longer than a block is hashed first, as RFC 2104 says). */
  constructor(key: Uint8Array) {
    this.#key = Buffer.from(key);
    const padded = Buffer.alloc(BLOCK);
    if (key.byteLength > BLOCK) createHash("sha256").update(key).digest().copy(padded);
    else padded.set(key);
    this.#inner = Buffer.allocUnsafe(BLOCK + 512);
    this.#outer = Buffer.allocUnsafe(BLOCK + DIGEST);
    for (let i = 0; i < BLOCK; i++) {
      this.#inner[i] = (padded[i] as number) ^ 0x36;
      this.#outer[i] = (padded[i] as number) ^ 0x5c;
    }
  }

  /** The MAC of `message`; a string is taken as Latin-1 (one byte per character, as JWS input is). */
  digest(message: string | Uint8Array): Buffer {
    const oneShot = this.#hash;
    if (!oneShot) {
      const hmac = createHmac("sha256", this.#key);
      return (typeof message === "string" ? hmac.update(message, "latin1") : hmac.update(message)).digest();
    }
    const length = typeof message === "string" ? message.length : message.byteLength;
    if (BLOCK + length > this.#inner.length) {
      const grown = Buffer.allocUnsafe(BLOCK + Math.max(length, 2 * (this.#inner.length - BLOCK)));
      this.#inner.copy(grown, 0, 0, BLOCK);
      this.#inner = grown;
    }
    // Written after the pad and hashed at once: nothing else runs in between (one thread).
    if (typeof message === "string") this.#inner.write(message, BLOCK, length, "latin1");
    else this.#inner.set(message, BLOCK);
    const inner = oneShot("sha256", this.#inner.subarray(0, BLOCK + length), "buffer") as unknown as Buffer;
    inner.copy(this.#outer, BLOCK);
    return oneShot("sha256", this.#outer, "buffer") as unknown as Buffer;
  }
}
