/**
 * Where the two upstream connections differ, and what only `UpstreamConnectionV2` does: reaching a
 * 2026-07-28-only server, the `era` option, `resources/subscribe` on 2026-07-28 (a listen stream),
 * HTTP headers on every request (the `server/discover` probe included), and failures to connect.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { UpstreamTarget } from "../../../../src/proxy/sdk/upstream/shared.js";
import { UpstreamConnection } from "../../../../src/proxy/sdk/upstream/upstream-connection.js";
import { UpstreamConnectionV2 } from "../../../../src/proxy/sdk/upstream/upstream-connection-v2.js";
import { type JsonObject, RpcError, UpstreamUnavailableError } from "../../../../src/proxy/types.js";
import { rejectionOf, repoRoot, runWithoutPackages } from "../../../support/helpers.js";
import {
  fixtureCommand,
  type HttpFixture,
  removeDirs,
  startHttpFixture,
  tempDir,
  V2_FIXTURE,
} from "../../support.js";

const V2_STDIO: UpstreamTarget = {
  command: process.execPath,
  args: ["--import", "tsx", V2_FIXTURE],
  cwd: repoRoot,
};

/** The SDK v2 fixture over HTTP, with `args` and `env`. */
const startHttp = (args: string[], env: Record<string, string> = {}) =>
  startHttpFixture(env, 0, { fixture: V2_FIXTURE, args });

const text = (result: JsonObject) => (result.content as Array<{ text: string }>)[0]?.text;

describe("a 2026-07-28-only upstream (SDK v2, legacy: reject)", { timeout: 60_000 }, () => {
  let fixture: HttpFixture | undefined;
  let url: string;
  beforeAll(async () => {
    fixture = await startHttp([]);
    url = fixture.url;
  });
  afterAll(() => fixture?.stop());

  it("is out of reach of the SDK v1 connection (initialize is refused)", async () => {
    const v1 = new UpstreamConnection({ name: "modern", target: { url } });
    const error = await rejectionOf(v1.connect());
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect((error as Error).message).toMatch(/^cannot connect to upstream "modern": /);
    expect(v1.connected).toBe(false);
    await v1.close();
  });

  it("is reached by the SDK v2 connection, and an era-pinned one", async () => {
    for (const era of ["auto", "modern"] as const) {
      const v2 = new UpstreamConnectionV2({ name: "modern", target: { url }, era });
      await v2.connect();
      expect(v2.protocolVersion).toBe("2026-07-28");
      expect(text(await v2.request("tools/call", { name: "echo", arguments: { text: era } }))).toBe(
        `echo: ${era}`,
      );
      await v2.close();
    }
  });

  it('refuses era "legacy" the way it refuses SDK v1', async () => {
    const v2 = new UpstreamConnectionV2({ name: "modern", target: { url }, era: "legacy" });
    expect(await rejectionOf(v2.connect())).toBeInstanceOf(UpstreamUnavailableError);
    await v2.close();
  });

  it("resources/subscribe and unsubscribe become the listen stream's resource filter", async () => {
    const heard: Array<{ method: string; params: JsonObject | undefined }> = [];
    const v2 = new UpstreamConnectionV2({
      name: "modern",
      target: { url },
      onNotification: (method, params) => heard.push({ method, params }),
    });
    try {
      expect(await v2.request("resources/subscribe", { uri: "fixture://readme" })).toEqual({});
      await v2.request("tools/call", { name: "touch", arguments: {} });
      await expect
        .poll(() => heard.filter((n) => n.method === "notifications/resources/updated"), { timeout: 10_000 })
        .toEqual([{ method: "notifications/resources/updated", params: { uri: "fixture://readme" } }]);
      expect(await v2.request("resources/unsubscribe", { uri: "fixture://readme" })).toEqual({});
      // after unsubscribing, a touch is not heard; a tools change on the same stream still is
      await v2.request("tools/call", { name: "touch", arguments: {} });
      await v2.request("tools/call", { name: "add_tool", arguments: {} });
      await expect
        .poll(() => heard.some((n) => n.method === "notifications/tools/list_changed"), { timeout: 10_000 })
        .toBe(true);
      expect(heard.filter((n) => n.method === "notifications/resources/updated")).toHaveLength(1);
    } finally {
      await v2.close();
    }
  });
});

describe("resources/subscribe on 2026-07-28 without the subscribe capability", { timeout: 60_000 }, () => {
  it("answers -32601 as a 2025 server would, and the connection stays up", async () => {
    const fixture = await startHttp([], { NO_SUBSCRIBE: "1" });
    const url = fixture.url;
    const v2 = new UpstreamConnectionV2({ name: "modern", target: { url } });
    try {
      const error = await rejectionOf(v2.request("resources/subscribe", { uri: "fixture://readme" }));
      expect(error).toBeInstanceOf(RpcError);
      expect(error).toMatchObject({ code: -32601, message: "Method not found" });
      expect(v2.connected).toBe(true);
    } finally {
      await v2.close();
      await fixture.stop();
    }
  });
});

