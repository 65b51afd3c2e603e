/**
 * Shared by the pass-through fast-path tests (v1 and v2 endpoints): a core over a fake upstream
 * whose tools give every kind of outcome, and records of what the upstream saw.
 */
import { ProxyCore } from "../../../../src/proxy/proxy-core.js";
import {
  type JsonObject,
  RpcError,
  type UpstreamPort,
  type UpstreamRequestOptions,
  UpstreamUnavailableError,
} from "../../../../src/proxy/types.js";

export const text = (value: string) => ({ type: "text", text: value });

/** A core over the fake upstream, and what the upstream saw. */
export interface FakeUpstream {
  core: ProxyCore;
  /** Every `tools/call` the upstream got: its params, and whether progress was asked for. */
  calls: Array<{ params: JsonObject | undefined; progress: boolean }>;
  /** Names of calls whose signal aborted. */
  aborted: string[];
  /** The scopes the file tool's adapter saw. */
  scopes: string[];
}

/**
 * A core whose one upstream has: `plain`, `failed`, `unavailable` (plain results, the last one the
 * core's own), `image`, `meta`, `malformed`, `rpc_error` (outcomes left to the SDK), `progress`
 * (one update), `hang` (until cancelled) and `file_tool` (an adapter that asks for the scope).
 */
export function fakeUpstream(): FakeUpstream {
  const calls: FakeUpstream["calls"] = [];
  const aborted: string[] = [];
  const scopes: string[] = [];
  const tools: Record<string, (options: UpstreamRequestOptions) => Promise<JsonObject>> = {
    plain: async () => ({ content: [text("hi")], structuredContent: { a: 1 } }),
    failed: async () => ({ isError: true, content: [text("it failed")] }),
    image: async () => ({ content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] }),
    meta: async () => ({ content: [text("with meta")], _meta: { "example.com/trace": "t1" } }),
    malformed: async () => ({ content: "not an array" }),
    rpc_error: async () => {
      throw new RpcError(-32002, "no such thing", { uri: "x://y" });
    },
    unavailable: async () => {
      throw new UpstreamUnavailableError("up", 'upstream "up" failed: gone');
    },
    progress: async ({ onprogress }) => {
      onprogress?.({ progress: 1, total: 1 });
      return { content: [text("progressed")] };
    },
    file_tool: async () => ({ content: [text("file tool ran")] }),
    hang: async ({ signal }) =>
      await new Promise((_resolve, reject) => {
        signal?.addEventListener("abort", () => {
          aborted.push("hang");
          reject(new RpcError(-32001, "Request was cancelled"));
        });
      }),
  };
  const port: UpstreamPort = {
    name: "up",
    connected: true,
    capabilities: { tools: {} },
    async connect() {},
    async request(method, params, options = {}) {
      if (method === "tools/list")
        return { tools: Object.keys(tools).map((name) => ({ name, inputSchema: { type: "object" } })) };
      if (method !== "tools/call") throw new RpcError(-32601, "Method not found");
      calls.push({ params, progress: options.onprogress !== undefined });
      const tool = tools[String(params?.name)];
      if (!tool) throw new RpcError(-32602, `Tool ${String(params?.name)} not found`);
      return await tool(options);
    },
    async notify() {},
    async close() {},
  };
  const core = new ProxyCore({
    upstreams: [
      {
        port,
        adaptersFor: (tool) =>
          tool.name === "file_tool"
            ? [
                {
                  before: async (args, ctx) => {
                    scopes.push(ctx.scope);
                    return { args };
                  },
                },
              ]
            : [],
      },
    ],
  });
  return { core, calls, aborted, scopes };
}

/** The JSON messages of an SSE body (its `data:` lines). */
export function sseMessages(body: string): unknown[] {
  return body
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice(6)));
}
