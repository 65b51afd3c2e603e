import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import express from "express";
import { Hono } from "hono";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { toNodeHandler } from "../../src/node/index.js";
import { createFileRoutes, type FileRoutes } from "../../src/routes/create-file-routes.js";
import { scopeRef } from "../../src/scope/scope.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { fsStore } from "../../src/storage/fs-store.js";
import { memoryState } from "../../src/storage/memory-state.js";
import type { FileStore } from "../../src/storage/types.js";
import { sha256 } from "../support/helpers.js";
import { close, filesUnder, listen } from "./server-helpers.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";

let dir: string;
let store: FileStore;
let server: Server | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-mounts-"));
  store = fsStore(join(dir, "store"), { sweepInterval: 0 });
});

afterEach(async () => {
  if (server) await close(server);
  server = undefined;
  await store.close?.();
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

/** Starts a server for `mount`, then builds minter + routes for its origin. */
async function start(
  mount: (routes: FileRoutes) => Server,
): Promise<{ origin: string; minter: SignedUrlMinter }> {
  const state = memoryState();
  let routes: FileRoutes = async () => undefined;
  server = mount((request) => routes(request));
  const origin = await listen(server);
  const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: origin, state });
  routes = createFileRoutes({
    store,
    minter,
    state,
    authorize: (request) => request.headers.get("authorization") === "Bearer k",
  });
  return { origin, minter };
}

async function roundTrip(origin: string, minter: SignedUrlMinter): Promise<void> {
  const content = randomBytes(150_000);
  const form = new FormData();
  form.append("file", new Blob([content]), "x.bin");
  const upload = await minter.mint({ scope: "s1", fileId: "t1", action: "upload" });
  const uploaded = await fetch(upload.url, { method: "POST", body: form });
  expect(uploaded.status).toBe(201);
  const [entry] = ((await uploaded.json()) as { files: Array<{ id: string }> }).files;
  const { url } = await minter.downloadUrl({ scope: "s1", id: entry?.id as string });
  const downloaded = await fetch(url, { headers: { range: "bytes=100-" } });
  expect(downloaded.status).toBe(206);
  expect(Buffer.from(await downloaded.arrayBuffer()).equals(content.subarray(100))).toBe(true);
  const direct = await fetch(`${origin}/files/scopes/s2/files/d.txt`, {
    method: "PUT",
    body: "direct",
    headers: { authorization: "Bearer k" },
  });
  expect(direct.status).toBe(201);
  expect((await store.list("s2")).files.map((f) => f.name)).toEqual(["d.txt"]);
}

describe("mounting the routes", () => {
  it("works as express middleware and passes other requests to next()", async () => {
    const { origin, minter } = await start((routes) => {
      const app = express();
      app.use(toNodeHandler(routes));
      app.get("/hello", (_req, res) => {
        res.send("hi");
      });
      return app.listen(0, "127.0.0.1") as unknown as Server;
    });
    await roundTrip(origin, minter);
    const other = await fetch(`${origin}/hello`);
    expect(await other.text()).toBe("hi");
  });

  it("works under an express sub-path mount (originalUrl keeps the prefix)", async () => {
    const { origin, minter } = await start((routes) => {
      const app = express();
      app.use("/files", toNodeHandler(routes));
      return app.listen(0, "127.0.0.1") as unknown as Server;
    });
    await roundTrip(origin, minter);
  });

  it("works on hono via c.req.raw", async () => {
    const { origin, minter } = await start((routes) => {
      const app = new Hono();
      app.all("/files/*", async (c) => (await routes(c.req.raw)) ?? c.notFound());
      app.get("/hello", (c) => c.text("hi"));
      return serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server;
    });
    await roundTrip(origin, minter);
    expect(await (await fetch(`${origin}/hello`)).text()).toBe("hi");
  });
});

describe("concurrency", () => {
  it("keeps 100 concurrent uploads across 10 scopes apart, losing none", async () => {
    const { minter } = await start((routes) => {
      const app = express();
      app.use(toNodeHandler(routes));
      return app.listen(0, "127.0.0.1") as unknown as Server;
    });
    const jobs = Array.from({ length: 100 }, (_, i) => ({
      scope: `scope-${i % 10}`,
      name: `file-${i}.bin`,
      content: randomBytes(1000 + i * 97),
    }));
    const replies = await Promise.all(
      jobs.map(async (job) => {
        const form = new FormData();
        form.append("file", new Blob([job.content]), job.name);
        const { url } = await minter.mint({ scope: job.scope, fileId: `t-${job.name}`, action: "upload" });
        const response = await fetch(url, { method: "POST", body: form });
        expect(response.status).toBe(201);
        const [entry] = ((await response.json()) as { files: Array<{ id: string; handle: string }> }).files;
        return { ...job, id: entry?.id as string, handle: entry?.handle as string };
      }),
    );
    for (let s = 0; s < 10; s++) {
      const scope = `scope-${s}`;
      const listed = (await store.list(scope)).files;
      const expected = replies.filter((r) => r.scope === scope);
      expect(listed.map((f) => f.name).sort()).toEqual(expected.map((r) => r.name).sort());
      for (const file of listed) {
        const job = expected.find((r) => r.id === file.id);
        expect(file.sha256).toBe(sha256(job?.content as Uint8Array));
      }
    }
    // Another scope's id is simply not there, and a token for another scope opens nothing.
    const [first] = replies;
    expect(await store.head("scope-1", first?.id as string)).toBeNull();
    const foreign = await minter.mint({ scope: "scope-1", fileId: first?.id as string, action: "download" });
    expect((await fetch(foreign.url)).status).toBe(404);
    expect(replies.every((r) => r.handle === `upload://sessions/${scopeRef(r.scope, minter)}/${r.id}`)).toBe(
      true,
    );
    expect(
      (await filesUnder(join(dir, "store"))).some((p) => p.endsWith(".part") || p.endsWith(".tmp")),
    ).toBe(false);
  });
});
