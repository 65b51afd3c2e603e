/**
 * tus staging in memory, for a runtime without a writable disk (Cloudflare Workers, Deno without
 * write access): each upload's bytes are kept as the chunks that arrived, until commit or expiry. A
 * ticket's `maxBytes` bounds each upload, and the staged bytes count against the scope's quota as
 * with any staging (`staging-ledger`). Lost on restart, like the process: an upload then starts over.
 */
import { Readable } from "node:stream";
import { FileBridgeError } from "../../errors/file-bridge-error.js";
import type { TusStaging } from "./fs-staging.js";

interface StagedBytes {
  chunks: Uint8Array[];
  size: number;
  expiresAt: number;
}

/** Keeps the first `length` bytes of `entry` (whole chunks, the last one cut). */
function cut(entry: StagedBytes, length: number): void {
  let kept = 0;
  const chunks: Uint8Array[] = [];
  for (const chunk of entry.chunks) {
    if (kept >= length) break;
    const take = Math.min(chunk.byteLength, length - kept);
    chunks.push(take === chunk.byteLength ? chunk : chunk.subarray(0, take));
    kept += take;
  }
  entry.chunks = chunks;
  entry.size = kept;
}

/**
 * A {@link TusStaging} that holds the bytes in memory: what the tus endpoint stages in by default
 * where there is no writable disk and the store offers no staging of its own (a `memoryStore` on a
 * Worker); on Node the default stays `fsTusStaging()`. Not exported: the tus endpoint picks it.
 */
export function memoryTusStaging(): TusStaging {
  const staged = new Map<string, StagedBytes>();
  const entryOf = (id: string): StagedBytes => {
    const entry = staged.get(id);
    if (!entry) throw new FileBridgeError("NOT_FOUND", "No such staged upload");
    return entry;
  };
  return {
    async create(id, expiresAt) {
      if (staged.has(id)) throw new FileBridgeError("STORAGE_ERROR", "The staged upload exists already");
      staged.set(id, { chunks: [], size: 0, expiresAt });
    },
    async write(id, offset, source, observe) {
      const entry = staged.get(id);
      if (!entry || entry.size < offset) {
        source.resume();
        const error = entry
          ? new FileBridgeError(
              "STORAGE_ERROR",
              `The staged upload holds ${entry.size} bytes, fewer than ${offset}`,
            )
          : new FileBridgeError("NOT_FOUND", "No such staged upload");
        return { written: 0, error };
      }
      if (entry.size > offset) cut(entry, offset);
      let written = 0;
      try {
        for await (const chunk of source as AsyncIterable<Uint8Array>) {
          // A copy: the chunk may be a view of a pooled buffer the stream reuses.
          const copy = chunk.slice();
          entry.chunks.push(copy);
          entry.size += copy.byteLength;
          written += copy.byteLength;
          await observe?.(copy);
        }
        return { written };
      } catch (error) {
        return { written, error };
      }
    },
    async truncate(id, length) {
      cut(entryOf(id), length);
    },
    read(id, length) {
      const entry = staged.get(id);
      if (!entry) {
        const missing = new Readable({ read() {} });
        missing.destroy(new FileBridgeError("NOT_FOUND", "No such staged upload"));
        return missing;
      }
      const copy: StagedBytes = { chunks: entry.chunks, size: entry.size, expiresAt: entry.expiresAt };
      cut(copy, length);
      return Readable.from(copy.chunks, { objectMode: false });
    },
    async shortfall(id, offset) {
      const size = staged.get(id)?.size;
      return size !== undefined && size < offset ? size : undefined;
    },
    async remove(id) {
      staged.delete(id);
    },
    async sweep(now) {
      let removed = 0;
      for (const [id, entry] of staged) {
        if (entry.expiresAt <= now) {
          staged.delete(id);
          removed++;
        }
      }
      return removed;
    },
  };
}
