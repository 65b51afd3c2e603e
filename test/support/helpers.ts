import { execFile, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

/** The repository root. */
export const repoRoot = join(import.meta.dirname, "..", "..");

/** The newest modification time (ms) of the files under `dir`, recursively. */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** Whether dist/ holds every entry point, each newer than the sources and the build's config. */
function builtAndFresh(): boolean {
  const outputs = ["index.js", "index.cjs", "node.js", "node.cjs"].map((name) =>
    join(repoRoot, "dist", name),
  );
  if (!outputs.every((path) => existsSync(path))) return false;
  const inputs = Math.max(
    newestMtime(join(repoRoot, "src")),
    ...["package.json", "tsup.config.ts"].map((name) => statSync(join(repoRoot, name)).mtimeMs),
  );
  return outputs.every((path) => statSync(path).mtimeMs >= inputs);
}

/**
 * Builds into a folder of its own, then swaps it in with two renames: tests running beside this one
 * keep reading a complete dist/ (tsup empties its output folder first).
 */
function buildAndSwap(): void {
  const fresh = join(repoRoot, `.dist-${process.pid}`);
  const old = join(repoRoot, `.dist-old-${process.pid}`);
  try {
    execFileSync("npx", ["tsup", "--out-dir", fresh], { cwd: repoRoot, stdio: "ignore" });
    if (existsSync(join(repoRoot, "dist"))) renameSync(join(repoRoot, "dist"), old);
    renameSync(fresh, join(repoRoot, "dist"));
  } finally {
    rmSync(fresh, { recursive: true, force: true, maxRetries: 3 });
    rmSync(old, { recursive: true, force: true, maxRetries: 3 });
  }
}

/**
 * Builds the package (dist/) when it was not built or a source changed since, so tests of the built
 * package run on the code in the tree (also right after `npm install` on a fresh clone). One test
 * process builds at a time (a lock folder); the others wait for it, and the new build replaces dist/
 * only once complete. CI builds before testing, so
 * there it does nothing.
 */
export function ensureBuilt(): void {
  const lock = join(repoRoot, ".build-lock");
  while (!builtAndFresh()) {
    try {
      mkdirSync(lock);
    } catch {
      // Another test process is building: wait for it, then look again. A lock left by a killed
      // process (older than any build takes) is removed.
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 5 * 60_000) rmSync(lock, { recursive: true, force: true, maxRetries: 3 });
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
      continue;
    }
    try {
      if (!builtAndFresh()) buildAndSwap();
    } finally {
      rmSync(lock, { recursive: true, force: true, maxRetries: 3 });
    }
    return;
  }
}

/** What a failure's `code` property says, or `"NO_CODE"` for errors without one. */
function codeFrom(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "NO_CODE";
}

/**
 * The error `code` a promise (or async function) fails with, or `"OK"` when it succeeds. Tests assert
 * on codes, never on message text.
 */
export async function codeOf(run: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof run === "function" ? run() : run);
    return "OK";
  } catch (error) {
    return codeFrom(error);
  }
}

/** The error `code` a synchronous call throws, or `"OK"` when it returns. */
export function codeOfSync(run: () => unknown): string {
  try {
    run();
    return "OK";
  } catch (error) {
    return codeFrom(error);
  }
}

/** Lower-case hex sha256. */
export function sha256(bytes: Uint8Array | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Resolves once `condition()` holds (polled every 10 ms); fails after `ms` milliseconds. */
export async function waitUntil(condition: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** What `promise` rejects with; fails when it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("the call did not fail");
}

/**
 * Runs `code` (an ES module, through tsx) in a new node process whose module hook refuses every
 * import starting with `prefix` (with the error "`label` blocked: <specifier>"), as if those packages
 * were not installed; resolves with its stdout, trimmed.
 */
export async function runWithoutPackages(prefix: string, label: string, code: string): Promise<string> {
  const hook = `
import { register } from "node:module";
register("data:text/javascript," + encodeURIComponent(\`
export async function resolve(specifier, context, next) {
  if (specifier.startsWith(${JSON.stringify(prefix)})) throw new Error(${JSON.stringify(`${label} blocked: `)} + specifier);
  return next(specifier, context);
}\`));
`;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      "--import",
      `data:text/javascript,${encodeURIComponent(hook)}`,
      "--import",
      "tsx",
      "--input-type=module",
      "-e",
      code,
    ],
    { cwd: repoRoot },
  );
  return stdout.trim();
}
