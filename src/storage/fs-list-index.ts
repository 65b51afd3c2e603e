/**
 * `fsStore`'s list index: per scope folder, an append-only log (`ids.log`) of the ids committed
 * (`+<id>`) and removed (`-<id>`), so that a list page is a binary search over ids held in memory
 * plus the page's own metadata reads, instead of a walk (and sort) of the whole folder.
 *
 * The metadata records stay the truth; the log only says which ids to look at. Its rules:
 * - A commit appends `+<id>` **before** its record is written (and once more after it, if the log
 *   appeared meanwhile), so a record a reader can find is always in the log, even if the process
 *   dies right after writing it. An id whose record never came (a refused commit) is read as
 *   missing and skipped, like a deleted file.
 * - The log is made by the first list of a scope (a store that never lists never has one): it is
 *   created first, then the folder is read once and every record found is appended, then a marker
 *   line naming this boot (`#complete <boot>`). A log without the marker of the current boot after
 *   its last unreadable line (missing, cut off, corrupt, or written before a reboot, when the page
 *   cache may have lost lines whose records survived) is rebuilt the same way.
 * - Every append opens the log by name, writes one line with `O_APPEND` and checks that the file is
 *   still linked; a log replaced by a compaction or removed by the sweep meanwhile gets the line
 *   again under its name. So no line is lost to a compaction, and duplicates are harmless.
 * - The log lives inside the scope's own 0700 folder, is opened with `O_NOFOLLOW`, holds only ids,
 *   and every id it names is read through the scope's own folder and checked against its scope: a
 *   line can hide nothing and reveal nothing of another scope.
 *
 * - A compaction writes the live ids sorted, as a block of fixed 28-byte lines after a `#sorted <n>`
 *   header; what is appended later follows it. A list reads the block as bytes (no parsing: a
 *   binary search finds a page's start) and parses only the lines after it, so the first page after
 *   a start costs a read of the file, not a line-by-line walk of it.
 *
 * Memory, per listed scope: 28 bytes per id in the sorted block, and about 60 per id appended since
 * the last compaction (strings; the log is compacted once those exceed a quarter of the block plus
 * {@link COMPACT_SLACK}); at most {@link CACHED_IDS} ids over all scopes (least recently listed scopes
 * are dropped first and read again from their log on their next list).
 */