describe("the era option against other upstreams", { timeout: 60_000 }, () => {
  it('"legacy" speaks 2025 to an SDK v2 stdio server; notifications come on the connection', async () => {
    const heard: string[] = [];
    const v2 = new UpstreamConnectionV2({
      name: "up",
      target: V2_STDIO,
      era: "legacy",
      stderr: "ignore",
      onNotification: (method) => heard.push(method),
    });
    try {
      await v2.connect();
      expect(v2.protocolVersion).toMatch(/^2025-/);
      await v2.request("tools/call", { name: "add_tool", arguments: {} });
      await expect.poll(() => heard, { timeout: 10_000 }).toContain("notifications/tools/list_changed");
    } finally {
      await v2.close();
    }
  });

  it("resources/subscribe on a 2026-07-28 stdio connection delivers resources/updated", async () => {
    const heard: Array<{ method: string; params: JsonObject | undefined }> = [];
    const v2 = new UpstreamConnectionV2({
      name: "up",
      target: V2_STDIO,
      stderr: "ignore",
      onNotification: (method, params) => heard.push({ method, params }),
    });
    try {
      await v2.request("resources/subscribe", { uri: "fixture://readme" });
      expect(v2.protocolVersion).toBe("2026-07-28");
      await v2.request("tools/call", { name: "touch", arguments: {} });
      await expect
        .poll(() => heard.find((n) => n.method === "notifications/resources/updated"), { timeout: 10_000 })
        .toEqual({ method: "notifications/resources/updated", params: { uri: "fixture://readme" } });
    } finally {
      await v2.close();
    }
  });

  it('"modern" cannot connect to an SDK v1 server; "auto" falls back to 2025', async () => {
    const out = await tempDir("upstream-v2-eras-");
    try {
      const pinned = new UpstreamConnectionV2({
        name: "old",
        target: fixtureCommand({ OUTPUT_DIR: out }),
        stderr: "ignore",
        era: "modern",
      });
      expect(await rejectionOf(pinned.connect())).toBeInstanceOf(UpstreamUnavailableError);
      await pinned.close();
      const auto = new UpstreamConnectionV2({
        name: "old",
        target: fixtureCommand({ OUTPUT_DIR: out }),
        stderr: "ignore",
      });
      await auto.connect();
      expect(auto.protocolVersion).toMatch(/^2025-/);
      // 2025 has resources/subscribe: it goes to the server, which does not offer it
      const error = await rejectionOf(auto.request("resources/subscribe", { uri: "fixture://readme" }));
      expect(error).toBeInstanceOf(RpcError);
      expect((error as RpcError).code).toBe(-32601);
      await auto.close();
    } finally {
      await removeDirs(out);
    }
  });
});

describe.each(["v1", "v2"] as const)(
  "%s connection: headers and failures to connect",
  { timeout: 60_000 },
  (sdk) => {
    const make = (target: UpstreamTarget) =>
      sdk === "v1"
        ? new UpstreamConnection({ name: "up", target, stderr: "ignore" })
        : new UpstreamConnectionV2({ name: "up", target, stderr: "ignore" });
    let fixture: HttpFixture | undefined;
    let url: string;
    beforeAll(async () => {
      // both eras, so the v1 connection can talk too; every request must carry the header
      fixture = await startHttp(["--legacy"], { REQUIRE_HEADER: "x-api-key=s3cret" });
      url = fixture.url;
    });
    afterAll(() => fixture?.stop());

    it("sends the configured headers on every request", async () => {
      const port = make({ url, headers: { "x-api-key": "s3cret" } });
      try {
        expect(text(await port.request("tools/call", { name: "echo", arguments: { text: "ok" } }))).toBe(
          "echo: ok",
        );
        expect((await port.request("resources/read", { uri: "fixture://readme" })).contents).toHaveLength(1);
      } finally {
        await port.close();
      }
    });

    it("without them, cannot connect (UpstreamUnavailableError)", async () => {
      const port = make({ url });
      const error = await rejectionOf(port.connect());
      expect(error).toBeInstanceOf(UpstreamUnavailableError);
      expect((error as Error).message).toMatch(/^cannot connect to upstream "up": /);
      await port.close();
    });

    it("a stdio command that does not exist cannot connect", async () => {
      const port = make({ command: join(repoRoot, "no-such-server-binary") });
      const error = await rejectionOf(port.connect());
      expect(error).toBeInstanceOf(UpstreamUnavailableError);
      expect((error as UpstreamUnavailableError).upstream).toBe("up");
      expect(port.pid).toBeNull();
      await port.close();
    });

    it("notify before connecting is a no-op", async () => {
      const port = make({ url });
      await expect(port.notify("notifications/roots/list_changed")).resolves.toBeUndefined();
      expect(port.connected).toBe(false);
      await port.close();
    });
  },
);

describe("with only the SDK v2 packages installed", { timeout: 60_000 }, () => {
  // A module hook makes every SDK v1 import fail, as if only the SDK v2 packages were installed.
  const run = (code: string) => runWithoutPackages("@modelcontextprotocol/sdk", "SDK v1", code);

  it("the hook blocks SDK v1 (so the next test means something)", async () => {
    await expect(run('await import("@modelcontextprotocol/sdk/client/index.js");')).rejects.toThrow(
      /SDK v1 blocked/,
    );
  });

  it("UpstreamConnectionV2 loads, connects to a 2026-07-28 stdio upstream and calls a tool", async () => {
    const stdout = await run(
      [
        `const { UpstreamConnectionV2 } = await import(${JSON.stringify(join(repoRoot, "src/proxy/sdk/upstream/upstream-connection-v2.ts"))});`,
        `const up = new UpstreamConnectionV2({ name: "up", stderr: "ignore", target: ${JSON.stringify(V2_STDIO)} });`,
        'const result = await up.request("tools/call", { name: "echo", arguments: { text: "v2 only" } });',
        "console.log(up.protocolVersion, result.content[0].text);",
        "await up.close();",
      ].join("\n"),
    );
    expect(stdout).toBe("2026-07-28 echo: v2 only");
  });
});
