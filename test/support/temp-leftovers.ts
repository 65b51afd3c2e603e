/**
 * What is left in a temp dir after calls: its entries, where this process's call root (kept between
 * calls, see src/internal/call-root.ts) counts as the files inside it, so an empty root is nothing
 * left and a leaked file in it is `<root>/<file>`.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { isCallRoot } from "../../src/internal/call-root.js";

export async function tempLeftovers(tmp: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(tmp);
  } catch {
    return [];
  }
  const left: string[] = [];
  for (const name of names) {
    if (!isCallRoot(join(tmp, name))) {
      left.push(name);
      continue;
    }
    for (const inner of await readdir(join(tmp, name))) left.push(`${name}/${inner}`);
  }
  return left;
}
