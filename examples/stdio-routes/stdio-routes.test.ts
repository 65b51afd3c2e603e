/**
 * The stdio + routes recipe: a real SDK client over stdio gets an upload URL, uploads over HTTP,
 * calls the tool with the handle; when the client closes (stdin ends) the process exits and its
 * port is free at once for the next start.
 */
import { createServer } from "node:net";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDirs, tempDir } from "../../test/proxy/support.js";
import { repoRoot } from "../../test/support/helpers.js";

const SERVER = join(import.meta.dirname, "server.ts");

let dir: string;
beforeAll(async () => {
  dir = await tempDir("stdio-routes-");
});
afterAll(async () => {
  await removeDirs(dir);
});

/** A free port on 127.0.0.1 (listened on and closed). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

describe("a stdio server with upload and download routes", () => {
  it("serves the upload flow, then exits when stdin closes and frees its port", {
    timeout: 60_000,
  }, async () => {
    const port = await freePort();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ["--import", "tsx", SERVER],
      cwd: repoRoot,
      env: {
        ...(process.env as Record<string, string>),
        PORT: String(port),
        FILES_DIR: join(dir, "files"),
        FILES_SECRET: "a-test-secret-that-is-long-enough-0123456789",
      },
      stderr: "ignore",
    });
    const client = new Client({ name: "recipe", version: "1.0.0" });
    await client.connect(transport);
    const pid = transport.pid as number;
    const exited = new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        try {
          process.kill(pid, 0);
        } catch {
          clearInterval(poll);
          resolve();
        }
      }, 50);
    });

    const got = await client.callTool({ name: "get_upload_url", arguments: { max_files: 1 } });
    const ticket = got.structuredContent as { upload_url: string; handle: string };
    expect(new URL(ticket.upload_url).port).toBe(String(port));
    const early = await client.callTool({ name: "count_lines", arguments: { file: ticket.handle } });
    expect((early.content as Array<{ text: string }>)[0]?.text).toMatch(/^Error UPLOAD_PENDING/);
    const form = new FormData();
    form.append("file", new Blob(["a,b\n1,2\n3,4\n"]), "t.csv");
    // A keep-alive connection stays open, as a browser's would: closing must not wait for it.
    const response = await fetch(ticket.upload_url, { method: "POST", body: form, keepalive: true });
    expect(response.status).toBe(201);
    const counted = await client.callTool({ name: "count_lines", arguments: { file: ticket.handle } });
    expect((counted.content as Array<{ text: string }>)[0]?.text).toBe("3 lines");

    // The client dies: its end of the pipe closes, and nobody sends a signal. The process must
    // leave on its own (StdioClientTransport.close() would SIGTERM it after 2 s; not used here).
    const child = (transport as unknown as { _process: import("node:child_process").ChildProcess })._process;
    const status = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once("exit", (code, signal) => resolve({ code, signal })),
    );
    child.stdin?.end();
    expect(await status).toEqual({ code: 0, signal: null });
    await exited;
    expect(await canListen(port)).toBe(true);
    await client.close();
  });
});
