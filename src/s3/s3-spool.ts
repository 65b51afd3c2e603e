/**
 * The local spool of the S3 tus staging: a body is gathered on disk up to one part, never in memory.
 * The spool folder is a private folder of this user, checked on every open (`privateDir`); a spool
 * file is made exclusively (`O_EXCL`, never through a symlink) and named after its process, so a
 * spool a killed process left behind is swept ({@link sweepSpools}).
 */
import { randomBytes } from "node:crypto";
import { constants, createReadStream } from "node:fs";
import { type FileHandle, open, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { type FolderRole, leftoverPrefix, privateDir, sweepLeftovers } from "../internal/temp-dir.js";

const MiB = 1024 * 1024;
/** Spool files: `spool-<pid>.<space>-<random>`. */
const SPOOL_PREFIX = "spool-";
/** Spool files of an older layout (random names only). */
const LEGACY_SPOOL = /^[A-Za-z0-9_-]{16}$/;
/** A spool file untouched this long is a leftover even if its process lives (a body writes it as it comes). */
const SPOOL_MAX_AGE_MS = 24 * 60 * 60_000;
/** Created exclusively, read and written, never through a symlink. */
const CREATE_FLAGS = constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/** The spool folder's role, for the error when it is not ours. */
export const SPOOL_DIR_ROLE: FolderRole = {
  what: "the S3 tus staging's spool folder",
  option: "s3TusStaging(store, state, { dir })",
};

/** Spool files in use by this process: never swept. */
const ACTIVE_SPOOLS = new Set<string>();

/** A local spool file holding at most one part. */
export class Spool {
  size = 0;
  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
  ) {}

  static async open(dir: string): Promise<Spool> {
    await privateDir(dir, SPOOL_DIR_ROLE);
    const path = join(dir, `${leftoverPrefix(SPOOL_PREFIX)}${randomBytes(12).toString("base64url")}`);
    const handle = await open(path, CREATE_FLAGS, 0o600);
    ACTIVE_SPOOLS.add(path);
    return new Spool(path, handle);
  }

  async append(chunk: Uint8Array): Promise<void> {
    let done = 0;
    while (done < chunk.length) {
      const { bytesWritten } = await this.handle.write(chunk, done, chunk.length - done, this.size);
      done += bytesWritten;
      this.size += bytesWritten;
    }
  }

  stream(): Readable {
    return createReadStream(this.path, { start: 0, end: this.size - 1, highWaterMark: MiB });
  }

  async reset(): Promise<void> {
    await this.handle.truncate(0);
    this.size = 0;
  }

  async close(): Promise<void> {
    await this.handle.close().catch(() => undefined);
    await rm(this.path, { force: true });
    ACTIVE_SPOOLS.delete(this.path);
  }
}

/**
 * Removes the spool files under `dir` a killed process left (its process certainly gone, or untouched
 * for a day): only regular files of this user, looked at with `lstat`. Resolves with how many; a
 * missing folder, or one that is not ours, is left alone (the next open reports it).
 */
export async function sweepSpools(dir: string, now: number): Promise<number> {
  try {
    await privateDir(dir, SPOOL_DIR_ROLE);
  } catch {
    return 0;
  }
  return sweepLeftovers(dir, {
    prefix: SPOOL_PREFIX,
    kind: "file",
    legacy: LEGACY_SPOOL,
    olderThanMs: SPOOL_MAX_AGE_MS,
    now,
    active: ACTIVE_SPOOLS,
  });
}
