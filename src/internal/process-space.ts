/**
 * Which processes a process id means something to. Folders this package leaves in a shared temp
 * folder name the process that made them, so a later sweep can remove those of a process that is
 * gone; but a process id says that only to a process of the same host, boot and pid namespace (a
 * container or sandbox sharing `/tmp` sees other ids, and a live owner there looks dead here). So a
 * folder also names its owner's space, and a sweep judges by process id only the folders of its own.
 */

import { readFileSync, readlinkSync } from "node:fs";
import { createHash, hostname } from "./node-builtins.js";

/** The host, boot and pid namespace this process's ids belong to (boot and namespace where Linux has them). */
export interface ProcessSpace {
  host: string;
  /** `/proc/sys/kernel/random/boot_id`. */
  boot?: string;
  /** `/proc/self/ns/pid`, e.g. `pid:[4026531836]`. */
  pidns?: string;
}

function readOr(read: () => string): string | undefined {
  try {
    return read().trim() || undefined;
  } catch {
    return undefined;
  }
}

let space: ProcessSpace | undefined;
let spaceId: string | undefined;

/** This process's {@link ProcessSpace} (read once). */
export function processSpace(): ProcessSpace {
  if (space === undefined) {
    const boot = readOr(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8"));
    const pidns = readOr(() => readlinkSync("/proc/self/ns/pid"));
    space = { host: hostname(), ...(boot ? { boot } : {}), ...(pidns ? { pidns } : {}) };
  }
  return space;
}

/** Whether two spaces are the same (so a process id of one means the same process in the other). */
export function sameSpace(a: Partial<ProcessSpace>, b: ProcessSpace): boolean {
  return a.host === b.host && a.boot === b.boot && a.pidns === b.pidns;
}

/** {@link processSpace} as 8 hex digits, short enough for a folder name (`call-<pid>.<id>-…`). */
export function processSpaceId(): string {
  spaceId ??= createHash("sha256").update(JSON.stringify(processSpace())).digest("hex").slice(0, 8);
  return spaceId;
}

/**
 * Whether process `pid` of this process's space is certainly gone: signalling it says there is no
 * such process (`ESRCH`). Any other answer (alive, another user's, an id `kill` refuses) is not.
 */
export function processGone(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}
