/**
 * The sandbox the FileBridge tests share: per test a fresh folder with a root (`docs/report.pdf`,
 * an empty `empty.txt`), a `secret.txt` outside the root, and a temp folder for the bridge. `base`,
 * `root` and `tmp` are live bindings, reassigned before each test by {@link useBridgeSandbox}.
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { callFoldersRefilled } from "../../src/bridge/call-folders.js";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import type { FileBridgeOptions } from "../../src/bridge/options.js";
import { tempLeftovers } from "../support/temp-leftovers.js";

export const scope = "session-1";
export let base: string;
export let root: string;
export let tmp: string;

/** Registers the hooks that make (and remove) the sandbox around each test of the calling file. */
export function useBridgeSandbox(): void {
  beforeEach(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), "fb-bridge-")));
    root = join(base, "root");
    tmp = join(base, "tmp");
    await mkdir(join(root, "docs"), { recursive: true });
    await writeFile(join(root, "docs", "report.pdf"), "%PDF-1.7 fake pdf body");
    await writeFile(join(root, "empty.txt"), "");
    await writeFile(join(base, "secret.txt"), "top secret");
  });

  afterEach(async () => {
    // A test may end while the bridge refills its pool of spare folders in the background (after a
    // call's file is written): let that finish, or the removal can race a new folder (ENOTEMPTY).
    await callFoldersRefilled(tmp);
    await rm(base, { recursive: true, force: true, maxRetries: 3 });
  });
}

/** A bridge on the sandbox: its temp folder, the root as its only root. */
export function bridge(options: FileBridgeOptions = {}): FileBridge {
  return new FileBridge({ tmpDir: tmp, roots: [root], ...options });
}

/** What is left in the bridge's temp folder. */
export async function tempEntries(): Promise<string[]> {
  return tempLeftovers(tmp);
}
