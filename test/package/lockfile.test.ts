/**
 * The committed lockfile is what a fresh install writes (issue 23: a fresh `npm install` used to add
 * 479 lines of optional platform packages). npm resolves the tree from `package.json` and the lockfile
 * (`--package-lock-only`: no download, no scripts) in a copy, and must leave the lockfile byte for byte.
 */
import { execFile } from "node:child_process";
import { copyFile, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { repoRoot } from "../support/helpers.js";

it("a fresh npm install leaves package-lock.json unchanged", { timeout: 120_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), "mfb-lockfile-"));
  try {
    for (const name of ["package.json", "package-lock.json"])
      await copyFile(join(repoRoot, name), join(dir, name));
    await promisify(execFile)(
      "npm",
      ["install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline"],
      { cwd: dir, timeout: 110_000 },
    );
    const committed = await readFile(join(repoRoot, "package-lock.json"), "utf8");
    const fresh = await readFile(join(dir, "package-lock.json"), "utf8");
    expect(
      fresh === committed,
      "npm rewrote package-lock.json: run `npm install` and commit the lockfile",
    ).toBe(true);
  } finally {
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  }
});
