/**
 * `fsStore`: the FileStore driver on the local disk. Its parts live beside it: the options and
 * settings (`fs-store-options.ts`), and what its async methods run (`fs-store-work.ts`: writes,
 * commits, reads and lists), with the on-disk layout and metadata records (`fs-layout.ts`), scope
 * usage and quota (`fs-quota.ts`), the list index (`fs-list-index.ts`) and the sweep
 * (`fs-sweep.ts`). This file checks the options and the arguments; the rest is loaded at a store's
 * first call (issue 39), so making a store at start compiles none of it.
 */

import type { Readable } from "node:stream";
import { firstUse } from "../internal/first-use.js";
import { isId } from "../internal/ids.js";
import { type FsFileStore, type FsStoreOptions, fsSettings, SMALL_PUT_BYTES } from "./fs-store-options.js";
import type { FsStoreWork } from "./fs-store-work.js";
import { decodeCursor, listKind, listLimit, unrefInterval } from "./kit/list-page.js";
import { planPut } from "./kit/put-plan.js";
import type {
  AdoptSource,
  ByteRange,
  ListOptions,
  ListPage,
  PutOptions,
  PutSource,
  ScopeUsage,
  StagedFile,
  StoredFile,
} from "./types.js";

export type { FsFileStore, FsStoreOptions } from "./fs-store-options.js";

/** `fs-store-work.ts`, loaded at the first call of any store; concurrent callers share one load. */
const loadFsStoreWork = firstUse(() => import("./fs-store-work.js"));

/** Whether `scope` and `id` can name a stored file at all (else the file is missing, unread). */
function names(scope: unknown, id: unknown): boolean {
  return typeof scope === "string" && scope.length > 0 && isId(id);
}

/**
 * A {@link FileStore} on the local disk. Each scope gets a folder named by a hash of the scope; each
 * file is `<id>` (bytes) beside `<id>.json` (metadata), so neither scopes nor user file names ever
 * reach a path. A file exists for readers only once its metadata does: bytes are written under their
 * random id (exclusively), verified (size cap, sha256, declared size), and only then is the metadata
 * written (temp name + one rename), so a crash or abort never leaves a visible partial file, and the
 * bytes a reader finds are complete. Small puts (up to 64 KiB) are written in one write, by the
 * process's writer thread (see `fs-writer-thread.ts`); scope folders are made once per store. A new
 * instance over the same folder sees the same files.
 *
 * @example
 * ```ts
 * import { createReadStream } from "node:fs";
 * import { fsStore } from "mcp-file-bridge";
 *
 * const store = fsStore("/var/lib/my-server/files", { staleAfter: "1h" });
 * const file = await store.put(createReadStream("report.pdf"), {
 *   scope: "session-1",
 *   name: "report.pdf",
 *   maxBytes: 50 * 1024 * 1024,
 *   ttl: "1d",
 * });
 * const path = await store.localPath("session-1", file.id); // hand it to a tool
 * ```
 */
export function fsStore(dir: string, options: FsStoreOptions = {}): FsFileStore {
  const settings = fsSettings(dir, options);
  const { root, now, sweepMs, quota } = settings;
  // The store's files on disk, made at its first call; once there, calls use it without a wait.
  let ready: FsStoreWork | undefined;
  const load = firstUse(async () => {
    const { FsStoreWork } = await loadFsStoreWork();
    ready ??= new FsStoreWork(settings);
    return ready;
  });
  const sweep = async (): Promise<number> => (ready ?? (await load())).sweep();
  const timer = unrefInterval(sweepMs, sweep);

  // Each method checks what it checked before its first await (the put's plan, the list's options,
  // the shape of a scope and id) before the load, so those errors and answers come as they did.
  return {
    driver: "fs",
    dir: root,
    ...(quota ? { quota } : {}),

    async put(source: PutSource, putOptions: PutOptions): Promise<StoredFile> {
      const plan = planPut(putOptions, now());
      return (ready ?? (await load())).put(source, plan);
    },

    async stage(source: PutSource, putOptions: PutOptions): Promise<StagedFile> {
      const plan = planPut(putOptions, now());
      return (ready ?? (await load())).stage(source, plan);
    },

    async adopt(source: AdoptSource, putOptions: PutOptions): Promise<StagedFile | null> {
      // No path (another store's file) or small enough to go through put: the caller puts it.
      const path = source.path;
      if (path === undefined || source.size <= SMALL_PUT_BYTES) return null;
      const plan = planPut(putOptions, now());
      return (ready ?? (await load())).adopt(source, path, plan);
    },

    async head(scope: string, id: string): Promise<StoredFile | null> {
      if (!names(scope, id)) return null;
      return (ready ?? (await load())).head(scope, id);
    },

    async read(scope: string, id: string, range?: ByteRange): Promise<Readable | null> {
      if (!names(scope, id)) return null;
      return (ready ?? (await load())).read(scope, id, range);
    },

    async list(scope: string, listOptions: ListOptions = {}): Promise<ListPage> {
      const limit = listLimit(listOptions.limit);
      const kind = listKind(listOptions.kind);
      const after = listOptions.cursor === undefined ? undefined : decodeCursor(listOptions.cursor);
      if (typeof scope !== "string" || scope.length === 0) return { files: [] };
      return (ready ?? (await load())).list(scope, limit, kind, after);
    },

    async delete(scope: string, id: string): Promise<boolean> {
      if (!names(scope, id)) return false;
      return (ready ?? (await load())).delete(scope, id);
    },

    sweep,

    async usage(scope: string): Promise<ScopeUsage> {
      if (typeof scope !== "string" || scope.length === 0) return { bytes: 0, files: 0 };
      return (ready ?? (await load())).usage(scope);
    },

    async localPath(scope: string, id: string): Promise<string | null> {
      if (!names(scope, id)) return null;
      return (ready ?? (await load())).localPath(scope, id);
    },

    async close(): Promise<void> {
      if (timer) clearInterval(timer);
    },
  };
}
