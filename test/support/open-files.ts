/**
 * How many of this process's open descriptors are files inside `folder` (Linux, from /proc): what a
 * test that checks a piece closed its files counts, leaving out the sockets, pipes and threads a
 * loaded machine closes later. `folder` is matched by its real path, the one /proc's links name.
 */
import { readdirSync, readlinkSync, realpathSync } from "node:fs";

export function openFilesIn(folder: string): number {
  const prefix = `${realpathSync(folder)}/`;
  let count = 0;
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith(prefix)) count++;
    } catch {
      // Closed while listed.
    }
  }
  return count;
}
