/**
 * The two upstream connections side by side — `UpstreamConnection` (SDK v1 client) and
 * `UpstreamConnectionV2` (SDK v2 client) — against real upstream servers: the SDK v1 fixture over
 * stdio and over Streamable HTTP (2025 sessions), and the SDK v2 fixture over stdio (both eras) and
 * over HTTP (2026-07-28 only, and both eras). One table of behaviour runs for every pair that can
 * talk; what differs (eras, and the 2026-only server the v1 client cannot reach) is asserted apart.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { UpstreamTarget } from "../../../../src/proxy/sdk/upstream/shared.js";
import { UpstreamConnection } from "../../../../src/proxy/sdk/upstream/upstream-connection.js";
import {
  UpstreamConnectionV2,
  type UpstreamConnectionV2Options,
} from "../../../../src/proxy/sdk/upstream/upstream-connection-v2.js";
import {
  type JsonObject,
  type ProgressUpdate,
  RpcError,
  type UpstreamPort,
  UpstreamUnavailableError,
} from "../../../../src/proxy/types.js";
import { rejectionOf, repoRoot } from "../../../support/helpers.js";
import {
  fixtureCommand,
  removeDirs,
  startHttpFixture,
  tempDir,
  FIXTURE as V1_FIXTURE,
  V2_FIXTURE,
} from "../../support.js";

interface Notified {
  method: string;
  params: JsonObject | undefined;
}

/** A running upstream: where to reach it, and how to bring it back after a crash. */
interface Running {
  target: UpstreamTarget;
  /** HTTP only: starts the server again on the same port. */
  restart?(): Promise<void>;
  stop(): Promise<void>;
}

/** Runs a fixture over HTTP; `restart()` brings it back on the same port. */
async function runHttp(file: string, args: string[], env: Record<string, string> = {}): Promise<Running> {
  let fixture = await startHttpFixture(env, 0, { fixture: file, args });
  const port = Number(new URL(fixture.url).port);
  return {
    target: { url: fixture.url },
    async restart() {
      await fixture.stop();
      fixture = await startHttpFixture(env, port, { fixture: file, args });
    },
    stop: () => fixture.stop(),
  };
}

interface Upstream {
  label: string;
  transport: "stdio" | "http";
  start(): Promise<Running>;
  /** The era an `auto` v2 client lands on (the v1 client always speaks 2025). */
  v2Era: "2025" | "2026";
  /** Whether a missing resource's error carries `data.uri` (SDK v2 servers add it). */
  dataUri: boolean;
}

const UPSTREAMS: Record<string, Upstream> = {
  v1Stdio: {
    label: "SDK v1 server over stdio",
    transport: "stdio",
    v2Era: "2025",
    dataUri: false,
    async start() {
      const out = await tempDir("upstream-v2-");
      return { target: fixtureCommand({ OUTPUT_DIR: out }), stop: () => removeDirs(out) };
    },
  },
  v1Http: {
    label: "SDK v1 server over HTTP (2025 sessions)",
    transport: "http",
    v2Era: "2025",
    dataUri: false,
    async start() {
      const out = await tempDir("upstream-v2-");
      const running = await runHttp(V1_FIXTURE, [], { OUTPUT_DIR: out });
      return {
        ...running,
        async stop() {
          await running.stop();
          await removeDirs(out);
        },
      };
    },
  },
  v2Stdio: {
    label: "SDK v2 server over stdio (both eras)",
    transport: "stdio",
    v2Era: "2026",
    dataUri: true,
    async start() {
      return {
        target: { command: process.execPath, args: ["--import", "tsx", V2_FIXTURE], cwd: repoRoot },
        stop: async () => undefined,
      };
    },
  },
  v2HttpModern: {
    label: "SDK v2 server over HTTP, 2026-07-28 only",
    transport: "http",
    v2Era: "2026",
    dataUri: true,
    start: () => runHttp(V2_FIXTURE, []),
  },
  v2HttpBoth: {
    label: "SDK v2 server over HTTP, both eras (2025 stateless)",
    transport: "http",
    v2Era: "2026",
    dataUri: true,
    start: () => runHttp(V2_FIXTURE, ["--legacy"]),
  },
};

type Sdk = "v1" | "v2";

