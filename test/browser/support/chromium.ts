import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";
import { repoRoot } from "../../support/helpers.js";

/**
 * Browser tests drive Debian's Chromium (`/usr/bin/chromium`, installed by
 * `scripts/browser/ensure-chromium.sh`) through playwright-core, which never downloads a browser.
 *
 * When Chromium is missing the suite FAILS, with a message that says how to install it — always under
 * `CI=true`. Locally, `MCP_FILE_BRIDGE_SKIP_BROWSER_TESTS=1` turns the failure into a skip.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** The env var that lets a local run skip the browser tests when Chromium is missing. */
export const SKIP_ENV = "MCP_FILE_BRIDGE_SKIP_BROWSER_TESTS";

/** Where screenshots go: `.tmp/screenshots/` (git-ignored; CI keeps it as a test artifact). */
export const SCREENSHOT_DIR = join(repoRoot, ".tmp", "screenshots");

/**
 * `true` when the browser tests should run; `false` only when Chromium is missing, not in CI, and the
 * skip variable is set. Throws (the suite fails loudly) in every other missing-Chromium case.
 */
export function browserAvailable(
  path: string = CHROMIUM_PATH,
  env: Record<string, string | undefined> = process.env,
): boolean {
  if (existsSync(path)) return true;
  const how = `Chromium is missing at ${path}. Install it with: sh scripts/browser/ensure-chromium.sh`;
  if (env.CI === "true") throw new Error(`${how} (browser tests never skip in CI)`);
  if (env[SKIP_ENV] === "1") return false;
  throw new Error(`${how} — or set ${SKIP_ENV}=1 to skip the browser tests locally`);
}

/** Chromium flags: quiet, offline, no background services, no GPU. */
export const CHROMIUM_ARGS: readonly string[] = [
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** A headless Chromium with a fresh profile; `close()` also removes the profile folder. */
export interface LaunchedBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Launches `/usr/bin/chromium` headless with a fresh `--user-data-dir` (`--no-sandbox` when root). */
export async function launchChromium(): Promise<LaunchedBrowser> {
  const userDataDir = await mkdtemp(join(tmpdir(), "mcp-file-bridge-chromium-"));
  const root = process.getuid?.() === 0;
  try {
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      // playwright adds --no-sandbox when the Chromium sandbox is off; as root it cannot work.
      chromiumSandbox: !root,
      args: [...CHROMIUM_ARGS],
      viewport: { width: 900, height: 700 },
    });
    return {
      context,
      close: async () => {
        await context.close().catch(() => {});
        await rm(userDataDir, { recursive: true, force: true, maxRetries: 3 });
      },
    };
  } catch (error) {
    await rm(userDataDir, { recursive: true, force: true, maxRetries: 3 });
    throw error;
  }
}

/** Path of a screenshot file under `.tmp/screenshots/` (the folder is created). */
export async function screenshotPath(name: string): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  return join(SCREENSHOT_DIR, name);
}
