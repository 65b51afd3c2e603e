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
import { readFileSync } from "node:fs";
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
 * `os.tmpdir()`. On POSIX it is `os.tmpdir()`'s own rule, read here so that `new FileBridge()` does
 * not load `node:os` (~0.8 ms of CPU at start: docs/performance.md, session 21): `TMPDIR`, `TMP`,
 * `TEMP` or `/tmp`, without a trailing slash. Node ignores those variables in a process that runs
 * with raised privileges (set-user-ID, set-group-ID, or Linux's secure mode for file
 * capabilities); when one is set, that is checked (reading the auxiliary vector costs about as
 * much as loading `node:os`, so only then), and such a process, like Windows, asks `node:os`.
 */
export function tmpdir(): string {
  if (process.platform === "win32") return nodeOs().tmpdir();
  const { TMPDIR, TMP, TEMP } = process.env;
  const fromEnvironment = TMPDIR || TMP || TEMP;
  if (fromEnvironment && raisedPrivileges()) return nodeOs().tmpdir();
  const path = fromEnvironment || "/tmp";
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

let raised: boolean | undefined;
/**
 * Whether Node reads no environment variable for `os.tmpdir()` in this process (its
 * `SafeGetenv`): real and effective user or group ids differ, or Linux started it in secure mode
 * (`AT_SECURE` in the auxiliary vector). Unknown counts as raised.
 */
function raisedPrivileges(): boolean {
  if (raised === undefined) {
    raised = process.getuid?.() !== process.geteuid?.() || process.getgid?.() !== process.getegid?.();
    if (!raised && process.platform === "linux") {
      try {
        raised = atSecure(readFileSync("/proc/self/auxv"));
      } catch {
        raised = true;
      }
    }
  }
  return raised;
}

/**
 * `AT_SECURE` (23) of a Linux auxiliary vector of a 64-bit little-endian machine (`x64`, `arm64`):
 * pairs of 8-byte words, ended by `AT_NULL` (0). Any other machine, or a vector not understood,
 * counts as secure (so `node:os` answers).
 */
export function atSecure(auxv: Buffer, arch: string = process.arch): boolean {
  if (arch !== "x64" && arch !== "arm64") return true;
  for (let at = 0; at + 16 <= auxv.length; at += 16) {
    const type = auxv.readBigUInt64LE(at);
    if (type === 0n) return false;
    if (type === 23n) return auxv.readBigUInt64LE(at + 8) !== 0n;
  }
  return true;
}

/** `os.hostname()`, loading `node:os` at the first call. */
export function hostname(): string {
  return nodeOs().hostname();
}

/** `os.uptime()`, loading `node:os` at the first call. */
export function uptime(): number {
  return nodeOs().uptime();
}
