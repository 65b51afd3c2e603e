/**
 * Where the bytes of tus uploads wait until commit: one staging file per upload in a folder, written
 * at the verified offset (anything past it — the tail of a write a crash cut — is cut off first), with
 * a small sidecar holding its expiry so a sweep removes what expired without asking the state store.
 */
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, open, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";

/**
 * The result of one write: how many bytes reached the file, and the failure that ended it early.
 *
 * @example
 * ```ts
 * const { written, error }: StagingWrite = await staging.write(id, offset, body);
 * ```
 */
export interface StagingWrite {
  written: number;
  error?: unknown;
}

/**
 * The byte side of tus uploads: one growing staging object per upload id.
 *
 * @example
 * ```ts
 * const staging = fsTusStaging("/var/lib/app/tus");
 * await staging.create(id, Date.now() + 86_400_000);
 * const { written } = await staging.write(id, 0, body);
 * ```
 */
export interface TusStaging {
  /** Creates an empty staging object that expires at `expiresAt` (epoch ms). */
  create(id: string, expiresAt: number): Promise<void>;
  /** Writes `source` at `offset`, cutting off anything past it first; never rejects. */
  write(id: string, offset: number, source: Readable): Promise<StagingWrite>;
  /** Cuts the staging object back to `length` bytes (a refused checksum). */
  truncate(id: string, length: number): Promise<void>;
  /** The first `length` bytes of the staging object. */
  read(id: string, length: number): Readable;
  /** Removes the staging object; missing is fine. */
  remove(id: string): Promise<void>;
  /** Removes every staging object past its expiry; resolves with how many. */
  sweep(now: number): Promise<number>;
}

/** The default staging folder: one per user under the OS temp folder, shared by restarts. */
export function defaultTusStagingDir(): string {
  const user = typeof process.getuid === "function" ? String(process.getuid()) : "user";
  return join(tmpdir(), `mcp-file-bridge-tus-${user}`);
}

const SIDECAR = ".expires";
/** A staging file without a sidecar older than this is an orphan of a crash between the two writes. */
const ORPHAN_MS = 24 * 60 * 60_000;

/**
 * Staging files in a local folder (made `0700` on first use). Replicas that resume each other's
 * uploads need this folder shared, or the S3 staging.
 *
 * @example
 * ```ts
 * createFileRoutes({ store, minter, state, tus: { staging: fsTusStaging("/srv/tus") } });
 * ```
 */
export function fsTusStaging(dir: string = defaultTusStagingDir()): TusStaging {
  let ready: Promise<unknown> | undefined;
  const folder = async () => {
    ready ??= mkdir(dir, { recursive: true, mode: 0o700 });
    await ready;
    return dir;
  };
  const pathOf = (id: string) => join(dir, id);
  return {
    async create(id, expiresAt) {
      await folder();
      await writeFile(pathOf(id) + SIDECAR, String(expiresAt), { mode: 0o600 });
      await writeFile(pathOf(id), new Uint8Array(0), { mode: 0o600, flag: "wx" });
    },
    async write(id, offset, source) {
      let handle: Awaited<ReturnType<typeof open>>;
      try {
        handle = await open(pathOf(id), "r+");
        await handle.truncate(offset);
      } catch (error) {
        source.resume();
        return { written: 0, error };
      }
      const sink = createWriteStream("", { fd: handle, start: offset, highWaterMark: 1 << 20 });
      try {
        await pipeline(source, sink);
        return { written: sink.bytesWritten };
      } catch (error) {
        return { written: sink.bytesWritten, error };
      }
    },
    async truncate(id, length) {
      const handle = await open(pathOf(id), "r+");
      try {
        await handle.truncate(length);
      } finally {
        await handle.close();
      }
    },
    read(id, length) {
      if (length === 0) return Readable.from([]);
      return createReadStream(pathOf(id), { start: 0, end: length - 1, highWaterMark: 1 << 20 });
    },
    async remove(id) {
      await rm(pathOf(id), { force: true });
      await rm(pathOf(id) + SIDECAR, { force: true });
    },
    async sweep(now) {
      let entries: string[];
      try {
        entries = await readdir(dir);
      } catch {
        return 0;
      }
      const names = new Set(entries);
      let removed = 0;
      for (const entry of entries) {
        if (entry.endsWith(SIDECAR)) {
          const id = entry.slice(0, -SIDECAR.length);
          const expiresAt = Number(await readFile(join(dir, entry), "utf8").catch(() => "0"));
          if (expiresAt > now) continue;
          await this.remove(id);
          removed++;
        } else if (!names.has(entry + SIDECAR)) {
          const info = await stat(join(dir, entry)).catch(() => undefined);
          if (info && now - info.mtimeMs > ORPHAN_MS) {
            await rm(join(dir, entry), { force: true });
            removed++;
          }
        }
      }
      return removed;
    },
  };
}
