/**
 * sha256 of a put's bytes without blocking the main thread for large bodies: the first bytes are
 * batched; a body that ends within one batch is hashed in place, a larger one is hashed batch by
 * batch in one shared worker thread, with a bounded number of batches in flight (memory stays flat).
 * The same worker also hashes files as they are written (`FileSha256`): it reads them itself, so the
 * main thread copies nothing.
 */

import type { Worker } from "node:worker_threads";
import { createHash, newWorker } from "../../internal/node-builtins.js";

/** Bytes copied into one batch before it is handed to the worker. */
const BATCH_BYTES = 1024 * 1024;
/** Batches a put may have in the worker before its writer waits (memory bound per put). */
const MAX_IN_FLIGHT = 4;
/** Batch buffers kept for reuse (the worker hands each one back): no garbage per MiB hashed. */
const POOL_SIZE = 16;
const pool: ArrayBuffer[] = [];
/** Bytes the worker reads from a file at once when it hashes a file being written (see `FileSha256`). */
const FILE_READ_BYTES = 1024 * 1024;

/**
 * Linux scheduling priorities (nice values) below the process's own that the worker takes.
 *
 * Why (docs/performance.md, Session 18): the hashing is never what an upload waits for while its
 * bytes flow: the worker only has to catch up by the end. At the process's own priority it took a
 * core for whole time slices, so the upload's socket, file-write and client threads, waking many
 * times a millisecond, waited behind it; a 256 MiB upload took ~0.2 s longer with no more CPU. Ten
 * steps lower (about a tenth of the CPU share when a core is contended), the scheduler runs a waking
 * thread at once and the worker takes what is idle. It still gets CPU whenever a core is free, and the
 * upload's end waits for its digest, so no hash is starved for long.
 */
const WORKER_NICE_STEPS = 10;
/**
 * Lowers the worker thread's own priority: on Linux the nice value is per thread (`setpriority`
 * with pid 0 changes the calling thread only). On other systems the same call changes the whole
 * process, so it is not made there. Relative to the current value, never raised, never fatal.
 */
const lowerPriority = `if (process.platform === "linux") {
  try {
    const os = require("node:os");
    os.setPriority(Math.min(19, os.getPriority() + ${WORKER_NICE_STEPS}));
  } catch {}
}`;

