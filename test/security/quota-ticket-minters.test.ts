import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it } from "vitest";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { memoryState } from "../../src/storage/memory-state.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import { ticketRateLimit } from "../../src/uploads/ticket-rate-limit.js";
import type { UploadTicketRateLimitInfo } from "../../src/uploads/upload-handle-resolver.js";
import { UploadHandleResolver } from "../../src/uploads/upload-handle-resolver.js";
import { DRAFT_CLIENT_CAPABILITY, draftFiles } from "../support/draft-files-client.js";
import { codeOf } from "../support/helpers.js";
import { connectInMemory } from "../support/in-memory-client.js";

// Issue 40, item 6: once get_upload_url was refused (RATE_LIMITED), files/authorizeUpload and
// files/prepareUpload still minted tickets (20 of them): the files extension never asked the
// resolver's rateLimit. Every minter asks it now, with its own name as `tool`.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function setUp(rateLimit: (info: UploadTicketRateLimitInfo) => boolean) {
  const state = memoryState();
  const signer = new SignedUrlMinter({ secret: "r".repeat(40), baseUrl: "http://127.0.0.1:9", state });
  let minted = 0;
  const mint = signer.mint.bind(signer);
  signer.mint = (options) => {
    minted++;
    return mint(options);
  };
  const uploads = new UploadHandleResolver({
    store: memoryStore(),
    minter: signer,
    state,
    scope: () => "alice",
    rateLimit,
  });
  const server = new McpServer({ name: "t", version: "1.0.0" });
  uploads.attach(server, { files: { variant: true } });
  const { client } = await connectInMemory(
    server,
    { name: "c", version: "1.0.0" },
    { capabilities: DRAFT_CLIENT_CAPABILITY as never },
  );
  cleanups.push(() => client.close());
  return { uploads, client, files: draftFiles(client as never), minted: () => minted };
}

async function errorCode(call: Promise<unknown>): Promise<string | undefined> {
  try {
    await call;
    return undefined;
  } catch (error) {
    return (error as { data?: { code?: string } }).data?.code;
  }
}

describe("attack: minting tickets through the files extension after the tool was refused", () => {
  it("files/authorizeUpload, files/prepareUpload and file requests ask the same rateLimit", async () => {
    const seen: string[] = [];
    const { uploads, client, files, minted } = await setUp((info) => {
      seen.push(info.tool);
      return false;
    });
    const tool = await client.callTool({ name: "get_upload_url", arguments: {} });
    expect(tool.isError).toBe(true);
    for (let i = 0; i < 20; i++) {
      expect(await errorCode(files.authorizeUpload({ name: `a${i}.txt` }))).toBe("RATE_LIMITED");
    }
    expect(await errorCode(files.prepareUpload({ name: "p.txt", mimeType: "text/plain", size: 1 }))).toBe(
      "RATE_LIMITED",
    );
    expect(await codeOf(uploads.fileRequests.create("alice", { message: "the invoice" }))).toBe(
      "RATE_LIMITED",
    );
    expect(minted()).toBe(0);
    expect(new Set(seen)).toEqual(
      new Set(["get_upload_url", "files/authorizeUpload", "files/prepareUpload", "requestFiles"]),
    );
  });

  it("ticketRateLimit counts one budget per scope and window across all of them", async () => {
    let now = 1_000_000;
    const state = memoryState({ now: () => now });
    const limit = ticketRateLimit({ state, max: 3, window: "1m", now: () => now });
    const { files, client } = await setUp((info) => limit(info) as unknown as boolean);
    const results = [
      await errorCode(files.authorizeUpload({ name: "1" })),
      await errorCode(files.prepareUpload({ name: "2", mimeType: "text/plain", size: 1 })),
      (await client.callTool({ name: "get_upload_url", arguments: {} })).isError ? "RATE_LIMITED" : undefined,
      await errorCode(files.authorizeUpload({ name: "4" })),
    ];
    expect(results).toEqual([undefined, undefined, undefined, "RATE_LIMITED"]);
    now += 60_000; // the next window
    expect(await errorCode(files.authorizeUpload({ name: "5" }))).toBeUndefined();
    expect(() => ticketRateLimit({ state, max: 0 })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION" }),
    );
  });
});
