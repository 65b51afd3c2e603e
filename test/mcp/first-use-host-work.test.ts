/**
 * The host adapters load their request-time code (`src/mcp/host-work.ts`: URL elicitation, fixed
 * resources' listing, unclaimed completions, `tools/list` rewrites) on first use (issue 39):
 * attaching loads nothing and its errors stay synchronous, a client that cannot open URLs is
 * refused before the load, two first requests share one load, and a load that fails is that
 * request's error while the next request loads again.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import type { HostResource } from "../../src/mcp/host.js";
import { countLoads } from "../support/first-use.js";
import { connectInMemory } from "../support/in-memory-client.js";

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const WIDGET: HostResource = {
  uri: "ui://files/widget.html",
  name: "widget",
  mimeType: "text/html",
  read: async () => ({ contents: [{ uri: "ui://files/widget.html", text: "<p>hi</p>" }] }),
};

/** `toHost` of a fresh module graph whose host-work load is counted (and fails the first time with `failFirst`). */
async function freshHost(failFirst = false) {
  const { loads } = countLoads("src/mcp/host-work.js", { failFirst });
  const { toHost } = await import("../../src/mcp/to-host.js");
  return { toHost, attempts: () => loads.attempts };
}

async function connect(server: McpServer, capabilities: Record<string, unknown> = {}): Promise<Client> {
  const { client, close } = await connectInMemory(
    server,
    { name: "first-use", version: "1.0.0" },
    { capabilities },
  );
  cleanups.push(close);
  return client;
}

describe("the host adapters' request-time code, loaded on first use", () => {
  it("attaches without loading it, throws attach errors synchronously, refuses a URL elicitation first", async () => {
    const { toHost, attempts } = await freshHost();
    const server = new McpServer({ name: "s", version: "1.0.0" });
    const host = toHost(server);
    host.registerResource?.(WIDGET);
    // Synchronous, as before the split: a malformed resource, a taken URI, a context that is none.
    expect(() => host.registerResource?.({ ...WIDGET, name: "" })).toThrow(/needs a uri, a name and read/);
    expect(() => host.registerResource?.(WIDGET)).toThrow(/already registered/);
    expect(() => host.requestContext?.({})).toThrow(/needs the SDK request context/);
    host.addCompletion({
      handles: (ref) => ref.type === "ref/resource" && ref.uri === "x://{a}",
      complete: async () => ({ completion: { values: ["v"], hasMore: false } }),
    });
    host.registerTool({
      name: "ask",
      handler: async (_args, ctx) => {
        const error = await ctx
          .elicitUrl?.({ mode: "url", message: "m", url: "https://x.example/u", elicitationId: "e" })
          .then(
            () => undefined,
            (caught: unknown) => caught,
          );
        return { content: [{ type: "text", text: String((error as { code?: unknown })?.code) }] };
      },
    });
    const client = await connect(server, { elicitation: { form: {} } });
    const result = await client.callTool({ name: "ask", arguments: {} });
    expect(result.content).toEqual([{ type: "text", text: "INVALID_INPUT" }]);
    // A claimed completion is answered by its provider, without the module.
    const completion = await client.complete({
      ref: { type: "ref/resource", uri: "x://{a}" },
      argument: { name: "a", value: "" },
    });
    expect(completion.completion.values).toEqual(["v"]);
    expect(attempts()).toBe(0);
  });

  it("two first requests share one load", async () => {
    const { toHost, attempts } = await freshHost();
    const server = new McpServer({ name: "s", version: "1.0.0" });
    toHost(server).registerResource?.(WIDGET);
    const client = await connect(server);
    const [a, b] = await Promise.all([client.listResources(), client.listResources()]);
    expect(a.resources.map((r) => r.uri)).toEqual([WIDGET.uri]);
    expect(b.resources).toEqual(a.resources);
    expect(attempts()).toBe(1);
  });

  it("a failed load fails that request; the next one loads again", async () => {
    const { toHost, attempts } = await freshHost(true);
    const server = new McpServer({ name: "s", version: "1.0.0" });
    toHost(server).registerResource?.(WIDGET);
    const client = await connect(server);
    const error = await client.listResources().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32603);
    expect(attempts()).toBe(1);
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual([WIDGET.uri]);
    expect(attempts()).toBe(2);
    // Reads never needed it.
    expect((await client.readResource({ uri: WIDGET.uri })).contents).toEqual([
      { uri: WIDGET.uri, text: "<p>hi</p>" },
    ]);
  });
});
