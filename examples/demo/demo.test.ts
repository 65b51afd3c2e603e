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

  it("runs the same path on SDK v2 (stateless, 2026-07-28) and says so", async () => {
    const lines: string[] = [];
    const summary = await runDemo((line) => lines.push(line), "v2");
    expect(lines[1]).toMatch(/^SDK v2 \(@modelcontextprotocol\/server 2\.\d+\.\d+\), protocol era modern/);
    expect(Object.entries(summary.checks).filter(([, ok]) => !ok)).toEqual([]);
    expect(Object.keys(summary.checks).length).toBeGreaterThanOrEqual(11);
    expect(summary.tempFilesLeft).toBe(0);
  });

  it("runs as the README's command and exits 0", async () => {
    const { stdout } = await promisify(execFile)("npm", ["run", "-s", "demo"], {
      cwd: root,
      timeout: 90_000,
    });
    expect(stdout).toContain("All checks passed");
    expect(stdout).toContain("upload://sessions/");
    expect(stdout).toMatch(/^SDK v1 \(@modelcontextprotocol\/sdk 1\./m);
  }, 120_000);

  it("takes --sdk v2", async () => {
    const { stdout } = await promisify(execFile)("npm", ["run", "-s", "demo", "--", "--sdk", "v2"], {
      cwd: root,
      timeout: 90_000,
    });
    expect(stdout).toMatch(/^SDK v2 \(@modelcontextprotocol\/server /m);
    expect(stdout).toContain("All checks passed");
  }, 120_000);
});
