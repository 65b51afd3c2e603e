/**
 * The files extension's descriptors expire: an upload descriptor used after `expiresAt` is refused
 * (410 TOKEN_EXPIRED) and stores nothing; a download descriptor likewise. The clock is injected.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, expect, it } from "vitest";
import { createFileRoutes } from "../../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { memoryState } from "../../src/storage/memory-state.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import { UploadHandleResolver } from "../../src/uploads/upload-handle-resolver.js";
import { DRAFT_CLIENT_CAPABILITY, draftFiles } from "../support/draft-files-client.js";
import { connectInMemory } from "../support/in-memory-client.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

it("refuses an expired upload descriptor and an expired download descriptor, storing nothing", async () => {
  let now = Date.parse("2026-11-24T12:00:00Z");
  const store = memoryStore();
  const state = memoryState();
  const minter = new SignedUrlMinter({
    secret: "a-test-secret-that-is-long-enough-0123456789",
    baseUrl: "http://127.0.0.1:9",
    state,
    now: () => now,
  });
  const routes = createFileRoutes({ store, minter, state });
  const uploads = new UploadHandleResolver({ store, state, minter, scope: () => "s1", ttl: "5m" });
  const server = new McpServer({ name: "t", version: "1.0.0" });
  uploads.attach(server, { files: { downloadTtl: "1m" } });
  const { client, close } = await connectInMemory(
    server,
    { name: "c", version: "1.0.0" },
    { capabilities: DRAFT_CLIENT_CAPABILITY as never },
  );
  cleanups.push(close);
  const files = draftFiles(client as never);

  const late = await files.authorizeUpload({ name: "a.txt", size: 5 });
  expect(Date.parse(late.upload.expiresAt as string)).toBe(now + 5 * 60_000);
  now += 5 * 60_000 + 1000;
  const expired = (await routes(new Request(late.upload.url, { method: "PUT", body: "hello" }))) as Response;
  expect(expired.status).toBe(410);
  expect(((await expired.json()) as { error: { code: string } }).error.code).toBe("TOKEN_EXPIRED");
  expect((await store.list("s1")).files).toEqual([]);

  const fresh = await files.authorizeUpload({ name: "b.txt", size: 5 });
  expect((await routes(new Request(fresh.upload.url, { method: "PUT", body: "hello" })))?.status).toBe(201);
  const { download } = await files.authorizeDownload(fresh.file.uri);
  expect((await routes(new Request(download.url)))?.status).toBe(200);
  now += 61_000;
  expect((await routes(new Request(download.url)))?.status).toBe(410);
  // authorizeDownload is the refresh path: a new descriptor works again.
  const { download: again } = await files.authorizeDownload(fresh.file.uri);
  expect(await (await routes(new Request(again.url)))?.text()).toBe("hello");
});
