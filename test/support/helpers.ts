import { execFile, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

/** The repository root. */
export const repoRoot = join(import.meta.dirname, "..", "..");

/**
 * Builds the package (dist/) when it has not been built, so tests of the built package also run right
 * after `npm install` on a fresh clone. CI builds before testing, so there it does nothing.
 */
export function ensureBuilt(): void {
  const built = ["index.js", "index.cjs", "node.js", "node.cjs"].every((name) =>
    existsSync(join(repoRoot, "dist", name)),
  );
  if (!built) execFileSync("npx", ["tsup"], { cwd: repoRoot, stdio: "ignore" });
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
