/**
 * Our package as a user runs it. Every bench loads our code from `dist/node/<entry>.js`, the ESM build
 * Node resolves `mcp-file-bridge` and its subpaths to, never from `src/`: tsx transforms TypeScript
 * with esbuild's `keepNames`, which wraps every named closure in `__name()`, a `defineProperty` that
 * turns the function into a dictionary-mode object about four times its size. Each request's closures
 * then cost more to allocate and promote than in the published build (docs/performance.md, Session
 * 20), so a bench of the sources measured code no user runs. The baselines are plain Node or their
 * own published packages, as before.
 *
 * @example
 * ```ts
 * const { fsStore } = await built<typeof import("../src/index.js")>("index");
 * ```
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { here } from "./_lib.js";

const repo = join(here, "..");

/** The newest modification time of a file under `dir`, in milliseconds. */
function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

let checked = false;

/** Throws unless `dist/node/` holds a build at least as new as every file of `src/`. */
export function assertFreshBuild(): void {
  if (checked) return;
  let built: number;
  try {
    built = statSync(join(repo, "dist", "node", "index.js")).mtimeMs;
  } catch {
    throw new Error("no build in dist/node: run `npm run build` before the benches");
  }
  if (newest(join(repo, "src")) > built) {
    throw new Error("dist/node is older than src/: run `npm run build` before the benches");
  }
  checked = true;
}

/** The built module of one entry (`index` for `mcp-file-bridge`, `node`, `s3`, `redis`, `proxy`, ...). */
export async function built<T>(entry: string): Promise<T> {
  assertFreshBuild();
  return (await import(pathToFileURL(join(repo, "dist", "node", `${entry}.js`)).href)) as T;
}