function open(
  sdk: Sdk,
  target: UpstreamTarget,
  notified: Notified[],
  extra: Partial<UpstreamConnectionV2Options> = {},
) {
  const options = {
    name: "up",
    target,
    stderr: "ignore" as const,
    onNotification: (method: string, params: JsonObject | undefined) => notified.push({ method, params }),
    ...extra,
  };
  return sdk === "v1" ? new UpstreamConnection(options) : new UpstreamConnectionV2(options);
}

const textOf = (result: JsonObject) =>
  (result.content as Array<{ type: string; text?: string }>).map((block) => block.text).join("\n");

/** Every pair that can talk: [upstream, client SDK]. */
const PAIRS: Array<[keyof typeof UPSTREAMS, Sdk]> = [
  ["v1Stdio", "v1"],
  ["v1Stdio", "v2"],
  ["v1Http", "v1"],
  ["v1Http", "v2"],
  ["v2Stdio", "v1"],
  ["v2Stdio", "v2"],
  ["v2HttpModern", "v2"],
  ["v2HttpBoth", "v1"],
  ["v2HttpBoth", "v2"],
];

describe.each(PAIRS)("%s upstream, %s client", { timeout: 60_000 }, (key, sdk) => {
  const upstream = UPSTREAMS[key] as Upstream;
  const era = sdk === "v1" ? "2025" : upstream.v2Era;
  // A 2025 client of a stateless server has no stream the server could notify on.
  const hearsNotifications = !(key === "v2HttpBoth" && era === "2025");
  let running: Running;
  let port: UpstreamPort & { pid: number | null };
  const notified: Notified[] = [];

  beforeAll(async () => {
    running = await upstream.start();
    port = open(sdk, running.target, notified);
    await port.connect();
  });
  afterAll(async () => {
    await port?.close();
    await running?.stop();
  });

  it("connects: capabilities, era, pid", () => {
    expect(port.connected).toBe(true);
    expect(port.capabilities).toMatchObject({ tools: { listChanged: true }, prompts: {}, resources: {} });
    if (port instanceof UpstreamConnectionV2) {
      expect(port.protocolVersion).toMatch(era === "2026" ? /^2026-07-28$/ : /^2025-/);
    }
    if (upstream.transport === "stdio") expect(port.pid).toBeGreaterThan(0);
    else expect(port.pid).toBeNull();
  });

  it("lists tools and calls one, results passed as they are", async () => {
    const { tools } = (await port.request("tools/list", {})) as { tools: Array<{ name: string }> };
    expect(tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(["echo", "fail", "slow", "crash", "add_tool"]),
    );
    const result = await port.request("tools/call", { name: "echo", arguments: { text: "hi" } });
    expect(result.content).toEqual([{ type: "text", text: "echo: hi" }]);
    expect(result.structuredContent).toEqual({ echoed: "hi" });
    const failed = await port.request("tools/call", { name: "fail", arguments: {} });
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toBe("this tool always fails");
  });

  it("forwards progress to the request that asked for it", async () => {
    const updates: ProgressUpdate[] = [];
    const result = await port.request(
      "tools/call",
      { name: "slow", arguments: { steps: 3, delayMs: 0 } },
      { onprogress: (update) => updates.push(update) },
    );
    expect(textOf(result)).toBe("done after 3 steps");
    expect(updates).toEqual([
      { progress: 1, total: 3, message: "step 1" },
      { progress: 2, total: 3, message: "step 2" },
      { progress: 3, total: 3, message: "step 3" },
    ]);
  });

  it("passes JSON-RPC errors through with code, message and data", async () => {
    const missing = await rejectionOf(port.request("resources/read", { uri: "fixture://nope" }));
    expect(missing).toBeInstanceOf(RpcError);
    expect(missing).toMatchObject({ code: -32602, message: expect.stringContaining("fixture://nope") });
    expect((missing as RpcError).data).toEqual(upstream.dataUri ? { uri: "fixture://nope" } : undefined);
    const unknown = await rejectionOf(port.request("no/such-method", {}));
    expect(unknown).toBeInstanceOf(RpcError);
    expect(unknown).toMatchObject({ code: -32601, message: "Method not found" });
  });

  it("reads resources and gets prompts", async () => {
    const read = await port.request("resources/read", { uri: "fixture://readme" });
    expect(read.contents).toEqual([
      { uri: "fixture://readme", mimeType: "text/plain", text: "fixture readme" },
    ]);
    const prompt = await port.request("prompts/get", { name: "greet", arguments: { name: "Ada" } });
    expect(prompt.messages).toEqual([{ role: "user", content: { type: "text", text: "Hello, Ada!" } }]);
  });

  it.runIf(hearsNotifications)("hands tools/list_changed to onNotification; the new tool works", async () => {
    await port.request("tools/call", { name: "add_tool", arguments: {} });
    await expect
      .poll(() => notified.find((n) => n.method === "notifications/tools/list_changed"), { timeout: 10_000 })
      .toBeDefined();
    const heard = notified.find((n) => n.method === "notifications/tools/list_changed");
    // a 2026-07-28 listen stream's subscription id is not passed on
    expect(heard?.params?._meta).toBeUndefined();
    const { tools } = (await port.request("tools/list", {})) as { tools: Array<{ name: string }> };
    expect(tools.map((tool) => tool.name)).toContain("added");
    expect(textOf(await port.request("tools/call", { name: "added", arguments: {} }))).toBe("added works");
  });

  it("times out a silent call (UpstreamUnavailableError) and stays usable", async () => {
    const error = await rejectionOf(
      port.request(
        "tools/call",
        { name: "slow", arguments: { steps: 1, delayMs: 3000 } },
        { timeoutMs: 300 },
      ),
    );
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error).toMatchObject({ upstream: "up", message: 'upstream "up" did not answer in time' });
    expect(textOf(await port.request("tools/call", { name: "echo", arguments: { text: "still" } }))).toBe(
      "echo: still",
    );
  });

  it("lets progress reset the timeout", async () => {
    const updates: ProgressUpdate[] = [];
    // 4 steps 250 ms apart: 1 s in all, more than the 700 ms timeout, each gap far less
    const result = await port.request(
      "tools/call",
      { name: "slow", arguments: { steps: 4, delayMs: 250 } },
      { timeoutMs: 700, onprogress: (update) => updates.push(update) },
    );
    expect(textOf(result)).toBe("done after 4 steps");
    expect(updates).toHaveLength(4);
  });

  it("cancels with the caller's signal (-32001)", async () => {
    const controller = new AbortController();
    const error = await rejectionOf(
      port.request(
        "tools/call",
        { name: "slow", arguments: { steps: 50, delayMs: 50 } },
        { signal: controller.signal, onprogress: () => controller.abort("stop") },
      ),
    );
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({ code: -32001, message: "Request was cancelled" });
  });

  it("turns a crash into UpstreamUnavailableError and reconnects on the next call", async () => {
    const pid = port.pid;
    const crashed = await rejectionOf(port.request("tools/call", { name: "crash", arguments: {} }));
    expect(crashed).toBeInstanceOf(UpstreamUnavailableError);
    expect((crashed as UpstreamUnavailableError).upstream).toBe("up");
    if (upstream.transport === "stdio") {
      expect((crashed as Error).message).toBe('upstream "up" closed the connection during the call');
      expect(port.connected).toBe(false);
    } else {
      // the server is down: the next call cannot reach it either
      const down = await rejectionOf(port.request("tools/call", { name: "echo", arguments: { text: "x" } }));
      expect(down).toBeInstanceOf(UpstreamUnavailableError);
      await running.restart?.();
    }
    expect(textOf(await port.request("tools/call", { name: "echo", arguments: { text: "back" } }))).toBe(
      "echo: back",
    );
    expect(port.connected).toBe(true);
    if (upstream.transport === "stdio") {
      expect(port.pid).toBeGreaterThan(0);
      expect(port.pid).not.toBe(pid);
    }
    if (hearsNotifications) {
      // the new connection hears notifications again (2026-07-28: a new listen stream)
      notified.length = 0;
      await port.request("tools/call", { name: "add_tool", arguments: {} });
      await expect
        .poll(() => notified.some((n) => n.method === "notifications/tools/list_changed"), {
          timeout: 10_000,
        })
        .toBe(true);
    }
  });

  it("after close: refuses calls, and a stdio upstream's process is gone", async () => {
    const pid = port.pid;
    await port.close();
    expect(port.connected).toBe(false);
    const error = await rejectionOf(port.request("tools/list", {}));
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect((error as Error).message).toBe("the proxy is shutting down");
    if (pid !== null) {
      await expect.poll(() => alive(pid), { timeout: 10_000 }).toBe(false);
    }
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
