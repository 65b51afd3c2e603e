import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SCOPE } from "../../src/scope/scope.js";
import { connectRecording, type ScopeServer, startScopeServer } from "./scope-support.js";

// Attack: two clients of a stateless Streamable HTTP server without auth. The old default put both
// in one shared "default" scope, so client B listed and read client A's upload. Now neither gets a
// scope at all: every scoped call is refused with FORBIDDEN, and nothing is stored.

function textOf(result: object): string {
  return (((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>)
    .map((block) => block.text ?? "")
    .join("\n");
}

async function rpcFailure(
  promise: Promise<unknown>,
): Promise<{ code: number; data: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof McpError) return { code: error.code, data: error.data as Record<string, unknown> };
    throw error;
  }
  throw new Error("expected the request to fail");
}

describe("attack: two clients on a stateless server without auth", () => {
  let app: ScopeServer;

  beforeAll(async () => {
    app = await startScopeServer({ stateless: true });
    // A file the server author put in the stdio-only "default" scope: no HTTP client may see it.
    await app.registry.add(Buffer.from("default scope file"), { scope: DEFAULT_SCOPE, name: "d.txt" });
  });
  afterAll(async () => {
    await app.close();
  });

  it("refuses both clients with FORBIDDEN: no upload URL, no list, no read, no shared default", async () => {
    const a = await connectRecording(app.mcpUrl);
    const b = await connectRecording(app.mcpUrl);
    expect(a.transport.sessionId).toBeUndefined();

    for (const { client } of [a, b]) {
      const ticket = await client.callTool({ name: "get_upload_url", arguments: {} });
      expect(ticket.isError).toBe(true);
      expect(textOf(ticket)).toContain("FORBIDDEN");
      expect(ticket.structuredContent).toBeUndefined();

      const listed = await rpcFailure(client.listResources());
      expect(listed.code).toBe(-32602);
      expect(listed.data.code).toBe("FORBIDDEN");

      const uri = app.registry.uriFor((await app.store.list(DEFAULT_SCOPE)).files[0] as never);
      const read = await rpcFailure(client.readResource({ uri }));
      expect(read.data.code).toBe("FORBIDDEN");

      const copy = await client.callTool({ name: "copy", arguments: { file: uri } });
      expect(copy.isError).toBe(true);
      expect(textOf(copy)).toContain("FORBIDDEN");
    }
    // The refusal tells the caller what to do; the advice to the author goes to the log only.
    const ticket = await a.client.callTool({ name: "get_upload_url", arguments: {} });
    expect(textOf(ticket)).toMatch(/FORBIDDEN: .*this request has neither: sign in/);
    expect(textOf(ticket)).not.toMatch(/sessionIdGenerator|authInfo/);

    // Nothing was stored for anyone: the only file is the one the author put in "default".
    expect((await app.store.list(DEFAULT_SCOPE)).files.map((f) => f.name)).toEqual(["d.txt"]);
    expect(await a.received()).not.toContain("default scope file");
    expect(await b.received()).not.toContain("default scope file");
    await a.client.close();
    await b.client.close();
  });
});
