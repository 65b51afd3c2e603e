/**
 * `mcp-file-bridge proxy --stdio` under a client that exits before its MCP servers (Gemini CLI does):
 * the proxy's stderr and stdout are closed pipes by the time it logs its shutdown, and it must still
 * shut down in order, leaving no temp storage folder (with the session's files) behind.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { removeDirs, tempDir } from "../proxy/support.js";
import { repoRoot } from "../support/helpers.js";
import { CLI, rpc, yamlConfig } from "./support.js";

const SLOW = { timeout: 120_000 };

/** `mcp-file-bridge proxy --config <config> --stdio` with its temp folder under `tmp`, once it is up. */
async function startStdioProxy(config: string, tmp: string) {
  const child = spawn(process.execPath, ["--import", "tsx", CLI, "proxy", "--config", config, "--stdio"], {
    cwd: repoRoot,
    stdio: ["pipe", "pipe", "pipe"],
    // The proxy's own temp storage folder is made under TMPDIR.
    env: { ...process.env, TMPDIR: tmp },
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let stderr = "";
  await new Promise<void>((resolve, reject) => {
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      if (/health:/.test(stderr)) resolve();
    });
    void exited.then((code) => reject(new Error(`proxy exited with ${code}: ${stderr}`)));
  });
  return { child, exited };
}

describe("mcp-file-bridge proxy --stdio when its client has gone", () => {
  let dir: string;
  let tmp: string;
  let config: string;

  beforeAll(async () => {
    dir = await tempDir("proxy-gone-");
    tmp = await tempDir("proxy-gone-tmp-");
    config = join(dir, "proxy.yaml");
    await writeFile(config, yamlConfig(join(dir, "handoff"), join(dir, "out")));
  });

  afterAll(async () => {
    await removeDirs(dir, tmp);
  });

  const proxyFolders = async () => (await readdir(tmp)).filter((name) => name.startsWith("mcp-file-proxy-"));

  /** A session that stored an artifact in the proxy's temp storage (which must not outlive it). */
  async function sessionWithAFile(child: ChildProcessWithoutNullStreams) {
    const client = rpc(child);
    expect((await client.initialize()).result).toBeDefined();
    const written = await client.request("tools/call", {
      name: "write_file",
      arguments: { name: "w.txt", text: "left behind?" },
    });
    expect(JSON.stringify(written.result)).toContain("w.txt");
    const [folder] = await proxyFolders();
    expect(folder).toBeDefined();
    expect(await readdir(join(tmp, folder as string), { recursive: true })).toContain(".owner");
    return client;
  }

  it(
    "exits 0 and removes its temp storage when stdin ends after stderr and stdout closed",
    SLOW,
    async () => {
      const { child, exited } = await startStdioProxy(config, tmp);
      try {
        await sessionWithAFile(child);
        // The client exits: the read ends of stderr and stdout close, then stdin ends.
        child.stderr.destroy();
        child.stdout.destroy();
        child.stdin.end();
        expect(await exited).toBe(0);
        expect(await proxyFolders()).toEqual([]);
      } finally {
        if (child.exitCode === null) child.kill("SIGKILL");
      }
    },
  );

  it("shuts down when it cannot write an answer to stdout, even with stdin still open", SLOW, async () => {
    const { child, exited } = await startStdioProxy(config, tmp);
    try {
      const client = await sessionWithAFile(child);
      child.stderr.destroy();
      child.stdout.destroy();
      // Its answer meets a closed stdout (EPIPE): nobody can read what it does from here on.
      void client.request("tools/call", { name: "write_file", arguments: { name: "x.txt", text: "x" } });
      expect(await exited).toBe(0);
      expect(await proxyFolders()).toEqual([]);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });

  it("removes the temp storage a killed proxy left behind when the next one starts", SLOW, async () => {
    const killed = await startStdioProxy(config, tmp);
    const [left] = await proxyFolders();
    expect(left).toBeDefined();
    killed.child.kill("SIGKILL");
    await killed.exited;
    expect(await proxyFolders()).toEqual([left]);

    const next = await startStdioProxy(config, tmp);
    try {
      // The next proxy removes it in the background while it serves.
      await vi.waitFor(async () => expect(await proxyFolders()).toHaveLength(1), { timeout: 10_000 });
      expect(await proxyFolders()).not.toContain(left);
      next.child.stdin.end();
      expect(await next.exited).toBe(0);
      expect(await proxyFolders()).toEqual([]);
    } finally {
      if (next.child.exitCode === null) next.child.kill("SIGKILL");
    }
  });
});
