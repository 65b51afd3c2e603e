import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { Client, InMemoryTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Server as V1Server } from "@modelcontextprotocol/sdk/server/index.js";
import { McpServer as V1McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { createMcpHandler, McpServer, Server } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { FileBridgeError } from "../../../src/errors/file-bridge-error.js";
import type { HostRequestContext } from "../../../src/mcp/host.js";
import { scopeSourceOf } from "../../../src/mcp/scope-source.js";
import { toHost } from "../../../src/mcp/to-host.js";
import { v2Host } from "../../../src/mcp/v2/host.js";
import { defaultScope } from "../../../src/scope/scope.js";
import { ensureBuilt, repoRoot } from "../../support/helpers.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function connect(server: McpServer | Server): Promise<Client> {
  const client = new Client({ name: "host-test", version: "1.0.0" });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(b), client.connect(a)]);
  cleanups.push(async () => {
    await client.close();
    await server.close();
  });
  return client;
}

/** A 2026-07-28 client served in process by `createMcpHandler` (the SDK's own test wiring). */
async function modern(factory: () => McpServer, authInfo?: { sub: string }): Promise<Client> {
  const handler = createMcpHandler(factory);
  const client = new Client(
    { name: "modern", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL("http://in-process.test/mcp"), {
      fetch: (url, init) =>
        handler.fetch(
          new Request(url, init),
          authInfo
            ? { authInfo: { token: "t", clientId: "c", scopes: [], extra: { sub: authInfo.sub } } }
            : {},
        ),
    }),
  );
  cleanups.push(async () => {
    await client.close();
    await handler.close();
  });
  return client;
}

describe("toHost on SDK v2 servers", () => {
  it("picks the v2 adapter for a v2 McpServer and its Server, the v1 adapter for v1", () => {
    const mcp = new McpServer({ name: "a", version: "1" });
    const host = toHost(mcp);
    expect(host.kind).toBe("sdk-v2");
    expect(toHost(mcp.server)).toBe(host);
    expect(host.supportsTools).toBe(true);
    expect(toHost(new Server({ name: "b", version: "1" }, { capabilities: {} })).supportsTools).toBe(false);
    expect(toHost(new V1McpServer({ name: "c", version: "1" })).kind).toBe("sdk-v1");
    expect(toHost(new V1Server({ name: "d", version: "1" }, { capabilities: {} })).kind).toBe("sdk-v1");
    expect(() => v2Host(new V1McpServer({ name: "e", version: "1" }) as never)).toThrow(FileBridgeError);
  });

  it("gives handlers the port's context, and thrown errors keep their JSON-RPC shape", async () => {
    const server = new McpServer({ name: "ctx", version: "1" });
    const host = toHost(server);
    const seen: HostRequestContext[] = [];
    host.declareCapabilities({ resources: {} });
    host.handle("resources/read", async ({ uri }, ctx) => {
      seen.push(ctx);
      throw new FileBridgeError("NOT_FOUND", `no ${uri}`);
    });
    host.handle("resources/list", async () => ({ resources: [] }));
    const client = await connect(server);
    const error = await client
      .readResource({ uri: "x://a" })
      .catch((e: unknown) => e as { code: number; data: unknown });
    expect(error).toMatchObject({ code: -32602, data: { code: "NOT_FOUND" } });
    expect(seen[0]).toMatchObject({ transport: "local", requestId: expect.anything() });
    expect(seen[0]?.signal).toBeInstanceOf(AbortSignal);
    // No cache fields on a 2025-era result.
    expect(await client.listResources()).not.toHaveProperty("cacheScope");
  });

  it("registers tools from a raw shape or a zod object, and without a schema", async () => {
    const server = new McpServer({ name: "tools", version: "1" });
    const host = toHost(server);
    host.registerTool({
      name: "shape",
      inputSchema: { text: z.string() },
      handler: async (args) => ({ content: [{ type: "text", text: `shape ${args.text}` }] }),
    });
    host.registerTool({
      name: "object",
      inputSchema: z.object({ n: z.number() }),
      handler: async (args) => ({ content: [{ type: "text", text: `object ${args.n}` }] }),
    });
    host.registerTool({
      name: "none",
      handler: async (_args, ctx) => ({ content: [{ type: "text", text: `none ${ctx.transport}` }] }),
    });
    const client = await connect(server);
    const text = async (name: string, args: Record<string, unknown>) =>
      ((await client.callTool({ name, arguments: args })).content as Array<{ text: string }>)[0]?.text;
    expect(await text("shape", { text: "a" })).toBe("shape a");
    expect(await text("object", { n: 2 })).toBe("object 2");
    expect(await text("none", {})).toBe("none local");
    const bad = await client.callTool({ name: "object", arguments: { n: "x" } });
    expect(bad.isError).toBe(true);
  });

  it("reports the close of a server that never connected, once", async () => {
    const server = new McpServer({ name: "probe", version: "1" });
    let closed = 0;
    toHost(server).onClose(() => closed++);
    await server.close();
    expect(closed).toBe(1);
    const connected = new McpServer({ name: "conn", version: "1" });
    let connectedClosed = 0;
    toHost(connected).onClose(() => connectedClosed++);
    const client = await connect(connected);
    await client.close();
    await connected.close();
    expect(connectedClosed).toBe(1);
  });

  it("over 2026-07-28: the caller's auth in the context, cache hints on lists, options honoured", async () => {
    const seen: HostRequestContext[] = [];
    const build = () => {
      const server = new McpServer({ name: "modern", version: "1" });
      const host = v2Host(server, { cacheHints: { "resources/list": { ttlMs: 0 } } });
      host.declareCapabilities({ resources: {} });
      host.handle("resources/list", async (_params, ctx) => {
        seen.push(ctx);
        return { resources: [] };
      });
      host.handle("resources/templates/list", async () => ({ resourceTemplates: [] }));
      return server;
    };
    const client = await modern(build, { sub: "user-9" });
    const listed = (await client.listResources()) as Record<string, unknown>;
    expect(listed).toMatchObject({ cacheScope: "private", ttlMs: 0 });
    const templates = (await client.listResourceTemplates()) as Record<string, unknown>;
    expect(templates).toMatchObject({ cacheScope: "public", ttlMs: 3_600_000 });
    expect(seen[0]).toMatchObject({ transport: "http", authInfo: { subject: "user-9", clientId: "c" } });
    expect(seen[0]?.sessionId).toBeUndefined();
    expect(seen[0]?.headers?.["mcp-method"]).toBe("resources/list");
    expect(defaultScope(seen[0]?.extra ?? {})).toBe("user-9");
  });
});

