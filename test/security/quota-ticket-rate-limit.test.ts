import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it } from "vitest";
import { FileBridgeError } from "../../src/errors/file-bridge-error.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import type { UrlSigner } from "../../src/signing/types.js";
import { memoryState } from "../../src/storage/memory-state.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import {
  UploadHandleResolver,
  type UploadHandleResolverOptions,
  type UploadTicketRateLimitInfo,
} from "../../src/uploads/upload-handle-resolver.js";
import { connectInMemory } from "../support/in-memory-client.js";

// Attack: a client calls get_upload_url in a loop. Every call mints a signed ticket (and, with
// single-use tickets, state to track it), and every ticket can stage up to maxFiles × maxBytes. The
// rateLimit hook is asked before a ticket is minted; a refusal is an isError RATE_LIMITED result and
// mints nothing.

const clients: Client[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

function setUp(options: Partial<UploadHandleResolverOptions>, scope = "chat-1") {
  const state = memoryState();
  const signer = new SignedUrlMinter({ secret: "r".repeat(40), baseUrl: "http://127.0.0.1:9", state });
  let minted = 0;
  const minter: Pick<UrlSigner, "mint"> = {
    mint: (mintOptions) => {
      minted++;
      return signer.mint(mintOptions);
    },
  };
  const uploads = new UploadHandleResolver({
    store: memoryStore(),
    minter,
    state,
    scope: () => scope,
    ...options,
  });
  return { uploads, minted: () => minted };
}

async function connect(uploads: UploadHandleResolver): Promise<Client> {
  const server = new McpServer({ name: "t", version: "1.0.0" });
  uploads.attach(server);
  const { client } = await connectInMemory(server, { name: "c", version: "1.0.0" });
  clients.push(client);
  return client;
}

function textOf(result: unknown): string {
  const content = (result as { content: Array<{ type: string; text?: string }> }).content;
  return content.map((block) => block.text ?? "").join("\n");
}

describe("attack: a client mints upload tickets in a loop", () => {
  it("past the hook's budget every call is RATE_LIMITED and mints nothing", async () => {
    const seen: UploadTicketRateLimitInfo[] = [];
    const counts = new Map<string, number>();
    const { uploads, minted } = setUp({
      toolName: "get_upload_url",
      rateLimit: (info) => {
        seen.push(info);
        const count = (counts.get(info.scope) ?? 0) + 1;
        counts.set(info.scope, count);
        return count <= 3;
      },
    });
    const client = await connect(uploads);
    const results = await Promise.all(
      Array.from({ length: 25 }, () => client.callTool({ name: "get_upload_url", arguments: {} })),
    );
    const granted = results.filter((result) => !result.isError);
    const refused = results.filter((result) => result.isError);
    expect(granted).toHaveLength(3);
    expect(refused).toHaveLength(22);
    for (const result of refused) {
      expect(textOf(result)).toMatch(/^Error RATE_LIMITED: /);
      expect(result.structuredContent).toBeUndefined();
    }
    expect(minted()).toBe(3);
    expect(seen).toHaveLength(25);
    expect(seen[0]).toEqual({ action: "ticket", scope: "chat-1", tool: "get_upload_url" });
  });

  it("an async hook works, and one that throws refuses (fail closed) without leaking its message", async () => {
    const allow = setUp({ rateLimit: async () => true });
    const allowed = await (await connect(allow.uploads)).callTool({ name: "get_upload_url", arguments: {} });
    expect(allowed.isError).toBeFalsy();
    expect(allow.minted()).toBe(1);

    const broken = setUp({
      rateLimit: () => {
        throw new Error("redis at 10.0.0.7 is down");
      },
    });
    const failed = await (await connect(broken.uploads)).callTool({ name: "get_upload_url", arguments: {} });
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toMatch(/^Error STORAGE_ERROR: /);
    expect(textOf(failed)).not.toContain("10.0.0.7");
    expect(broken.minted()).toBe(0);

    const custom = setUp({
      rateLimit: () => {
        throw new FileBridgeError("FORBIDDEN", "this chat may not upload");
      },
    });
    const forbidden = await (await connect(custom.uploads)).callTool({
      name: "get_upload_url",
      arguments: {},
    });
    expect(textOf(forbidden)).toMatch(/^Error FORBIDDEN: /);
    expect(custom.minted()).toBe(0);
  });

  it("only a literal true mints: a truthy non-boolean answer refuses", async () => {
    const { uploads, minted } = setUp({ rateLimit: (() => 1) as never });
    const result = await (await connect(uploads)).callTool({ name: "get_upload_url", arguments: {} });
    expect(textOf(result)).toMatch(/^Error RATE_LIMITED: /);
    expect(minted()).toBe(0);
  });

  it("rateLimit must be a function (INVALID_OPTION)", () => {
    expect(() => setUp({ rateLimit: 5 as never })).toThrowError(
      expect.objectContaining({ code: "INVALID_OPTION", data: { option: "rateLimit" } }),
    );
  });
});
