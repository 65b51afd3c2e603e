import type { StoredFile } from "../storage/types.js";

/** First index in the sorted `array` whose value is greater than `value`. */
function upperBound(array: readonly string[], value: string): number {
  let low = 0;
  let high = array.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((array[mid] as string) <= value) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** First index in the sorted `array` whose value is not less than `value`. */
function lowerBound(array: readonly string[], value: string): number {
  let low = 0;
  let high = array.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((array[mid] as string) < value) low = mid + 1;
    else high = mid;
  }
  return low;
}

function insertSorted(array: string[], value: string): boolean {
  const at = lowerBound(array, value);
  if (array[at] === value) return false;
  // Ids are time-sorted, so this is nearly always an append.
  if (at === array.length) array.push(value);
  else array.splice(at, 0, value);
  return true;
}

function removeSorted(array: string[], value: string): boolean {
  const at = lowerBound(array, value);
  if (array[at] !== value) return false;
  array.splice(at, 1);
  return true;
}

/** One page of a {@link ScopeIndex}. */
export interface IndexPage {
  files: StoredFile[];
  /** Ids met on the way that were no longer live (expired); the caller drops them. */
  dead: string[];
  /** Whether ids remain after this page. */
  more: boolean;
}

/**
 * The registry's view of one scope: files sorted by id (O(log n + page) pagination) and, per
 * template, by name (path lookups resolve to the file of that name added last). Only ever changed
 * synchronously, so a reader never sees a half-registered file.
 * (Files loaded from the store count as added in id order, i.e. creation order.)
 */
export class ScopeIndex {
  private readonly ids: string[] = [];
  private readonly files = new Map<string, StoredFile>();
  private readonly byName = new Map<string, string[]>();

  /** @param templateOf which template a file belongs to (its URI's template). */
  constructor(private readonly templateOf: (file: StoredFile) => number) {}

  get size(): number {
    return this.ids.length;
  }

  get(id: string): StoredFile | undefined {
    return this.files.get(id);
  }

  private nameKey(template: number, name: string): string {
    return `${template}\u0000${name}`;
  }

  /** Adds or replaces a file; `true` when it was not there before. */
  upsert(file: StoredFile): boolean {
    const old = this.files.get(file.id);
    if (old) this.dropName(old);
    this.files.set(file.id, file);
    const key = this.nameKey(this.templateOf(file), file.name);
    let list = this.byName.get(key);
    if (!list) {
      list = [];
      this.byName.set(key, list);
    }
    // In the order files were added: a path resolves to the file added last under that name.
    list.push(file.id);
    return insertSorted(this.ids, file.id);
  }

  /** Removes a file; returns what was removed. */
  delete(id: string): StoredFile | undefined {
    const file = this.files.get(id);
    if (!file) return undefined;
    this.files.delete(id);
    removeSorted(this.ids, id);
    this.dropName(file);
    return file;
  }

  private dropName(file: StoredFile): void {
    const key = this.nameKey(this.templateOf(file), file.name);
    const list = this.byName.get(key);
    if (!list) return;
    const at = list.lastIndexOf(file.id);
    if (at >= 0) list.splice(at, 1);
    if (list.length === 0) this.byName.delete(key);
  }

  /** The file added last under `name` and `template`. */
  latestByName(template: number, name: string): StoredFile | undefined {
    const list = this.byName.get(this.nameKey(template, name));
    const id = list?.[list.length - 1];
    return id === undefined ? undefined : this.files.get(id);
  }

  /** Up to `limit` live files after `afterId` (exclusive), in id order. */
  page(afterId: string | undefined, limit: number, isLive: (file: StoredFile) => boolean): IndexPage {
    const files: StoredFile[] = [];
    const dead: string[] = [];
    let i = afterId === undefined ? 0 : upperBound(this.ids, afterId);
    for (; i < this.ids.length && files.length < limit; i++) {
      const file = this.files.get(this.ids[i] as string) as StoredFile;
      if (isLive(file)) files.push(file);
      else dead.push(file.id);
    }
    return { files, dead, more: i < this.ids.length };
  }

  /** Every file, in id order. */
  *all(): IterableIterator<StoredFile> {
    for (const id of this.ids) yield this.files.get(id) as StoredFile;
  }
}