import { closeSync, constants, fstatSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { type FileHandle, open, readdir, rename, stat } from "node:fs/promises";
import { join } from "node:path";
import { isId } from "../internal/ids.js";
import { uptime } from "../internal/node-builtins.js";
import { errorCode, FILE_MODE, metaIdOf, storageError, tempPath, unlinkQuiet } from "./fs-layout.js";

/** The log's name inside a scope folder (not an id, not `.json`: never taken for a file). */
export const INDEX_NAME = "ids.log";
/** Ids held in memory over all scopes before the least recently listed scopes are dropped. */
export const CACHED_IDS = 2_000_000;
/**
 * A folder without a log gets one at its first list once it holds this many records; below, a list
 * reads the folder (a few hundred names), and commits cost nothing more.
 */
export const INDEX_MIN_RECORDS = 256;
/** A log is compacted once the lines after its sorted block exceed a quarter of the block plus this. */
const COMPACT_SLACK = 4096;
const MARKER = "#complete ";
const SORTED = "#sorted ";
/** `#sorted ` and ten digits and a newline. */
const HEADER_BYTES = SORTED.length + 11;
/** One line of the sorted block: `+`, 26 id characters, newline. */
const RECORD = 28;
const NEWLINE = 0x0a;
const APPEND_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW;

let bootIdValue: string | undefined;

/**
 * This boot's identity: the kernel's boot id where there is one (Linux), else the boot time to the
 * minute. A log written before a reboot may have lost lines, so it is rebuilt once after one.
 */
export function bootId(): string {
  if (bootIdValue !== undefined) return bootIdValue;
  try {
    bootIdValue = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    bootIdValue = "";
  }
  if (!/^[0-9a-f-]{8,64}$/.test(bootIdValue)) {
    bootIdValue = `t${Math.round((Date.now() / 1000 - uptime()) / 60)}`;
  }
  return bootIdValue;
}

/** The ids of one scope folder as read from its log. */
interface ScopeIds {
  /** The inode of the log these were read from (a compaction replaces it). */
  readonly ino: number;
  /** Bytes of the log read so far (always at a line's end). */
  offset: number;
  /** The sorted block (28-byte lines), empty when the log has none. */
  block: Buffer;
  /** Ids added after the block; sorted and without duplicates when `sorted`. */
  ids: string[];
  sorted: boolean;
  /** Ids removed after the block (they may be in it). */
  readonly removed: Set<string>;
  /** Whether a marker of this boot follows the last unreadable line. */
  complete: boolean;
  /** Lines read after the block: when many, the log is compacted. */
  lines: number;
}

/** The number of ids in a sorted block. */
function blockSize(state: ScopeIds): number {
  return state.block.length / RECORD;
}

/** The id of line `i` of a sorted block. */
function blockId(block: Buffer, i: number): string {
  return block.toString("latin1", i * RECORD + 1, i * RECORD + 27);
}

/** The first line of a sorted block whose id is greater than `after`. */
function blockUpperBound(block: Buffer, after: string): number {
  const key = Buffer.from(after, "latin1");
  let low = 0;
  let high = block.length / RECORD;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (block.compare(key, 0, 26, mid * RECORD + 1, mid * RECORD + 27) <= 0) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** The first index of sorted `ids` whose id is greater than `after`. */
function upperBound(ids: readonly string[], after: string): number {
  let low = 0;
  let high = ids.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((ids[mid] as string) <= after) low = mid + 1;
    else high = mid;
  }
  return low;
}

/**
 * A scope's live ids at one moment, in id order: the sorted block (less what was removed after it)
 * merged with the ids added after it.
 */
export interface IdOrder {
  /** The ids greater than `after` (all when `undefined`), in order. */
  after(after: string | undefined): Iterator<string>;
}

/** An {@link IdOrder} over a sorted block and a sorted array of later ids. */
function idOrder(block: Buffer, ids: readonly string[], removed: ReadonlySet<string>): IdOrder {
  return {
    *after(after) {
      const n = block.length / RECORD;
      let i = after === undefined ? 0 : blockUpperBound(block, after);
      let j = after === undefined ? 0 : upperBound(ids, after);
      while (i < n || j < ids.length) {
        const fromBlock = i < n ? blockId(block, i) : undefined;
        const later = ids[j];
        if (later === undefined || (fromBlock !== undefined && fromBlock < later)) {
          i++;
          if (!removed.has(fromBlock as string) && isId(fromBlock)) yield fromBlock as string;
        } else {
          if (fromBlock === later) i++;
          j++;
          yield later;
        }
      }
    },
  };
}

/** An {@link IdOrder} over sorted ids. */
export function sortedOrder(ids: readonly string[]): IdOrder {
  return idOrder(Buffer.alloc(0), ids, new Set());
}

/**
 * Appends `text` to the log at `path` unless there is none (`false`): one `O_APPEND` write, then a
 * check that the file is still linked (else it was replaced or removed meanwhile: write it again
 * under its name). Synchronous: one small write to the page cache, cheaper than a thread-pool trip.
 */
export function appendToLog(path: string, text: string | Buffer): boolean {
  const bytes = typeof text === "string" ? Buffer.from(text, "latin1") : text;
  for (let attempt = 0; attempt < 4; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, APPEND_FLAGS);
    } catch (error) {
      const code = errorCode(error);
      if (code === "ENOENT" || code === "ENOTDIR") return false;
      throw error;
    }
    try {
      let done = 0;
      while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done);
      if (fstatSync(fd).nlink > 0) return true;
    } finally {
      closeSync(fd);
    }
  }
  return true;
}

