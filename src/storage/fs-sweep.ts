/**
 * `fsStore`'s sweep: removes expired files and the leftovers of interrupted puts (temp files,
 * staged files never committed, bytes whose metadata is missing) once they are older than
 * `staleAfter`, and empty old scope folders.
 */

import { readdir, readFile, rmdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { isId } from "../internal/ids.js";
import {
  errorCode,
  type FsLayout,
  metaIdOf,
  PART_SUFFIX,
  SCOPE_DIR,
  storageError,
  TMP_SUFFIX,
  unlinkQuiet,
} from "./fs-layout.js";
import { INDEX_NAME } from "./fs-list-index.js";
import { isExpired } from "./kit/list-page.js";
import { parseStoredRecord } from "./kit/metadata-record.js";

/** Whether `text` parses as JSON at all. */
function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The sweep of the store laid out by `layout`: each call walks every scope folder once and returns
 * how many files it removed.
 *
 * @example
 * ```ts
 * const sweep = fsSweep(layout, 60 * 60 * 1000);
 * const removed = await sweep();
 * ```
 */
export function fsSweep(layout: FsLayout, staleMs: number): () => Promise<number> {
  return async () => {
    const at = layout.now();
    let folders: string[];
    try {
      folders = await readdir(layout.root);
    } catch (error) {
      if (errorCode(error) === "ENOENT") return 0;
      throw storageError("list its folder", error);
    }
    let removed = 0;
    for (const name of folders) {
      if (!SCOPE_DIR.test(name)) continue;
      removed += await sweepFolder(layout, join(layout.root, name), at, staleMs);
    }
    return removed;
  };
}

/** Sweeps one scope folder at time `at`; returns how many files it removed. */
async function sweepFolder(layout: FsLayout, folder: string, at: number, staleMs: number): Promise<number> {
  let entries: string[];
  try {
    entries = await readdir(folder);
  } catch (error) {
    if (errorCode(error) === "ENOENT" || errorCode(error) === "ENOTDIR") return 0;
    throw storageError("list a scope folder", error);
  }
  const metaIds = new Set<string>();
  for (const entry of entries) {
    const id = metaIdOf(entry);
    if (id !== undefined) metaIds.add(id);
  }
  let removed = 0;
  for (const entry of entries) {
    const path = join(folder, entry);
    try {
      const id = metaIdOf(entry);
      if (id !== undefined) {
        const text = await readFile(path, "utf8");
        const file = parseStoredRecord(text, id)?.file;
        if (file) {
          if (isExpired(file, at) && (await layout.removeFile(folder, id))) removed++;
          continue;
        }
        // A record that is not even JSON is a small put cut off mid-write (a crash): readers never
        // saw it. Once stale it goes, with any bytes beside it; a fresh one may still be written.
        // (A JSON record this version does not read, e.g. a newer one, is left alone.)
        if (!isJson(text) && at - (await stat(path)).mtimeMs >= staleMs) {
          if (await layout.removeFile(folder, id)) removed++;
        }
        continue;
      }
      const leftover =
        entry.endsWith(PART_SUFFIX) || entry.endsWith(TMP_SUFFIX) || (isId(entry) && !metaIds.has(entry));
      if (!leftover) continue;
      const info = await stat(path);
      if (at - info.mtimeMs >= staleMs && (await unlinkQuiet(path))) removed++;
    } catch (error) {
      if (errorCode(error) !== "ENOENT") throw storageError("sweep", error);
    }
  }
  // An empty, old scope folder goes too, with its list index if that is all it holds; a put racing
  // with this re-creates the folder (see FsLayout#inFolder), and a list rebuilds a missing index.
  try {
    const info = await stat(folder);
    if (at - info.mtimeMs >= staleMs) {
      const left = await readdir(folder);
      if (left.length === 1 && left[0] === INDEX_NAME) await unlinkQuiet(join(folder, INDEX_NAME));
      await rmdir(folder);
      layout.forget(folder);
      layout.index.forget(folder);
    }
  } catch {
    // not empty, or already gone
  }
  return removed;
}
