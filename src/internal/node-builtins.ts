/**
 * Node builtins the package needs on a call but not at start, loaded on first use (issue 39):
 * `node:crypto` (hashes, ids, signatures) costs ~1.5 ms of CPU to load, `node:worker_threads`
 * ~0.4 ms and `node:os` ~0.2 ms, and an SDK server loads none of them, so importing the root and making a `FileBridge` must
 * not (test/package/budgets.test.ts; docs/performance.md, session 19).
 *
 * The functions here have the signatures of the builtins' own and load the module at their first
 * call, synchronously: `process.getBuiltinModule` where the runtime has it (Node 20.16 and later,
 * Deno, Bun, workerd), else `require` from `createRequire` (Node 20.0–20.15; a builtin resolves the
 * same from any folder, so the base is the file-system root). One loader for the ESM and CommonJS
 * builds (neither `import.meta.url` nor `require` exists in both).
 */
import type * as Crypto from "node:crypto";
import { createRequire } from "node:module";
import type * as Os from "node:os";
import type * as WorkerThreads from "node:worker_threads";

type Load = (id: string) => unknown;
let load: Load | undefined;
/** The builtin `id` (`node:...`), loaded now if it is not yet. */
function builtin<T>(id: string): T {
  load ??= (process as { getBuiltinModule?: Load }).getBuiltinModule?.bind(process) ?? createRequire("/");
  return load(id) as T;
}

let crypto: typeof Crypto | undefined;
/** `node:crypto`, loaded at the first call. */
export function nodeCrypto(): typeof Crypto {
  crypto ??= builtin<typeof Crypto>("node:crypto");
  return crypto;
}

/** `crypto.createHash`, loading `node:crypto` at the first call. */
export function createHash(algorithm: string, options?: Crypto.HashOptions): Crypto.Hash {
  return nodeCrypto().createHash(algorithm, options);
}

/** `crypto.createHmac`, loading `node:crypto` at the first call. */
export function createHmac(algorithm: string, key: Crypto.BinaryLike | Crypto.KeyObject): Crypto.Hmac {
  return nodeCrypto().createHmac(algorithm, key);
}

/** `crypto.hkdfSync`, loading `node:crypto` at the first call. */
export function hkdfSync(
  digest: string,
  ikm: Crypto.BinaryLike | Crypto.KeyObject,
  salt: Crypto.BinaryLike,
  info: Crypto.BinaryLike,
  keylen: number,
): ArrayBuffer {
  return nodeCrypto().hkdfSync(digest, ikm, salt, info, keylen);
}

/** `crypto.randomBytes` (synchronous), loading `node:crypto` at the first call. */
export function randomBytes(size: number): Buffer {
  return nodeCrypto().randomBytes(size);
}

/** `crypto.randomFillSync`, loading `node:crypto` at the first call. */
export function randomFillSync<T extends NodeJS.ArrayBufferView>(
  buffer: T,
  offset?: number,
  size?: number,
): T {
  return nodeCrypto().randomFillSync(buffer, offset, size);
}

/** `crypto.randomUUID`, loading `node:crypto` at the first call. */
export function randomUUID(): `${string}-${string}-${string}-${string}-${string}` {
  return nodeCrypto().randomUUID();
}

/** `crypto.timingSafeEqual`, loading `node:crypto` at the first call. */
export function timingSafeEqual(a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView): boolean {
  return nodeCrypto().timingSafeEqual(a, b);
}

/**
 * `crypto.hash` (one-shot digest, Node 20.12 and later), or `undefined` on an older Node; loads
 * `node:crypto` at the first call.
 */
export function oneShotHash(): typeof Crypto.hash | undefined {
  return (nodeCrypto() as { hash?: typeof Crypto.hash }).hash;
}

/** `new Worker(...)` of `node:worker_threads`, loading the module at the first call. */
export function newWorker(
  filename: string | URL,
  options?: WorkerThreads.WorkerOptions,
): WorkerThreads.Worker {
  return new (builtin<typeof WorkerThreads>("node:worker_threads").Worker)(filename, options);
}

let os: typeof Os | undefined;
/** `node:os`, loaded at the first call. */
function nodeOs(): typeof Os {
  os ??= builtin<typeof Os>("node:os");
  return os;
}

/**
 * `os.tmpdir()`, loading `node:os` only when it has something to decide (~0.8 ms of CPU at start:
 * docs/performance.md, session 21): on POSIX with none of `TMPDIR`, `TMP`, `TEMP` set, the answer
 * is `/tmp` whatever the process's privileges, so `new FileBridge()` on a typical server loads no
 * `node:os`. With one set (Node ignores them in a set-user-ID or secure-mode process) and on
 * Windows, `node:os` answers.
 */
export function tmpdir(): string {
  const { TMPDIR, TMP, TEMP } = process.env;
  return process.platform === "win32" || TMPDIR || TMP || TEMP ? nodeOs().tmpdir() : "/tmp";
}

/** `os.hostname()`, loading `node:os` at the first call. */
export function hostname(): string {
  return nodeOs().hostname();
}

/** `os.uptime()`, loading `node:os` at the first call. */
export function uptime(): number {
  return nodeOs().uptime();
}
