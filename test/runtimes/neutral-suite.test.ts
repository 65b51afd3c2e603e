/**
 * The core suite's runtime-neutral part (test/runtimes/neutral/suite.ts: memory stores, signing,
 * registry, artifacts, routes with uploads, tus, ranges and the upload page, FileBridge without a
 * disk) on Node, Deno and Bun, each installed from npm (issue 46). Deno runs it with no permission,
 * which is also how "no writable disk" is tested for real.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { bundle, type Runtime, runScript } from "./runtimes.js";

/** Cases in neutral/suite.ts (a runtime that stopped early reports fewer). */
const CASES = 16;

let file: string;

beforeAll(async () => {
  ({ file } = await bundle("test/runtimes/neutral/suite.ts"));
});

describe("the runtime-neutral suite", () => {
  it.each<Runtime>(["node", "deno", "bun"])("runs green on %s", async (runtime) => {
    const { code, stdout, stderr } = await runScript(runtime, file);
    const line = stdout.trim().split("\n").at(-1) ?? "";
    let report: { runtime: string; passed: number; failed: number; failures: unknown[] };
    try {
      report = JSON.parse(line);
    } catch {
      throw new Error(`no report from ${runtime} (exit ${code}):\n${stdout}\n${stderr}`);
    }
    expect(report.failures).toEqual([]);
    expect(report).toMatchObject({ runtime, passed: CASES, failed: 0 });
    expect(code).toBe(0);
  });
});
