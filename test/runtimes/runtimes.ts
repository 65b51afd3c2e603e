/**
 * Runs a runtime-neutral script on Node, Deno or Bun (issue 46): the script is bundled from `src/` with
 * esbuild (`platform: "neutral"`, packages left to the runtime to resolve from `node_modules`, as a
 * user's app would), then run by the runtime's binary from its npm package (`deno`, `bun`). Deno runs
 * with no permission at all: no disk, no environment, no network beyond what a flag grants.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp } from "node:fs/promises";
import { join, resolve } from "node:path";
import { build } from "esbuild";

export type Runtime = "node" | "deno" | "bun";

const ROOT = resolve(import.meta.dirname, "../..");

/** The runtime's binary: Node runs this test, Deno and Bun come from their npm packages. */
export function binaryOf(runtime: Runtime): string {
  if (runtime === "node") return process.execPath;
  return join(ROOT, "node_modules", ".bin", runtime);
}

/** Bundles `entry` (a path under the repository) into one ESM file and returns its path and its external imports. */
export async function bundle(entry: string): Promise<{ file: string; externals: string[] }> {
  // Inside the repository, so the runtimes resolve the packages left external from its node_modules.
  const cache = join(ROOT, "node_modules", ".cache", "mfb-runtimes");
  await mkdir(cache, { recursive: true });
  const file = join(await mkdtemp(join(cache, "run-")), "bundle.mjs");
  const result = await build({
    entryPoints: [join(ROOT, entry)],
    outfile: file,
    bundle: true,
    platform: "neutral",
    format: "esm",
    target: "es2022",
    packages: "external",
    mainFields: ["module", "main"],
    metafile: true,
    logLevel: "error",
  });
  const externals = new Set<string>();
  for (const output of Object.values(result.metafile.outputs)) {
    for (const imported of output.imports) if (imported.external) externals.add(imported.path);
  }
  return { file, externals: [...externals].sort() };
}

/** The command line that runs `file` on `runtime` (`allow`: extra Deno flags, e.g. `--allow-net=127.0.0.1`). */
export function commandFor(runtime: Runtime, file: string, allow: string[] = []): [string, string[]] {
  if (runtime === "deno") return [binaryOf("deno"), ["run", "--no-prompt", ...allow, file]];
  if (runtime === "bun") return [binaryOf("bun"), ["run", file]];
  return [binaryOf("node"), [file]];
}

/** Environment for the runtimes: no update checks, no telemetry (nothing outside is reachable). */
export const RUNTIME_ENV = { ...process.env, DENO_NO_UPDATE_CHECK: "1", DO_NOT_TRACK: "1", NO_COLOR: "1" };

/** Runs `file` on `runtime` to its end; resolves with its exit code and output. */
export function runScript(
  runtime: Runtime,
  file: string,
  allow: string[] = [],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const [command, args] = commandFor(runtime, file, allow);
  return new Promise((done) => {
    execFile(command, args, { cwd: ROOT, env: RUNTIME_ENV, timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      done({ code, stdout, stderr });
    });
  });
}