/** Reads the lines of `chunk` (whole lines only) into `state`; returns the bytes consumed. */
function readLines(state: ScopeIds, chunk: Buffer, boot: string): number {
  let start = 0;
  for (;;) {
    const end = chunk.indexOf(NEWLINE, start);
    if (end < 0) return start;
    const length = end - start;
    const sign = chunk[start];
    state.lines++;
    if (length === 27 && (sign === 0x2b || sign === 0x2d)) {
      const id = chunk.toString("latin1", start + 1, end);
      if (isId(id)) {
        if (sign === 0x2b) {
          state.removed.delete(id);
          const last = state.ids[state.ids.length - 1];
          if (last !== undefined && id <= last) state.sorted = false;
          state.ids.push(id);
        } else {
          state.removed.add(id);
        }
      } else {
        state.complete = false;
      }
    } else if (length > MARKER.length && chunk.toString("latin1", start, start + MARKER.length) === MARKER) {
      if (chunk.toString("latin1", start + MARKER.length, end) === boot) state.complete = true;
    } else if (length > 0) {
      state.complete = false;
    }
    start = end + 1;
  }
}

/** Sorts, removes duplicates and drops removed ids (into new arrays: a page in progress keeps its own). */
function normalize(state: ScopeIds): void {
  if (!state.sorted) {
    const sorted = state.ids.slice().sort();
    let kept = 0;
    for (let i = 0; i < sorted.length; i++) {
      if (i === 0 || sorted[i] !== sorted[kept - 1]) sorted[kept++] = sorted[i] as string;
    }
    sorted.length = kept;
    state.ids = sorted;
    state.sorted = true;
  }
  if (state.removed.size > 0) {
    state.ids = state.ids.filter((id) => !state.removed.has(id));
    // Removals of ids in the block are kept until the next compaction.
    if (state.block.length === 0) state.removed.clear();
  }
}

/**
 * Reads the sorted block at the start of a log, if it has one, into `state` (its bytes as they are:
 * checked line by line for shape, parsed only when a page reads them). `false` when the header
 * promises more than the file holds or a line is not shaped as one (the log is then rebuilt).
 */
async function readBlock(handle: FileHandle, state: ScopeIds, size: number): Promise<boolean> {
  if (size < HEADER_BYTES) return true;
  const header = Buffer.alloc(HEADER_BYTES);
  await handle.read(header, 0, HEADER_BYTES, 0);
  const text = header.toString("latin1");
  if (!text.startsWith(SORTED)) return true;
  const count = /^#sorted (\d{10})\n$/.exec(text)?.[1];
  if (count === undefined) return false;
  const bytes = Number(count) * RECORD;
  if (HEADER_BYTES + bytes > size) return false;
  const block = Buffer.allocUnsafe(bytes);
  let done = 0;
  while (done < bytes) {
    const { bytesRead } = await handle.read(block, done, bytes - done, HEADER_BYTES + done);
    if (bytesRead === 0) return false;
    done += bytesRead;
  }
  for (let at = 0; at < bytes; at += RECORD) {
    if (block[at] !== 0x2b || block[at + RECORD - 1] !== NEWLINE) return false;
  }
  state.block = block;
  state.offset = HEADER_BYTES + bytes;
  return true;
}

/** A compacted log: the live ids of `state` as a sorted block, then the marker of this boot. */
function compacted(state: ScopeIds, boot: string): Buffer {
  const order = idOrder(state.block, state.ids, state.removed).after(undefined);
  const parts: Buffer[] = [];
  let lines: string[] = [];
  let count = 0;
  for (let next = order.next(); !next.done; next = order.next()) {
    lines.push(`+${next.value}\n`);
    count++;
    if (lines.length === 65_536) {
      parts.push(Buffer.from(lines.join(""), "latin1"));
      lines = [];
    }
  }
  parts.push(Buffer.from(`${lines.join("")}${MARKER}${boot}\n`, "latin1"));
  const header = Buffer.from(`${SORTED}${String(count).padStart(10, "0")}\n`, "latin1");
  return Buffer.concat([header, ...parts]);
}

