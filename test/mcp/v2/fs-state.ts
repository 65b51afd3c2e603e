/**
 * A `StateStore` on a shared folder, for the multi-process tests: what a Redis gives replicas in
 * production (tickets and single-use nonces seen by every process), with one file per key.
 * `setIfAbsent` is atomic across processes through `open(…, "wx")`.
 */
import { createHash } from "node:crypto";
import { mkdir, open, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { StateStore } from "../../../src/index.js";
import type { StateSetOptions } from "../../../src/storage/kit/index.js";

interface Entry {
  value: unknown;
  expiresAt: number | null;
}

function ttlMs(options?: StateSetOptions): number | null {
  const ttl = options?.ttl;
  if (ttl === undefined) return null;
  if (typeof ttl === "number") return ttl * 1000;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(ttl);
  if (!match) throw new Error(`fsState: unsupported ttl ${ttl}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as "ms"];
  return Number(match[1]) * unit;
}

export function fsState(dir: string): StateStore {
  const pathOf = (key: string) => join(dir, createHash("sha256").update(key).digest("hex"));
  const entry = (value: unknown, options?: StateSetOptions): string => {
    const ms = ttlMs(options);
    return JSON.stringify({ value, expiresAt: ms === null ? null : Date.now() + ms } satisfies Entry);
  };
  const read = async (key: string): Promise<Entry | null> => {
    try {
      const parsed = JSON.parse(await readFile(pathOf(key), "utf8")) as Entry;
      if (parsed.expiresAt !== null && parsed.expiresAt <= Date.now()) {
        await rm(pathOf(key), { force: true });
        return null;
      }
      return parsed;
    } catch {
      return null;
    }
  };
  const ready = mkdir(dir, { recursive: true });
  return {
    driver: "fs-test",
    async get<T>(key: string) {
      await ready;
      return ((await read(key))?.value ?? null) as T | null;
    },
    async set(key, value, options) {
      await ready;
      const temp = `${pathOf(key)}.${process.pid}.${Math.random().toString(36).slice(2)}`;
      await writeFile(temp, entry(value, options));
      await rename(temp, pathOf(key));
    },
    async setIfAbsent(key, value, options) {
      await ready;
      if ((await read(key)) !== null) return false;
      try {
        const handle = await open(pathOf(key), "wx");
        await handle.writeFile(entry(value, options));
        await handle.close();
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
        throw error;
      }
    },
    async delete(key) {
      await ready;
      const existed = (await read(key)) !== null;
      await rm(pathOf(key), { force: true });
      return existed;
    },
  };
}
