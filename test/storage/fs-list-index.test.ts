import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, truncate, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { bootId, INDEX_MIN_RECORDS, INDEX_NAME } from "../../src/storage/fs-list-index.js";
import { fsStore } from "../../src/storage/fs-store.js";
import type { FileStore, StoredFile } from "../../src/storage/types.js";

// Counts the folder reads of the store, to show that a list page reads its index, not the folder.
const folderReads = vi.hoisted(() => ({ paths: [] as string[] }));
vi.mock("node:fs/promises", async (importOriginal) => {
  const original = await importOriginal<typeof import("node:fs/promises")>();
  const readdirCounted = ((path: Parameters<typeof original.readdir>[0], ...rest: unknown[]) => {
    folderReads.paths.push(String(path));
    return (original.readdir as (...args: unknown[]) => unknown)(path, ...rest);
  }) as typeof original.readdir;
  return { ...original, default: { ...original, readdir: readdirCounted }, readdir: readdirCounted };
});

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-fs-index-"));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

const folderOf = (scope: string) => join(dir, createHash("sha256").update(scope).digest("hex").slice(0, 32));
const text = (value: string) => new TextEncoder().encode(value);

/** `count` small files in `scope`, in id order. */
async function fill(store: FileStore, scope: string, count: number): Promise<StoredFile[]> {
  const files: StoredFile[] = [];
  for (let i = 0; i < count; i++) files.push(await store.put(text(`f${i}`), { scope, name: `f${i}.txt` }));
  return files.sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** Every id of a scope, page by page. */
async function listIds(store: FileStore, scope: string, limit = 100): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(scope, { limit, ...(cursor ? { cursor } : {}) });
    ids.push(...page.files.map((file) => file.id));
    cursor = page.nextCursor;
  } while (cursor);
  return ids;
}

const COUNT = INDEX_MIN_RECORDS + 44;