/**
 * The worker: one hash per job id; acknowledges each batch by handing its buffer back (so memory
 * never waits for a worker GC), answers `end` with the digest.
 */
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
${lowerPriority}
const { createHash } = require("node:crypto");
const { closeSync, openSync, readSync } = require("node:fs");
const jobs = new Map();
const files = new Map();
let readBuffer;
function closeFile(job) {
  if (job.fd !== undefined) closeSync(job.fd);
  job.fd = undefined;
}
function onFile(message) {
  const { id } = message;
  if (message.path !== undefined) {
    const job = { hash: createHash("sha256"), fd: undefined, at: 0, failed: false };
    files.set(id, job);
    try {
      job.fd = openSync(message.path, "r");
    } catch (error) {
      job.failed = true;
      parentPort.postMessage({ id, error: String(error && error.message) });
    }
    return;
  }
  const job = files.get(id);
  if (!job) return;
  if (message.cancel || job.failed) {
    if (message.cancel || message.end) files.delete(id);
    closeFile(job);
    return;
  }
  try {
    readBuffer ??= Buffer.allocUnsafeSlow(${FILE_READ_BYTES});
    while (job.at < message.upTo) {
      const want = Math.min(readBuffer.length, message.upTo - job.at);
      const got = readSync(job.fd, readBuffer, 0, want, job.at);
      if (got === 0) throw new Error("the file is shorter than the bytes written to it");
      job.hash.update(readBuffer.subarray(0, got));
      job.at += got;
    }
  } catch (error) {
    job.failed = true;
    closeFile(job);
    parentPort.postMessage({ id, error: String(error && error.message) });
    return;
  }
  if (message.end) {
    files.delete(id);
    closeFile(job);
    parentPort.postMessage({ id, digest: job.hash.digest("hex") });
  }
}
parentPort.on("message", (message) => {
  if (message.file) {
    onFile(message);
    return;
  }
  const { id } = message;
  if (message.cancel) {
    jobs.delete(id);
    return;
  }
  let hash = jobs.get(id);
  if (!hash) {
    hash = createHash("sha256");
    jobs.set(id, hash);
  }
  if (message.data) {
    hash.update(message.data);
    const buffer = message.data.buffer;
    parentPort.postMessage({ id, ack: true, buffer }, [buffer]);
  }
  if (message.end) {
    jobs.delete(id);
    parentPort.postMessage({ id, digest: hash.digest("hex") });
  }
});
`;
interface Job {
  onAck?(): void;
  onDigest(digest: string): void;
  onError(error: Error): void;
}

/**
 * A message to the worker: a batch of bytes (`data`, transferred) of a stream job, or, with `file`,
 * a file job: `path` to open, `upTo` (bytes of the file that are written and may be hashed), `end`.
 */
export interface HashMessage {
  data?: Uint8Array;
  end?: true;
  cancel?: true;
  file?: true;
  path?: string;
  upTo?: number;
}

/** The process's hashing worker, started on first use, holding the event loop only while it works. */
export class HashWorker {
  private worker: Worker | null = null;
  private readonly jobs = new Map<number, Job>();
  private nextId = 1;

  /** Starts a job; returns its id. Throws if no worker can be started. */
  open(job: Job): number {
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    this.jobs.set(id, job);
    if (this.jobs.size === 1) worker.ref();
    return id;
  }

  post(id: number, message: HashMessage): void {
    const { data } = message;
    const transfer = data ? [data.buffer as ArrayBuffer] : [];
    this.worker?.postMessage({ id, ...message }, transfer);
    if (message.cancel) this.close(id);
  }

  close(id: number): void {
    if (this.jobs.delete(id) && this.jobs.size === 0) this.worker?.unref();
  }

  private start(): Worker {
    const worker = newWorker(WORKER_SOURCE, {
      eval: true,
      name: "mcp-file-bridge sha256",
      // None of the process's Node options: its source is CommonJS, which `--input-type=module`
      // would break (see fs-writer-thread.ts).
      execArgv: [],
    });
    type Reply = { id: number; ack?: true; buffer?: ArrayBuffer; digest?: string; error?: string };
    worker.on("message", (message: Reply) => {
      if (message.buffer && pool.length < POOL_SIZE) pool.push(message.buffer);
      const job = this.jobs.get(message.id);
      if (!job) return;
      if (message.ack) job.onAck?.();
      if (message.error !== undefined) {
        this.close(message.id);
        job.onError(new Error(`the sha256 worker could not read the file: ${message.error}`));
      }
      if (message.digest !== undefined) {
        this.close(message.id);
        job.onDigest(message.digest);
      }
    });
    const fail = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = null;
      const jobs = [...this.jobs.values()];
      this.jobs.clear();
      for (const job of jobs) job.onError(error);
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`the sha256 worker exited with code ${code}`)));
    worker.unref();
    this.worker = worker;
    return worker;
  }
}

let shared: HashWorker | undefined;

/** The process's hashing worker (started on first use); throws if no worker can be started. */
export function hashWorker(): HashWorker {
  shared ??= new HashWorker();
  return shared;
}

/** A batch buffer of its own ArrayBuffer (transferable), from the pool when one is free. */
function batchBuffer(): Buffer {
  const reused = pool.pop();
  return reused ? Buffer.from(reused) : Buffer.allocUnsafeSlow(BATCH_BYTES);
}

/**
 * An incremental sha256 whose work leaves the main thread once the bytes pass one batch (1 MiB).
 * `update` copies the chunk (the caller keeps it) and returns a promise only when the caller should
 * wait for the worker to catch up; `digest` returns the exact hex digest of every byte given. If the
 * worker cannot be started, or fails, the hash falls back to (or fails on) the main thread: never a
 * wrong digest.
 *
 * @example
 * ```ts
 * const hash = new Sha256Stream();
 * for await (const chunk of body) await hash.update(chunk);
 * const hex = await hash.digest();
 * ```
 */
export class Sha256Stream {
  private batch: Buffer | null = null;
  private filled = 0;
  private id = 0;
  private inFlight = 0;
  private local: ReturnType<typeof createHash> | null = null;
  private waiting: (() => void) | null = null;
  private failure: Error | null = null;
  private result: Promise<string> | null = null;
  private settle: { resolve(digest: string): void; reject(error: Error): void } | null = null;

  /** Adds bytes; resolves once the worker has room again when too many batches are in flight. */
  update(chunk: Uint8Array): Promise<void> | undefined {
    if (this.failure) return Promise.reject(this.failure);
    if (this.local) {
      this.local.update(chunk);
      return undefined;
    }
    let offset = 0;
    while (offset < chunk.byteLength) {
      this.batch ??= batchBuffer();
      const take = Math.min(BATCH_BYTES - this.filled, chunk.byteLength - offset);
      this.batch.set(chunk.subarray(offset, offset + take), this.filled);
      this.filled += take;
      offset += take;
      if (this.filled === BATCH_BYTES) this.send();
      // No worker could start (workerd): `send()` hashed the batch here; so is the rest of the chunk.
      const local = this.local as ReturnType<typeof createHash> | null;
      if (local) {
        local.update(chunk.subarray(offset));
        return undefined;
      }
    }
    if (this.inFlight < MAX_IN_FLIGHT) return undefined;
    return new Promise<void>((resolve, reject) => {
      this.waiting = () => (this.failure ? reject(this.failure) : resolve());
    });
  }

  /** The hex sha256 of every byte given to {@link update}. Call once, after the last update. */
  digest(): Promise<string> {
    if (this.result) return this.result;
    if (this.failure) return Promise.reject(this.failure);
    if (this.local) return Promise.resolve(this.local.digest("hex"));
    if (this.id === 0) {
      const hash = createHash("sha256");
      if (this.batch) hash.update(this.batch.subarray(0, this.filled));
      this.batch = null;
      return Promise.resolve(hash.digest("hex"));
    }
    this.result = new Promise<string>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    const data = this.filled > 0 ? this.batch?.subarray(0, this.filled) : undefined;
    this.batch = null;
    this.filled = 0;
    (shared as HashWorker).post(this.id, data ? { data, end: true } : { end: true });
    return this.result;
  }

  /** Drops a hash that will not be finished (an aborted put), freeing its worker job. */
  dispose(): void {
    if (this.id !== 0 && !this.result) {
      shared?.post(this.id, { cancel: true });
      this.id = 0;
    }
    this.batch = null;
  }

  /** Hands the full batch to the worker (starting the job), or hashes in place if none can start. */
  private send(): void {
    const batch = this.batch as Buffer;
    this.batch = null;
    this.filled = 0;
    if (this.id === 0) {
      try {
        shared ??= new HashWorker();
        this.id = shared.open({
          onAck: () => {
            this.inFlight--;
            const wake = this.waiting;
            this.waiting = null;
            wake?.();
          },
          onDigest: (digest) => this.settle?.resolve(digest),
          onError: (error) => {
            this.failure = error;
            this.settle?.reject(error);
            const wake = this.waiting;
            this.waiting = null;
            wake?.();
          },
        });
      } catch {
        this.local = createHash("sha256").update(batch);
        return;
      }
    }
    this.inFlight++;
    (shared as HashWorker).post(this.id, { data: batch });
  }
}
