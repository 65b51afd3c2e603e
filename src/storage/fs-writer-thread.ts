/**
 * One thread that writes small files for every `fsStore` of the process. A file of a few KiB costs
 * three thread-pool round trips with `fs.writeFile` (open, write, close), and on a 2-core machine
 * those trips cost more CPU than the syscalls; written on the calling thread instead, the syscalls
 * hold the event loop (and while ext4 is slow after a mass delete, a create costs half a
 * millisecond). Here the calling thread copies the path and bytes into a slot of shared memory and
 * goes on; the writer thread creates the file, writes it and closes it with synchronous calls (or
 * renames one), and marks the slot done. The writer sleeps on `Atomics.wait` only while there is
 * nothing to write (and is woken with `Atomics.notify`); it posts a message only when the calling
 * thread has asked for one (it has writes in flight and has settled every finished one), so one
 * message may settle many writes. (`Atomics.waitAsync` in place of the message measured no better;
 * docs/performance.md, Session 11.)
 *
 * Writes larger than a slot (and every write before the thread has started or after it failed) go
 * to the thread pool instead (see `fs-small-writes.ts`); while all 8 slots are taken, writes wait
 * for one, first come first served. One thread writes for every store: a disk that stops answering
 * holds the small writes of every `fsStore` in the process, not the thread pool.
 */
import type { Worker } from "node:worker_threads";
import { newWorker } from "../internal/node-builtins.js";

/**
 * Slots: writes in flight at once (a power of two). Eight keep the one writer busy; each slot is
 * shared memory held for the life of the process, which counts against V8's old-generation limit
 * like every buffer allocated after start-up, so more of them brought big uploads' back-to-back
 * full collections on sooner (32 slots, 2.25 MiB: docs/performance.md, Session 18).
 */
const SLOTS = 8;
/** Bytes of one slot: path(s) and file bytes together. */
export const SLOT_BYTES = 72 * 1024;
/** Int32 fields per slot: op, mode, first length, second length, result. */
const FIELDS = 5;
const OP_WRITE = 1;
const OP_RENAME = 2;
/** Result field: 0 while pending, then done or failed (the error code is in the slot's bytes). */
const DONE = 1;
const FAILED = 2;
/** Control fields: submitted, taken, finished, writer asleep, calling thread waiting for a message. */
const SUBMITTED = 0;
const TAKEN = 1;
const FINISHED = 2;
const ASLEEP = 3;
const WAKE = 4;

