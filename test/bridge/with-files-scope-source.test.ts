import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { callFoldersRefilled } from "../../src/bridge/call-folders.js";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import type { FileSourceResolver } from "../../src/bridge/types.js";
import * as scopeSource from "../../src/mcp/scope-source.js";
import type { ScopeSource } from "../../src/scope/scope.js";

// Counts how often a call normalizes its request context: once per call, by the piece that got
// the raw context (scope/ no longer normalizes a second time inside defaultScope).
vi.mock("../../src/mcp/scope-source.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/mcp/scope-source.js")>();
  return { ...original, scopeSourceOf: vi.fn(original.scopeSourceOf) };
});

let base: string;
let scopesSeen: string[];

const memory: FileSourceResolver = {
  name: "memory",
  matches: (input) => input.startsWith("mem:"),
  resolve: async (input, context) => {
    scopesSeen.push(context.scope);
    return { name: "m.txt", open: async () => Readable.from([Buffer.from(input.slice(4))]) };
  },
};

/** A raw SDK v2 handler context over HTTP (auth in `ctx.http.authInfo`, the request in `ctx.http.req`). */
function v2Context(sub?: string): Record<string, unknown> {
  return {
    mcpReq: { id: 1, method: "tools/call", signal: new AbortController().signal },
    http: {
      req: new Request("http://127.0.0.1/mcp", { method: "POST", headers: { "x-trace": "t1" } }),
      ...(sub === undefined ? {} : { authInfo: { token: "t", clientId: "app", scopes: [], extra: { sub } } }),
    },
  };
}

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "fb-with-files-source-")));
  scopesSeen = [];
  vi.mocked(scopeSource.scopeSourceOf).mockClear();
});

afterEach(async () => {
  await callFoldersRefilled(join(base, "tmp")); // no pool refill racing the removal
  await rm(base, { recursive: true, force: true, maxRetries: 3 });
});

describe("a withFiles call normalizes its request context once", () => {
  it("with the default scope: one normalization, the v2 user as the scope", async () => {
    const bridge = new FileBridge({ tmpDir: join(base, "tmp"), resolvers: [memory] });
    const wrapped = bridge.withFiles(async () => ({ content: [] }), { fields: ["a", "b"] });
    await wrapped({ a: "mem:x", b: "mem:y" }, v2Context("alice"));
    expect(scopesSeen).toEqual(["alice", "alice"]);
    expect(scopeSource.scopeSourceOf).toHaveBeenCalledTimes(1);
    await wrapped({ a: "mem:x", b: "mem:y" }, v2Context("bob"));
    expect(scopeSource.scopeSourceOf).toHaveBeenCalledTimes(2);
  });

  it("calls the author's scope function once per call, with the normalized source", async () => {
    const seen: ScopeSource[] = [];
    const scope = vi.fn((source: ScopeSource) => {
      seen.push(source);
      return `tenant:${source.authInfo?.extra?.sub}`;
    });
    const bridge = new FileBridge({ tmpDir: join(base, "tmp"), resolvers: [memory] });
    const wrapped = bridge.withFiles(async () => ({ content: [] }), { fields: ["files[]"], scope });
    await wrapped({ files: ["mem:1", "mem:2", "mem:3"] }, v2Context("carol"));
    expect(scope).toHaveBeenCalledTimes(1);
    expect(scopeSource.scopeSourceOf).toHaveBeenCalledTimes(1);
    expect(scopesSeen).toEqual(["tenant:carol", "tenant:carol", "tenant:carol"]);
    expect(seen[0]).toMatchObject({
      transport: "http",
      authInfo: { extra: { sub: "carol" } },
      requestInfo: { headers: { "x-trace": "t1" } },
    });
  });

  it("still fails closed on a v2 HTTP context without a user (FORBIDDEN), after one normalization", async () => {
    let calls = 0;
    const bridge = new FileBridge({ tmpDir: join(base, "tmp"), resolvers: [memory] });
    const wrapped = bridge.withFiles(
      async () => {
        calls++;
        return { content: [] };
      },
      { fields: ["a"] },
    );
    const result = await wrapped({ a: "mem:x" }, v2Context());
    expect(JSON.stringify(result)).toMatch(/Error FORBIDDEN/);
    expect(calls).toBe(0);
    expect(scopeSource.scopeSourceOf).toHaveBeenCalledTimes(1);
  });
});
