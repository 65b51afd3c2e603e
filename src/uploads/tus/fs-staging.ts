/**
 * Where the bytes of tus uploads wait until commit: one staging file per upload in a folder, written
 * at the verified offset (anything past it — the tail of a write a crash cut — is cut off first), with
 * a small sidecar holding its expiry so a sweep removes what expired without asking the state store.
 * This file names the folder; what the staging's calls run is in `fs-staging-work.ts`, loaded at its
 * first call (issue 39).
 */
import { join } from "node:path";
import { Readable } from "node:stream";
import { firstUse } from "../../internal/first-use.js";
import { tmpdir } from "../../internal/node-builtins.js";
import type { TusStaging } from "./staging-types.js";

/** `fs-staging-work.ts`, loaded at the first call of any staging; concurrent callers share one load. */
const loadFsStagingWork = firstUse(() => import("./fs-staging-work.js"));

export type { StagingObserver, StagingWrite, StagingWriteOptions, TusStaging } from "./staging-types.js";

/** The default staging folder: one per user under the OS temp folder, shared by restarts. */
export function defaultTusStagingDir(): string {
  const user = typeof process.getuid === "function" ? String(process.getuid()) : "user";
  return join(tmpdir(), `mcp-file-bridge-tus-${user}`);
}

/**
 * Staging files in a local folder of this user, private to it: made with `mkdir` mode 0700 when
 * missing, and checked with `lstat` (ours, 0700, not a symlink) on every use — a folder another local
 * user made first, or made again after it was removed, is refused with `STORAGE_ERROR` naming the
 * option that moves it. Files in it are made exclusively and opened without following symlinks.
 * Replicas that resume each other's uploads need this folder shared, or the S3 staging.
 *
 * @example
 * ```ts
 * createFileRoutes({ store, minter, state, tus: { staging: fsTusStaging("/srv/tus") } });
 * ```
 */
export function fsTusStaging(dir: string = defaultTusStagingDir()): TusStaging {
  // The staging's code, loaded at its first call; once there, calls use it without a wait.
  let ready: TusStaging | undefined;
  const load = firstUse(async () => {
    const { fsStagingWork } = await loadFsStagingWork();
    ready ??= fsStagingWork(dir);
    return ready;
  });
  const work = async (): Promise<TusStaging> => ready ?? (await load());
  return {
    create: async (id, expiresAt) => (await work()).create(id, expiresAt),
    async write(id, offset, source, observe) {
      // Never rejects: a load that fails is the write's error, as a folder that fails is.
      let staging: TusStaging;
      try {
        staging = await work();
      } catch (error) {
        source.resume();
        return { written: 0, error };
      }
      return staging.write(id, offset, source, observe);
    },
    truncate: async (id, length) => (await work()).truncate(id, length),
    read(id, length) {
      if (ready) return ready.read(id, length);
      if (length === 0) return Readable.from([]);
      async function* bytes(): AsyncGenerator<Buffer> {
        yield* (await work()).read(id, length);
      }
      return Readable.from(bytes(), { objectMode: false });
    },
    localPath: (id) => join(dir, id),
    async shortfall(id, offset) {
      // Missing, unreadable or not loaded: nothing to say here (a write reports it).
      return (await work().catch(() => undefined))?.shortfall?.(id, offset);
    },
    remove: async (id) => (await work()).remove(id),
    sweep: async (now) => (await work()).sweep(now),
  };
}