const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { renameSync, writeFileSync } = require("node:fs");
const { control, ring, fields, bytes, SLOTS, SLOT_BYTES, FIELDS } = workerData;
const decoder = new TextDecoder();
const encoder = new TextEncoder();
parentPort.postMessage(1);
for (;;) {
  const submitted = Atomics.load(control, ${SUBMITTED});
  let taken = control[${TAKEN}];
  if (taken === submitted) {
    Atomics.store(control, ${ASLEEP}, 1);
    if (Atomics.load(control, ${SUBMITTED}) === submitted) Atomics.wait(control, ${SUBMITTED}, submitted);
    Atomics.store(control, ${ASLEEP}, 0);
    continue;
  }
  while (taken !== submitted) {
    const slot = ring[taken & (SLOTS - 1)];
    const at = slot * FIELDS;
    const start = slot * SLOT_BYTES;
    const first = fields[at + 2];
    const second = fields[at + 3];
    const path = decoder.decode(bytes.subarray(start, start + first));
    let result = ${DONE};
    try {
      if (fields[at] === ${OP_WRITE}) {
        writeFileSync(path, bytes.subarray(start + first, start + first + second), { mode: fields[at + 1], flag: "wx" });
      } else {
        renameSync(path, decoder.decode(bytes.subarray(start + first, start + first + second)));
      }
    } catch (error) {
      result = ${FAILED};
      // "<code> <syscall>" (the step that failed: open, write, close or rename), and the errno.
      const what = String((error && error.code) || "EIO") + " " + String((error && error.syscall) || "open");
      fields[at + 2] = encoder.encodeInto(what.slice(0, 64), bytes.subarray(start, start + 64)).written;
      fields[at + 3] = Number((error && error.errno) || 0);
    }
    Atomics.store(fields, at + 4, result);
    taken = (taken + 1) | 0;
    Atomics.store(control, ${TAKEN}, taken);
    Atomics.add(control, ${FINISHED}, 1);
    if (Atomics.compareExchange(control, ${WAKE}, 1, 0) === 1) parentPort.postMessage(0);
  }
}
`;

interface Pending {
  resolve(): void;
  reject(error: Error): void;
  /** For the error: the path(s), as Node's own fs errors name them. */
  path: string;
  dest?: string;
}

/**
 * Thrown by {@link FsWriterThread.write} and {@link FsWriterThread.rename} when the thread failed
 * before the write was handed to it: nothing was written, so the caller may write on the thread pool.
 */
export class WriterUnavailable extends Error {
  constructor(cause: Error) {
    super("the file writer thread is not available", { cause });
    this.name = "WriterUnavailable";
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * A system error as Node's `fs` makes them (`code`, `errno`, `syscall`, `path`), for callers that
 * test `code`.
 */
function systemError(code: string, syscall: string, errno: number, pending: Pending): NodeJS.ErrnoException {
  const where = pending.dest === undefined ? `'${pending.path}'` : `'${pending.path}' -> '${pending.dest}'`;
  const error: NodeJS.ErrnoException = new Error(`${code}: ${syscall} ${where}`);
  error.code = code;
  error.errno = errno;
  error.syscall = syscall;
  error.path = pending.path;
  if (pending.dest !== undefined) (error as NodeJS.ErrnoException & { dest?: string }).dest = pending.dest;
  return error;
}

/** The process's writer thread (see the module comment). */
export class FsWriterThread {
  readonly #control = new Int32Array(new SharedArrayBuffer(5 * 4));
  readonly #ring = new Int32Array(new SharedArrayBuffer(SLOTS * 4));
  readonly #fields = new Int32Array(new SharedArrayBuffer(SLOTS * FIELDS * 4));
  readonly #bytes = new Uint8Array(new SharedArrayBuffer(SLOTS * SLOT_BYTES));
  readonly #free: number[] = Array.from({ length: SLOTS }, (_, slot) => SLOTS - 1 - slot);
  readonly #pending = new Map<number, Pending>();
  /** Callers waiting for a free slot: each is handed one (or `undefined` once the thread failed). */
  readonly #queue: Array<(slot: number | undefined) => void> = [];
  readonly #worker: Worker;
  #watching = false;
  /** Set once the thread has started and said so: until then writes go to the thread pool. */
  #ready = false;
  #failed: Error | undefined;
  /** Set once the thread's failure has been settled (see {@link #fail}). */
  #settled = false;
  /** Settles when the thread has started (`true`) or failed first (`false`). */
  readonly #started: Promise<boolean>;
  #settleStarted: (started: boolean) => void = () => {};

  /** @param counterStart Where the shared counters start (tests: just before they wrap at 2^31). */
  constructor(counterStart = 0) {
    for (const field of [SUBMITTED, TAKEN, FINISHED]) this.#control[field] = counterStart;
    this.#worker = newWorker(WORKER_SOURCE, {
      eval: true,
      name: "mcp-file-bridge writer",
      // None of the process's Node options: its source is CommonJS, which `--input-type=module`
      // would break, and under `--expose-gc` the writer ran ten times slower.
      execArgv: [],
      workerData: {
        control: this.#control,
        ring: this.#ring,
        fields: this.#fields,
        bytes: this.#bytes,
        SLOTS,
        SLOT_BYTES,
        FIELDS,
      },
      // Its own small heap: it holds nothing but strings for the paths.
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 },
    });
    this.#started = new Promise<boolean>((resolve) => {
      this.#settleStarted = resolve;
    });
    this.#worker.on("message", () => {
      if (!this.#ready) {
        this.#ready = true;
        this.#settleStarted(true);
        return;
      }
      this.#watching = false;
      this.#watch();
    });
    const fail = (error: Error) => this.#fail(error);
    this.#worker.once("error", fail);
    this.#worker.once("exit", (code) => fail(new Error(`the file writer thread exited (${code})`)));
    // After the listeners: adding a "message" listener refs the worker again. An idle writer never
    // keeps the process alive; #watch refs it only while writes are in flight.
    this.#worker.unref();
  }

  /** Whether the thread takes writes: it has started, and not failed. */
  get usable(): boolean {
    return this.#ready && this.#failed === undefined;
  }

  /** Resolves once the thread has started (`true`), or failed to (`false`). */
  async started(): Promise<boolean> {
    // Referenced while starting, so that awaiting this alone keeps the process alive.
    this.#worker.ref();
    try {
      await this.#started;
    } finally {
      if (this.#pending.size === 0) this.#worker.unref();
    }
    return this.usable;
  }

  /** Whether `path` (and `bytes`, or a second path) fit in one slot. */
  fits(path: string, second: Uint8Array | string): boolean {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    const size = typeof second === "string" ? second.length * 3 : second.byteLength;
    return path.length * 3 + size <= SLOT_BYTES;
  }

  /**
   * Creates `path` exclusively with `mode` and writes `bytes` to it (as `writeFile` with flag
   * `"wx"`). Rejects with {@link WriterUnavailable} when the thread failed before it took the write,
   * and with a `RangeError` when the two do not {@link fits fit} a slot.
   */
  async write(path: string, bytes: Uint8Array, mode: number): Promise<void> {
    if (!this.fits(path, bytes)) throw new RangeError("the write does not fit a writer slot");
    const slot = await this.#slot();
    const start = slot * SLOT_BYTES;
    const first = encoder.encodeInto(path, this.#bytes.subarray(start, start + SLOT_BYTES)).written;
    this.#bytes.set(bytes, start + first);
    return this.#submit(slot, OP_WRITE, mode, first, bytes.byteLength, { path });
  }

  /** Renames `from` to `to` (rejects as {@link write} does). */
  async rename(from: string, to: string): Promise<void> {
    if (!this.fits(from, to)) throw new RangeError("the rename does not fit a writer slot");
    const slot = await this.#slot();
    const start = slot * SLOT_BYTES;
    const view = this.#bytes.subarray(start, start + SLOT_BYTES);
    const first = encoder.encodeInto(from, view).written;
    const second = encoder.encodeInto(to, view.subarray(first)).written;
    return this.#submit(slot, OP_RENAME, 0, first, second, { path: from, dest: to });
  }

  /** A free slot, once there is one (first come, first served: a freed slot goes to the longest waiting). */
  async #slot(): Promise<number> {
    if (this.#failed) throw new WriterUnavailable(this.#failed);
    const free = this.#queue.length === 0 ? this.#free.pop() : undefined;
    if (free !== undefined) return free;
    const slot = await new Promise<number | undefined>((resolve) => this.#queue.push(resolve));
    if (slot === undefined)
      throw new WriterUnavailable(this.#failed ?? new Error("the file writer thread failed"));
    return slot;
  }

  #submit(
    slot: number,
    op: number,
    mode: number,
    first: number,
    second: number,
    what: Omit<Pending, "resolve" | "reject">,
  ): Promise<void> {
    const fields = this.#fields;
    const at = slot * FIELDS;
    fields[at] = op;
    fields[at + 1] = mode;
    fields[at + 2] = first;
    fields[at + 3] = second;
    Atomics.store(fields, at + 4, 0);
    const done = new Promise<void>((resolve, reject) => {
      this.#pending.set(slot, { resolve, reject, ...what });
    });
    const control = this.#control;
    const submitted = control[SUBMITTED] as number;
    // Counters wrap at 2^31 (Int32); SLOTS is a power of two, so the ring index stays right.
    this.#ring[submitted & (SLOTS - 1)] = slot;
    Atomics.store(control, SUBMITTED, (submitted + 1) | 0);
    if (Atomics.load(control, ASLEEP) === 1) Atomics.notify(control, SUBMITTED);
    this.#watch();
    return done;
  }

  /**
   * Settles the finished writes, then, while any are in flight, asks the writer for a message at its
   * next finished write. The count is read before the results and again after asking: a write that
   * finished in between is settled now (or, when the writer took the request first, by its message).
   */
  #watch(): void {
    if (this.#watching) return;
    const control = this.#control;
    for (;;) {
      const seen = Atomics.load(control, FINISHED);
      this.#collect();
      if (this.#pending.size === 0) {
        this.#worker.unref();
        return;
      }
      Atomics.store(control, WAKE, 1);
      if (Atomics.load(control, FINISHED) !== seen && Atomics.compareExchange(control, WAKE, 1, 0) === 1) {
        continue;
      }
      this.#watching = true;
      // Referenced while writes are in flight: the message is what settles them.
      this.#worker.ref();
      return;
    }
  }

  /** Settles every finished write and frees its slot. */
  #collect(): void {
    for (const [slot, pending] of this.#pending) {
      const at = slot * FIELDS;
      const result = Atomics.load(this.#fields, at + 4);
      if (result === 0) continue;
      this.#pending.delete(slot);
      if (result === DONE) pending.resolve();
      else {
        const start = slot * SLOT_BYTES;
        const what = decoder.decode(this.#bytes.subarray(start, start + (this.#fields[at + 2] as number)));
        const [code = "EIO", syscall = "open"] = what.split(" ");
        pending.reject(systemError(code, syscall, this.#fields[at + 3] as number, pending));
      }
      const next = this.#queue.shift();
      if (next) next(slot);
      else this.#free.push(slot);
    }
  }

  /**
   * Stops the thread (tests; a process need not call it: the thread never keeps it alive). Writes it
   * finished settle as they went; writes in flight fail once it has stopped; writes waiting for a
   * slot, and later ones, get {@link WriterUnavailable}.
   */
  async close(): Promise<void> {
    const closed = new Error("the file writer thread was closed");
    this.#failed ??= closed;
    for (const waiting of this.#queue.splice(0)) waiting(undefined);
    await this.#worker.terminate();
    this.#fail(closed);
  }

  /**
   * The thread is gone (or closed and stopped): every write it finished settles, every write still
   * in flight fails (it may have been done in part: the caller removes what it may have created).
   */
  #fail(error: Error): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#failed ??= new Error("the file writer thread failed", { cause: error });
    this.#settleStarted(false);
    this.#collect();
    for (const [slot, pending] of this.#pending) {
      this.#pending.delete(slot);
      pending.reject(this.#failed);
    }
    for (const waiting of this.#queue.splice(0)) waiting(undefined);
    this.#worker.unref();
  }
}

let shared: FsWriterThread | undefined;

/**
 * The process's writer thread, started on first use; `undefined` while it is starting and once it
 * has failed (the thread pool writes meanwhile).
 */
export function fsWriterThread(): FsWriterThread | undefined {
  try {
    shared ??= new FsWriterThread();
  } catch {
    return undefined;
  }
  return shared.usable ? shared : undefined;
}