describe("attaching to a v2 server that already serves resources", () => {
  it("refuses before mounting anything, and the server keeps answering its own resources", async () => {
    const { ResourceRegistry, memoryStore } = await import("../../../src/index.js");
    const server = new McpServer({ name: "own", version: "1" });
    server.registerResource("config", "config://app", { mimeType: "text/plain" }, async (uri) => ({
      contents: [{ uri: uri.href, text: "x" }],
    }));
    const registry = new ResourceRegistry({ store: memoryStore() });
    expect(() => registry.attach(server)).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
    const client = await connect(server);
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(["config://app"]);
    await registry.close();
  });
});

describe("scopes from SDK v2 contexts", () => {
  it("defaultScope reads a raw v2 context: the user over HTTP, FORBIDDEN without one, default locally", async () => {
    const contexts: unknown[] = [];
    const build = () => {
      const server = new McpServer({ name: "scopes", version: "1" });
      server.registerTool("who", { inputSchema: z.object({}) }, async (_args, ctx) => {
        contexts.push(ctx);
        let scope: string;
        try {
          scope = defaultScope(ctx as never);
        } catch (error) {
          scope = (error as FileBridgeError).code;
        }
        return { content: [{ type: "text", text: scope }] };
      });
      return server;
    };
    const who = async (client: Client) =>
      ((await client.callTool({ name: "who", arguments: {} })).content as Array<{ text: string }>)[0]?.text;
    expect(await who(await modern(build, { sub: "alice" }))).toBe("alice");
    expect(await who(await modern(build))).toBe("FORBIDDEN");
    expect(await who(await connect(build()))).toBe("default");
    const normalized = scopeSourceOf(contexts[0]);
    expect(normalized).toMatchObject({ transport: "http", authInfo: { extra: { sub: "alice" } } });
    expect(scopeSourceOf(normalized)).toBe(normalized);
  });
});

describe("the published declarations", () => {
  it("import no SDK: user code type-checks with either SDK installed, or none", async () => {
    ensureBuilt();
    for (const name of ["index.d.ts", "index.d.cts", "node.d.ts"]) {
      const text = await readFile(join(repoRoot, "dist", name), "utf8");
      const imports =
        text.match(/^(?:import|export)[^;]*from\s*["']@modelcontextprotocol\/[^"']+["']/gm) ?? [];
      expect(imports, name).toEqual([]);
    }
  }, 180_000);
});

describe("nothing of ours depends on what 2026-07-28 deprecates", () => {
  it("src/ calls no roots, sampling or logging API", async () => {
    // Generated bundles (the MCP Apps client SDK inside src/ui/generated) carry the SDK's schemas, not calls of ours.
    const files = (await readdir(join(repoRoot, "src"), { recursive: true })).filter(
      (f) => f.endsWith(".ts") && !f.includes("generated/"),
    );
    const offenders: string[] = [];
    const deprecated =
      /\b(listRoots|roots\/list|createMessage|sampling\/createMessage|requestSampling|sendLoggingMessage|logging\/setLevel|mcpReq\.log)\b/;
    for (const file of files) {
      // The proxy forwards what an upstream itself offers; such lines say "pass-through" (the line
      // before the call) and are not a dependency of ours.
      const lines = (await readFile(join(repoRoot, "src", file), "utf8")).split("\n");
      if (lines.some((line, i) => deprecated.test(line) && !/pass-through/.test(lines[i - 1] ?? ""))) {
        offenders.push(file);
      }
    }
    expect(files.length).toBeGreaterThan(30);
    expect(offenders).toEqual([]);
  });
});
