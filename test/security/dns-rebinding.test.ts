import { execFileSync, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChatUploadsServer, start } from "../../examples/chat-uploads/server.js";
import { repoRoot } from "../support/helpers.js";

// Attack: a web page on evil.example whose DNS name resolves to 127.0.0.1 makes the person's browser
// talk to a local MCP server. The browser sends `Host: evil.example` (and its own Origin); the
// server must refuse both before any route (MCP or files) runs.

function send(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: "POST", headers: { "content-type": "application/json", ...headers } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }));
  });
}

describe("attack: DNS rebinding against a loopback example server", () => {
  let dir: string;
  let app: ChatUploadsServer;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "rebinding-"));
    app = await start({ apiKeys: ["k-0123456789abcdef"], dataDir: join(dir, "data") });
  });
  afterAll(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  });

  it("refuses a foreign Host with 403 on MCP and file routes alike, and a foreign Origin on both", async () => {
    const port = new URL(app.url).port;
    for (const path of ["/mcp", "/api/uploads/chat-1/a.txt", "/files/download/x"]) {
      expect(await send(`${app.url}${path}`, { host: `evil.example:${port}` })).toBe(403);
      expect(await send(`${app.url}${path}`, { host: "127.0.0.1.evil.example" })).toBe(403);
    }
    // Origin: the server refuses it on /mcp; the file routes refuse foreign origins themselves
    // (no allowedOrigins configured), before any token or body is read.
    for (const path of ["/mcp", "/api/uploads/chat-1/a.txt"]) {
      expect(await send(`${app.url}${path}`, { origin: "http://evil.example" })).toBe(403);
    }
  });

  it("still answers requests that name the loopback host", async () => {
    const port = new URL(app.url).port;
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) {
      expect(await send(`${app.url}/mcp`, { host, origin: `http://${host}` })).not.toBe(403);
    }
  });

  // The official MCP conformance suite (needs Node 22: the node@22 npm package provides it).
  it("passes the conformance suite's dns-rebinding-protection scenario", async () => {
    const bin = execFileSync("bash", [join(repoRoot, "scripts/conformance/ensure.sh")], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    }).trim();
    const run = (scenario: string) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(
          join(bin, "node"),
          [join(bin, "conformance"), "server", "--url", `${app.url}/mcp`, "--scenario", scenario],
          {
            env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
          },
        );
        let out = "";
        child.stdout.on("data", (d) => (out += d));
        child.stderr.on("data", (d) => (out += d));
        child.on("close", (code) => resolve({ code, out }));
      });
    const result = await run("dns-rebinding-protection");
    expect(result.out).toMatch(/Passed: 2\/2, 0 failed/);
    expect(result.code).toBe(0);
  }, 180_000);
});
