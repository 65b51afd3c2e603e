import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { runDemo } from "./demo.js";

const root = join(import.meta.dirname, "..", "..");

describe("npm run demo", () => {
  it("passes every check of the end-to-end path and leaves no temp files", async () => {
    const lines: string[] = [];
    const summary = await runDemo((line) => lines.push(line));
    expect(summary.checks).not.toEqual({});
    expect(Object.entries(summary.checks).filter(([, ok]) => !ok)).toEqual([]);
    expect(summary.tempFilesLeft).toBe(0);
    expect(lines.at(-1)?.trim()).toMatch(/^All checks passed/);
  });

  it("runs as the README's command and exits 0", async () => {
    const { stdout } = await promisify(execFile)("npm", ["run", "-s", "demo"], {
      cwd: root,
      timeout: 90_000,
    });
    expect(stdout).toContain("All checks passed");
    expect(stdout).toContain("upload://sessions/");
  }, 120_000);
});