describe("fsStore list index", () => {
  it("after the first list of a large scope, list pages read the index and never walk the folder", async () => {
    const store = fsStore(dir, { sweepInterval: 0 });
    const files = await fill(store, "s", COUNT);
    expect(await listIds(store, "s", 1000)).toEqual(files.map((file) => file.id));
    folderReads.paths.length = 0;
    // Every later page, more puts and deletes included, comes from the index.
    const more = await fill(store, "s", 5);
    await store.delete("s", (files[3] as StoredFile).id);
    const expected = [...files.filter((_, i) => i !== 3), ...more].map((file) => file.id).sort();
    expect(await listIds(store, "s", 50)).toEqual(expected);
    expect(folderReads.paths.filter((path) => path.startsWith(folderOf("s")))).toEqual([]);
    // A second instance over the folder (another process) reads the same index.
    const other = fsStore(dir, { sweepInterval: 0 });
    expect(await listIds(other, "s", 1000)).toEqual(expected);
    expect(folderReads.paths.filter((path) => path.startsWith(folderOf("s")))).toEqual([]);
    await store.close?.();
    await other.close?.();
  });

  it("pages stay complete and ordered while another instance puts and deletes between them", async () => {
    const lister = fsStore(dir, { sweepInterval: 0 });
    const writer = fsStore(dir, { sweepInterval: 0 });
    const files = await fill(writer, "s", COUNT);
    await lister.list("s", { limit: 1 }); // the index exists from here on
    const deleted = new Set<string>();
    const added: string[] = [];
    const seen: string[] = [];
    let cursor: string | undefined;
    let round = 0;
    do {
      const page = await lister.list("s", { limit: 37, ...(cursor ? { cursor } : {}) });
      seen.push(...page.files.map((file) => file.id));
      cursor = page.nextCursor;
      // Between pages: one file already listed and one not yet listed go; a new one comes.
      const victims = [files[round * 11], files[files.length - 1 - round * 7]];
      for (const victim of victims) {
        if (victim && !deleted.has(victim.id) && (await writer.delete("s", victim.id)))
          deleted.add(victim.id);
      }
      added.push((await writer.put(text(`new${round}`), { scope: "s", name: `new${round}` })).id);
      round++;
    } while (cursor);
    // Ordered, no repeats, nothing that never existed, and every file alive throughout is there.
    expect(seen).toEqual([...seen].sort());
    expect(new Set(seen).size).toBe(seen.length);
    const everPut = new Set([...files.map((file) => file.id), ...added]);
    expect(seen.every((id) => everPut.has(id))).toBe(true);
    for (const file of files) if (!deleted.has(file.id)) expect(seen).toContain(file.id);
    // Files added during the walk have the newest ids, so the walk's last pages see them.
    expect(seen).toContain(added[0]);
    // Afterwards both instances agree with the folder.
    const live = [...files.map((file) => file.id).filter((id) => !deleted.has(id)), ...added].sort();
    expect(await listIds(lister, "s")).toEqual(live);
    expect(await listIds(writer, "s")).toEqual(live);
    await lister.close?.();
    await writer.close?.();
  });

  it("rebuilds the index when it is missing, cut off mid-line, corrupt, or from before a reboot", async () => {
    const store = fsStore(dir, { sweepInterval: 0 });
    const files = await fill(store, "s", COUNT);
    const all = files.map((file) => file.id);
    const log = join(folderOf("s"), INDEX_NAME);
    expect(await listIds(store, "s")).toEqual(all);
    expect((await readFile(log, "latin1")).split("\n")).toContain(`#complete ${bootId()}`);

    // Missing: a new instance (a restart) and the old one both rebuild it.
    await unlink(log);
    expect(await listIds(fsStore(dir, { sweepInterval: 0 }), "s")).toEqual(all);
    expect(await listIds(store, "s")).toEqual(all);

    // Cut off mid-line (a crash while appending) and then appended to: the torn line and the
    // line after it are unreadable, so the log is rebuilt from the folder.
    const size = (await readFile(log)).length;
    await truncate(log, size - 5);
    const late = await store.put(text("late"), { scope: "s", name: "late.txt" });
    expect(await listIds(fsStore(dir, { sweepInterval: 0 }), "s")).toEqual([...all, late.id]);

    // Garbage in the middle.
    await writeFile(log, `+${all[0]}\n\u0000\u0000garbage\n-${all[1]}\n`);
    expect(await listIds(fsStore(dir, { sweepInterval: 0 }), "s")).toEqual([...all, late.id]);

    // Written before a reboot: the page cache may have lost lines whose records survived. A log
    // whose only marker names another boot, missing a line, is rebuilt.
    const lines = (await readFile(log, "latin1"))
      .split("\n")
      .filter((line) => line !== `+${all[5]}` && !line.startsWith("#complete"));
    await writeFile(log, `${lines.join("\n")}#complete another-boot\n`);
    expect(await listIds(fsStore(dir, { sweepInterval: 0 }), "s")).toEqual([...all, late.id]);
    await store.close?.();
  });

  it("an id in the index without its record (a commit cut off, or a line from elsewhere) lists nothing", async () => {
    const store = fsStore(dir, { sweepInterval: 0 });
    const files = await fill(store, "s", COUNT);
    const other = await store.put(text("bob's"), { scope: "bob", name: "secret.txt" });
    await listIds(store, "s");
    const folder = folderOf("s");
    // A line for an id whose record never came, and one for bob's file (its record is in bob's folder).
    await writeFile(join(folder, INDEX_NAME), `+${"0".repeat(26)}\n+${other.id}\n`, { flag: "a" });
    // bob's record copied into this scope's folder still names bob's scope: not listed here either.
    await writeFile(
      join(folder, `${other.id}.json`),
      await readFile(join(folderOf("bob"), `${other.id}.json`)),
    );
    const ids = await listIds(fsStore(dir, { sweepInterval: 0 }), "s");
    expect(ids).toEqual(files.map((file) => file.id));
    expect(await listIds(store, "s")).toEqual(files.map((file) => file.id));
    await store.close?.();
  });

  it("compacts a long log into a sorted block, and keeps every later put and delete", async () => {
    const store = fsStore(dir, { sweepInterval: 0 });
    const files = await fill(store, "s", COUNT);
    await listIds(store, "s");
    const log = join(folderOf("s"), INDEX_NAME);
    // Many lines for ids that come and go (and never had a record): the log is long, the scope small.
    const alphabet = "0123456789abcdefghjkmnpqrstvwxyz";
    let churn = "";
    for (let i = 0; i < 6000; i++) {
      let id = "";
      for (let j = 0, n = i; j < 26; j++, n = Math.floor(n / 32)) id = alphabet[n % 32] + id;
      churn += `+${id}\n-${id}\n`;
    }
    await writeFile(log, churn, { flag: "a" });
    const all = files.map((file) => file.id);
    expect(await listIds(store, "s")).toEqual(all); // reads the churn, then compacts in the background
    for (let i = 0; i < 50 && !(await readFile(log, "latin1")).startsWith("#sorted "); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const compactedLog = await readFile(log, "latin1");
    expect(compactedLog.startsWith(`#sorted ${String(all.length).padStart(10, "0")}\n`)).toBe(true);
    expect(compactedLog.length).toBeLessThan(churn.length / 10);
    // After the block: a delete of an id in it, a new put, both seen by this and a new instance.
    await store.delete("s", all[7] as string);
    const late = await store.put(text("late"), { scope: "s", name: "late.txt" });
    const expected = [...all.filter((_, i) => i !== 7), late.id];
    expect(await listIds(store, "s", 25)).toEqual(expected);
    expect(await listIds(fsStore(dir, { sweepInterval: 0 }), "s", 25)).toEqual(expected);
    // A page that starts inside the block, by cursor.
    const page = await store.list("s", {
      limit: 3,
      cursor: (await store.list("s", { limit: 100 })).nextCursor,
    });
    expect(page.files.map((file) => file.id)).toEqual(expected.slice(100, 103));
    await store.close?.();
  });

  it("a small scope gets no index file; the sweep removes a folder that holds only its index", async () => {
    let time = Date.now();
    const store = fsStore(dir, { now: () => time, sweepInterval: 0 });
    await fill(store, "small", 3);
    await store.list("small");
    expect((await readdir(folderOf("small"))).includes(INDEX_NAME)).toBe(false);
    const files = await fill(store, "s", COUNT);
    await store.list("s");
    for (const file of files) await store.delete("s", file.id);
    expect(await readdir(folderOf("s"))).toEqual([INDEX_NAME]);
    expect((await store.list("s")).files).toEqual([]);
    time += 3 * 3_600_000;
    await store.sweep();
    expect((await readdir(dir)).includes(folderOf("s").slice(dir.length + 1))).toBe(false);
    // A put re-creates the folder, and the scope lists again.
    const again = await store.put(text("again"), { scope: "s", name: "again.txt" });
    expect(await listIds(store, "s")).toEqual([again.id]);
    await store.close?.();
  });
});
