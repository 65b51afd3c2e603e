/**
 * Two stateless SDK v2 server processes behind a plain round robin (no stickiness), sharing one
 * fsStore folder (and a shared state folder, what Redis is in production): an upload on one, the
 * tool call on the other, the download on either.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { close, listen } from "../http/server-helpers.js";
import { type AnyClient, connectHttp, rpcError, type ToolResult, upload } from "../mcp/v2/harness.js";

const root = resolve(import.meta.dirname, "../..");
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

let dir: string;
let proxy: Server;
let origin: string;
const replicas: Array<{ child: ChildProcess; port: number }> = [];
/** What the round robin sent where: replica index, HTTP method, path, `Mcp-Method` header. */
const served: Array<{ replica: number; method: string; path: string; mcpMethod?: string }> = [];

async function startReplica(publicUrl: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ["--import", "tsx", "test/mcp/v2/replica.ts"], {
    cwd: root,
    env: { ...process.env, FILES_DIR: dir, PUBLIC_URL: publicUrl },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const line = await new Promise<string>((done, fail) => {
    child.once("exit", (code) => fail(new Error(`replica exited with ${code}`)));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once("line", done);
  });
  return { child, port: (JSON.parse(line) as { port: number }).port };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-replicas-"));
  let next = 0;
  // The plainest round robin: each request to the next replica, bytes piped both ways.
  proxy = createServer((req, res) => {
    const index = next++ % replicas.length;
    const target = replicas[index] as { port: number };
    const mcpMethod = req.headers["mcp-method"];
    served.push({
      replica: index,
      method: req.method ?? "",
      path: req.url ?? "",
      ...(typeof mcpMethod === "string" ? { mcpMethod } : {}),
    });
    const upstream = request(
      { host: "127.0.0.1", port: target.port, method: req.method, path: req.url, headers: req.headers },
      (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  origin = await listen(proxy);
  replicas.push(...(await Promise.all([startReplica(origin), startReplica(origin)])));
}, 60_000);

afterAll(async () => {
  await close(proxy);
  await Promise.all(
    replicas.map(
      ({ child }) =>
        new Promise<void>((done) => {
          child.once("exit", () => done());
          child.kill("SIGTERM");
        }),
    ),
  );
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

describe("two stateless v2 replicas behind a round robin, one fsStore folder", () => {
  it("uploads on one, calls the tool on the other, downloads from either", async () => {
    const clients: AnyClient[] = [];
    try {
      const alice = await connectHttp("v2-modern", new URL("/mcp", origin), "token-alice");
      const bob = await connectHttp("v2-modern", new URL("/mcp", origin), "token-bob");
      clients.push(alice, bob);
      const bytes = randomBytes(500_000);
      const uploaded = await upload(alice, "scan.bin", bytes);
      const uploadedOn = served.findLast((each) => each.path.includes("/upload/"))?.replica;

      // Make the next request land on the other replica.
      if (served.length % 2 !== (uploadedOn === 0 ? 1 : 0)) await alice.listTools();
      const result = (await alice.callTool({
        name: "concat",
        arguments: { files: [uploaded.handle, uploaded.uri] },
      })) as ToolResult;
      const calledOn = served.findLast((each) => each.mcpMethod === "tools/call")?.replica;
      expect(result.isError).toBeFalsy();
      expect(uploadedOn).toBeTypeOf("number");
      expect(calledOn).toBe(1 - (uploadedOn as number));

      const url = result._meta?.download_url as string;
      const downloads = [await fetch(url), await fetch(url)];
      const downloadedOn = served
        .filter((each) => each.path.includes("/download/"))
        .map((each) => each.replica);
      expect(downloadedOn.sort()).toEqual([0, 1]);
      for (const download of downloads) {
        expect(download.status).toBe(200);
        expect(sha256(new Uint8Array(await download.arrayBuffer()))).toBe(
          sha256(Buffer.concat([bytes, bytes])),
        );
      }

      // Whichever replica answers, the file is Alice's alone.
      for (let i = 0; i < 2; i++) {
        const read = await alice.readResource({ uri: uploaded.uri });
        expect(read.contents[0]?.uri).toBe(uploaded.uri);
        expect((await rpcError(bob.readResource({ uri: uploaded.uri }))).code).toBe(-32602);
      }
    } finally {
      for (const client of clients) await client.close().catch(() => undefined);
    }
  }, 60_000);
});
