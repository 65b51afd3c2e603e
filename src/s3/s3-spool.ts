/** The local spool of the S3 tus staging: a body is gathered on disk up to one part, never in memory. */
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { type FileHandle, mkdir, open, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";

const MiB = 1024 * 1024;

/** A local spool file holding at most one part. */
export class Spool {
  size = 0;
  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
  ) {}

  static async open(dir: string): Promise<Spool> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, randomBytes(12).toString("base64url"));
    return new Spool(path, await open(path, "w+", 0o600));
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
  }
}
