/**
 * The file-container example's embedded store: an append-only JSON-lines ledger.
 *
 * Why this and not SQLite: `node:sqlite` only exists from Node 22.5 (this package supports Node 20),
 * and a native SQLite addon would be a new dependency for one example. An append-only file gives what
 * usage accounting needs: every record is one line written with `O_APPEND` (so lines never
 * interleave) and flushed with `fdatasync` before `append()` resolves (a charge that was acknowledged
 * survives a crash); records are never rewritten; a torn last line from a crash is skipped on read.
 * The file is plain text, so `tail -f usage.jsonl | jq` is the admin console.
 */

import type { FileHandle } from "node:fs/promises";
import { mkdir, open, readFile } from "node:fs/promises";
import { dirname } from "node:path";

/** Something that happened to a file (shown to admins; never charged). */
export interface ActivityEvent {
  type: "activity";
  /** What happened, e.g. `"download"`, `"download.partial"`. */
  event: string;
  /** Fingerprint of the caller's API key (never the key itself). */
  keyId: string;
  container: string;
  fileId: string;
  name: string;
  bytes: number;
  /** ISO 8601 time. */
  at: string;
}

/** A charge: credits taken from the caller's key. */
export interface UsageRow {
  type: "usage";
  keyId: string;
  container: string;
  fileId: string;
  credits: number;
  /** ISO 8601 time. */
  at: string;
}

/** One ledger line. */
export type LedgerEntry = ActivityEvent | UsageRow;

/** A per-key summary computed from the ledger. */
export interface UsageSummary {
  keyId: string;
  credits: number;
  downloads: number;
}

/**
 * Opens (creating if needed) an append-only JSON-lines ledger.
 *
 * @example
 * ```ts
 * const ledger = await UsageLedger.open("/var/lib/files/usage.jsonl");
 * await ledger.append({ type: "usage", keyId, container, fileId, credits: 2, at: new Date().toISOString() });
 * ```
 */
export class UsageLedger {
  readonly path: string;
  readonly #handle: FileHandle;
  /** The last queued write: appends run one at a time, in order. */
  #tail: Promise<unknown> = Promise.resolve();

  private constructor(path: string, handle: FileHandle) {
    this.path = path;
    this.#handle = handle;
  }

  /** Runs `work` after every write queued before it (a failed one does not stop the queue). */
  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(work, work);
    this.#tail = run.catch(() => undefined);
    return run;
  }

  static async open(path: string): Promise<UsageLedger> {
    await mkdir(dirname(path), { recursive: true });
    return new UsageLedger(path, await open(path, "a"));
  }

  /** Appends entries as one write (all of them or, after a crash, a torn tail that readers skip) and syncs. */
  append(...entries: LedgerEntry[]): Promise<void> {
    const text = entries.map((entry) => `${JSON.stringify(entry)}\n`).join("");
    return this.#exclusive(async () => {
      await this.#handle.write(text);
      await this.#handle.datasync();
    });
  }

  /** Every complete entry, oldest first. */
  async entries(): Promise<LedgerEntry[]> {
    await this.#tail;
    const text = await readFile(this.path, "utf8");
    const out: LedgerEntry[] = [];
    for (const line of text.split("\n")) {
      if (!line) continue;
      try {
        out.push(JSON.parse(line) as LedgerEntry);
      } catch {
        // a torn last line from a crash: not a complete record
      }
    }
    return out;
  }

  /** Credits charged and downloads counted for one key. */
  async summary(keyId: string): Promise<UsageSummary> {
    const rows = (await this.entries()).filter((e): e is UsageRow => e.type === "usage" && e.keyId === keyId);
    return { keyId, credits: rows.reduce((sum, row) => sum + row.credits, 0), downloads: rows.length };
  }

  async close(): Promise<void> {
    await this.#exclusive(() => this.#handle.close());
  }
}
