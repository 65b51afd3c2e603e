/**
 * What is left in a temp dir after calls: its entries, where a spare folder of this process's pool
 * (made ahead of calls, see src/bridge/call-folders.ts) counts as the files inside it, so an empty
 * spare folder is nothing left and a leaked file in one is `<folder>/<file>`.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { callFoldersRefilled, isSpareCallFolder } from "../../src/bridge/call-folders.js";

export async function tempLeftovers(tmp: string): Promise<string[]> {
  // Let a refill under way finish first, so nothing is being made while the caller looks (or removes).
  await callFoldersRefilled(tmp);
  let names: string[];
  try {
    names = await readdir(tmp);
  } catch {
    return [];
  }
  const left: string[] = [];
  for (const name of names) {
    if (!isSpareCallFolder(join(tmp, name))) {
      left.push(name);
      continue;
    }
    for (const entry of await readdir(join(tmp, name))) left.push(`${name}/${entry}`);
  }
  return left;
}