/**
 * The list indexes of one store: appends for commits and removals, and the sorted live ids of a
 * scope folder for a list page (see the file's comment for the rules).
 */
export class FsListIndex {
  readonly #cache = new Map<string, ScopeIds>();
  readonly #rebuilding = new Map<string, Promise<void>>();
  readonly #compacting = new Set<string>();
  #cached = 0;

  /**
   * Notes a commit in `folder` before its record is written. `false` when the folder has no log
   * (then call {@link committed} after the record is written: the log may have been made meanwhile).
   */
  committing(folder: string, id: string): boolean {
    return appendToLog(join(folder, INDEX_NAME), `+${id}\n`);
  }

  /**
   * Notes a commit after its record is written, when {@link committing} found no log. The record is
   * already there, so this cannot fail the commit: a log that cannot take the line is removed (the
   * next list rebuilds it from the folder).
   */
  committed(folder: string, id: string): void {
    const path = join(folder, INDEX_NAME);
    try {
      appendToLog(path, `+${id}\n`);
    } catch {
      try {
        unlinkSync(path);
      } catch {
        // neither: the file stays visible to head/read; the next rebuild of this log lists it
      }
    }
  }

  /** Notes a removal after the record is gone (best effort: a missed line leaves an id read as missing). */
  removed(folder: string, id: string): void {
    try {
      appendToLog(join(folder, INDEX_NAME), `-${id}\n`);
    } catch {
      // the id stays in the log and reads as missing
    }
  }

  /**
   * The live ids of `folder` in order. Reads what was appended to the log since the last call;
   * makes or rebuilds the log when it is missing or not complete for this boot. A small or missing
   * folder is read instead (and gets no log).
   */
  async ids(folder: string): Promise<IdOrder> {
    const path = join(folder, INDEX_NAME);
    const boot = bootId();
    for (let attempt = 0; ; attempt++) {
      // Each round either returns or saw the log change or go meanwhile; a few rounds settle it.
      if (attempt > 4) throw storageError("read the list index", undefined);
      let info: { ino: number; size: number };
      try {
        info = await stat(path);
      } catch (error) {
        const code = errorCode(error);
        if (code !== "ENOENT" && code !== "ENOTDIR") throw storageError("read the list index", error);
        // No log: a small folder is simply read (and gets none); a larger one gets its log now.
        const records = await this.#records(folder);
        if (records.length < INDEX_MIN_RECORDS) return sortedOrder(records.sort());
        await this.#rebuild(folder);
        continue;
      }
      let state = this.#cache.get(folder);
      if (!state || state.ino !== info.ino || info.size < state.offset) {
        this.#drop(folder);
        state = {
          ino: info.ino,
          offset: 0,
          block: Buffer.alloc(0),
          ids: [],
          sorted: true,
          removed: new Set(),
          complete: false,
          lines: 0,
        };
      }
      if (info.size > state.offset && !(await this.#readTail(path, state, boot))) continue;
      if (!state.complete) {
        this.#drop(folder);
        await this.#rebuild(folder);
        continue;
      }
      normalize(state);
      this.#keep(folder, state);
      if (state.lines > blockSize(state) / 4 + COMPACT_SLACK) this.#compact(folder, state, boot);
      return idOrder(state.block, state.ids, state.removed);
    }
  }

  /** Forgets what is held in memory for `folder` (the sweep removed it). */
  forget(folder: string): void {
    this.#drop(folder);
  }

  /** Reads the log from `state.offset` to its end; `false` when the file was replaced meanwhile. */
  async #readTail(path: string, state: ScopeIds, boot: string): Promise<boolean> {
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (error) {
      if (errorCode(error) === "ENOENT") return false;
      throw storageError("read the list index", error);
    }
    try {
      const info = await handle.stat();
      if (info.ino !== state.ino) return false;
      if (state.offset === 0 && !(await readBlock(handle, state, info.size))) {
        state.complete = false;
        return true;
      }
      let size = info.size - state.offset;
      while (size > 0) {
        const chunk = Buffer.allocUnsafe(Math.min(size, 8 * 1024 * 1024));
        const { bytesRead } = await handle.read(chunk, 0, chunk.length, state.offset);
        if (bytesRead === 0) break;
        const used = readLines(state, chunk.subarray(0, bytesRead), boot);
        if (used === 0) break; // a line still being written
        state.offset += used;
        size -= used;
      }
      return true;
    } catch (error) {
      throw storageError("read the list index", error);
    } finally {
      await handle.close();
    }
  }

  /**
   * Makes `folder`'s log complete for this boot: creates it if needed, then appends every record
   * the folder holds and the marker. One rebuild per folder at a time in this store.
   */
  async #rebuild(folder: string): Promise<void> {
    const running = this.#rebuilding.get(folder);
    if (running) return running;
    const task = (async () => {
      const path = join(folder, INDEX_NAME);
      // Created before the folder is read: a commit that finds no log wrote its record before this
      // read (so the read finds it), or finds the log and appends itself.
      try {
        closeSync(openSync(path, APPEND_FLAGS | constants.O_CREAT, FILE_MODE));
      } catch (error) {
        if (errorCode(error) === "ENOENT") return; // the folder went: the next read finds no records
        throw storageError("make the list index", error);
      }
      const ids = await this.#records(folder);
      const text = `${ids.map((id) => `+${id}\n`).join("")}${MARKER}${bootId()}\n`;
      try {
        appendToLog(path, text);
      } catch (error) {
        throw storageError("write the list index", error);
      }
    })();
    this.#rebuilding.set(folder, task);
    try {
      await task;
    } finally {
      this.#rebuilding.delete(folder);
    }
  }

