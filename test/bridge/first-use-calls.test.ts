/**
 * `FileBridge` loads its call path (`resolution.ts`, with the input forms, the per-call folders, a
 * wrapped call's work and the sweeps) on first use (issue 39): making a bridge,
 * a file input and a wrapped handler loads none of it; a load that fails is that call's error, and
 * nothing is left behind.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { countLoads } from "../support/first-use.js";

const failure = () => Object.assign(new Error("call path could not load"), { code: "ERR_MODULE_NOT_FOUND" });
const isFailure = (error: unknown, expected: Error) =>
  // Under vitest a mocked module's failure arrives wrapped, with the load's error as its cause.
  error === expected || (error as Error | undefined)?.cause === expected;

describe("FileBridge's call path, loaded on first use", () => {
  let tmp: string;
  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), "mfb-first-use-"));
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it("a bridge, its file input and a wrapped handler load none of it; the first resolve does", async () => {
    const { loads } = countLoads("src/bridge/resolution.js");
    const { FileBridge } = await import("../../src/bridge/file-bridge.js");
    const bridge = new FileBridge({ tmpDir: tmp, sweepOnStart: false });
    bridge.fileInput();
    bridge.withFiles(async () => ({ content: [] }), { fields: ["file"] });
    expect(loads.attempts).toBe(0);
    await using file = await bridge.resolve("data:text/plain;name=a.txt;base64,aGk=", { scope: "s1" });
    expect(await bridge.resolve("data:,x", { scope: "s1" }).then((f) => f.dispose())).toBeUndefined();
    expect(file.name).toBe("a.txt");
    expect(loads.attempts).toBe(1);
    await bridge.close();
  });

  it("a failed load fails the resolve with that error, and the next resolve loads it", async () => {
    const expected = failure();
    const { loads } = countLoads("src/bridge/resolution.js", { failFirst: expected });
    const { FileBridge } = await import("../../src/bridge/file-bridge.js");
    const bridge = new FileBridge({ tmpDir: tmp, sweepOnStart: false });
    const input = "data:text/plain;name=a.txt;base64,aGk=";
    const error = await bridge.resolve(input, { scope: "s1" }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(loads.attempts).toBe(1);
    expect(isFailure(error, expected)).toBe(true);
    expect(await readdir(tmp)).toEqual([]);
    await using file = await bridge.resolve(input, { scope: "s1" });
    expect(file.name).toBe("a.txt");
    expect(file.size).toBe(2);
    await bridge.close();
  });

  it("a wrapped call whose load fails answers an error result without running the handler; the next call runs", async () => {
    const expected = failure();
    countLoads("src/bridge/resolution.js", { failFirst: expected });
    const { FileBridge } = await import("../../src/bridge/file-bridge.js");
    const bridge = new FileBridge({ tmpDir: tmp, sweepOnStart: false });
    const seen: string[] = [];
    const handler = bridge.withFiles(
      async ({ file }: { file: string }) => {
        seen.push(file);
        return { content: [{ type: "text" as const, text: "ok" }] };
      },
      { fields: ["file"] },
    );
    const args = { file: "data:text/plain;name=a.txt;base64,aGk=" };
    const refused = (await handler(args, {})) as { isError?: boolean };
    expect(refused.isError).toBe(true);
    expect(seen).toEqual([]);
    expect(await readdir(tmp)).toEqual([]);
    const answered = (await handler(args, {})) as { isError?: boolean; content: unknown[] };
    expect(answered.isError).toBeUndefined();
    expect(seen).toHaveLength(1);
    await bridge.close();
    expect(await readdir(tmp)).toEqual([]);
  });

  it("close() never rejects, even when the call path cannot load", async () => {
    const { loads } = countLoads("src/bridge/resolution.js", { failFirst: failure() });
    const { FileBridge } = await import("../../src/bridge/file-bridge.js");
    const bridge = new FileBridge({ tmpDir: tmp, sweepOnStart: false });
    await expect(bridge.close()).resolves.toBeUndefined();
    expect(loads.attempts).toBe(1);
  });
});
