/**
 * Issue 40, item 6 and the soak's finding, on real redis-server: every ticket minter asks the same
 * rate limit (the upload-URL tool, `files/authorizeUpload`, `files/prepareUpload`), and the count
 * lives in the state store, so two replicas sharing Redis share one budget. Before, the files
 * extension minted past a refused `get_upload_url`, and the examples' limit (20 per scope per
 * minute) counted per process: ~60 with three replicas.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, expect, it } from "vitest";
import { describeWithServices, requireServices, uniquePrefix } from "../../../scripts/services/test-env.js";
import { redisState } from "../../../src/redis/redis-state.js";
import { SignedUrlMinter } from "../../../src/signing/signed-url-minter.js";
import { memoryStore } from "../../../src/storage/memory-store.js";
import type { StateStore } from "../../../src/storage/types.js";
import { UploadHandleResolver } from "../../../src/uploads/upload-handle-resolver.js";
import { DRAFT_CLIENT_CAPABILITY, draftFiles } from "../../support/draft-files-client.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/** One replica: its own Redis connection (same prefix), resolver and MCP server; alice's client. */
async function replica(keyPrefix: string) {
  const state: StateStore = redisState({ url: requireServices().redis.url, keyPrefix });
  const minter = new SignedUrlMinter({ secret: "r".repeat(40), baseUrl: "http://127.0.0.1:9", state });
  const uploads = new UploadHandleResolver({
    store: memoryStore(),
    minter,
    state,
    scope: () => "alice",
    rateLimit: { max: 20, window: "1m" },
  });
  const server = new McpServer({ name: "r", version: "1.0.0" });
  uploads.attach(server, { files: { variant: true } });
  const client = new Client(
    { name: "c", version: "1.0.0" },
    { capabilities: DRAFT_CLIENT_CAPABILITY as never },
  );
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(b), client.connect(a)]);
  cleanups.push(async () => {
    await client.close();
    await server.close();
    await state.close?.();
  });
  return { client, files: draftFiles(client as never) };
}

async function outcome(call: Promise<unknown>): Promise<"minted" | string> {
  try {
    const result = (await call) as { isError?: boolean; content?: Array<{ text?: string }> };
    if (result?.isError)
      return /RATE_LIMITED/.test(JSON.stringify(result.content)) ? "RATE_LIMITED" : "error";
    return "minted";
  } catch (error) {
    return String((error as { data?: { code?: string } }).data?.code ?? error);
  }
}

const WINDOW_MS = 60_000;

/**
 * The limit counts in fixed windows on the epoch's minute marks, so a test that crosses one meets a
 * fresh budget (in CI the burst once fell just before a mark, the late calls just after: minted). Start
 * where the whole test fits in one window, and return that window.
 */
async function startOfWholeWindow(needMs = 15_000): Promise<number> {
  const left = WINDOW_MS - (Date.now() % WINDOW_MS);
  if (left < needMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
  return Math.floor(Date.now() / WINDOW_MS);
}

describeWithServices("attack: minting tickets past the limit through another minter or replica", () => {
  it("two replicas sharing Redis mint 20 tickets per scope per window in all, through every minter", async () => {
    const keyPrefix = uniquePrefix("rate");
    const [a, b] = await Promise.all([replica(keyPrefix), replica(keyPrefix)]);
    const window = await startOfWholeWindow();
    const calls: Array<Promise<string>> = [];
    for (let i = 0; i < 15; i++) {
      calls.push(outcome(a.client.callTool({ name: "get_upload_url", arguments: {} })));
      calls.push(outcome(b.files.authorizeUpload({ name: `b${i}.txt` })));
      calls.push(outcome(a.files.prepareUpload({ name: `p${i}.txt`, mimeType: "text/plain", size: 1 })));
    }
    const results = await Promise.all(calls);
    expect(results.filter((result) => result === "minted")).toHaveLength(20);
    expect(results.filter((result) => result === "RATE_LIMITED")).toHaveLength(25);
    // Refused everywhere now, whichever minter or replica is asked.
    expect(await outcome(b.client.callTool({ name: "get_upload_url", arguments: {} }))).toBe("RATE_LIMITED");
    expect(await outcome(a.files.authorizeUpload({ name: "late.txt" }))).toBe("RATE_LIMITED");
    expect(Math.floor(Date.now() / WINDOW_MS), "the test ran in one window").toBe(window);
  });
});