  /** The ids of the records in `folder` (none when it is missing). */
  async #records(folder: string): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(folder);
    } catch (error) {
      const code = errorCode(error);
      if (code === "ENOENT" || code === "ENOTDIR") return [];
      throw storageError("list files", error);
    }
    const ids: string[] = [];
    for (const name of names) {
      const id = metaIdOf(name);
      if (id !== undefined) ids.push(id);
    }
    return ids;
  }

  /**
   * Rewrites the log with only its live ids (temp name + rename), then copies over whatever was
   * appended to the old file between reading it and the rename. Appends made after the rename find
   * the old file unlinked and write themselves again. Best effort, in the background.
   */
  #compact(folder: string, state: ScopeIds, boot: string): void {
    if (this.#compacting.has(folder)) return;
    this.#compacting.add(folder);
    const path = join(folder, INDEX_NAME);
    const body = compacted(state, boot);
    const upTo = state.offset;
    (async () => {
      const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
      const temp = tempPath(path);
      try {
        if ((await handle.stat()).ino !== state.ino) return;
        const out = await open(temp, "wx", FILE_MODE);
        try {
          await out.writeFile(body);
        } finally {
          await out.close();
        }
        await rename(temp, path);
        const size = (await handle.stat()).size;
        if (size > upTo) {
          const tail = Buffer.alloc(size - upTo);
          const { bytesRead } = await handle.read(tail, 0, tail.length, upTo);
          if (bytesRead > 0) appendToLog(path, tail.subarray(0, bytesRead));
        }
      } finally {
        await handle.close();
        await unlinkQuiet(temp).catch(() => {});
      }
    })()
      .catch(() => {})
      .finally(() => this.#compacting.delete(folder));
  }

  /** Keeps `state` as the most recently used, dropping the least recently used past the budget. */
  #keep(folder: string, state: ScopeIds): void {
    this.#drop(folder);
    this.#cache.set(folder, state);
    this.#cached += blockSize(state) + state.ids.length;
    for (const [other, held] of this.#cache) {
      if (this.#cached <= CACHED_IDS || other === folder) break;
      this.#cache.delete(other);
      this.#cached -= blockSize(held) + held.ids.length;
    }
  }

  #drop(folder: string): void {
    const held = this.#cache.get(folder);
    if (!held) return;
    this.#cache.delete(folder);
    this.#cached -= blockSize(held) + held.ids.length;
  }
}
