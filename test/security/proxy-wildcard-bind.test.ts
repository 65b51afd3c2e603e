/**
 * Issue 21, part 6: DNS rebinding on a non-loopback bind. With `host: "0.0.0.0"` the proxy used to
 * check neither Host nor Origin: a page on attacker.example (made to resolve to the machine) got 200
 * on `initialize`. Now a wildcard bind answers only the loopback names plus the `baseUrl` host, a
 * foreign Origin on /mcp is refused whatever the bind, and start-up warns. Both SDK generations;
 * the requests go to 127.0.0.1 only.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearerTokens, parseBearerTokens } from "../../src/proxy/bearer-tokens.js";
import { createFileProxy, type FileProxy } from "../../src/proxy/index.js";
import { fixtureCommand, removeDirs, tempDir } from "../proxy/support.js";
import { INITIALIZE, JSON_HEADERS } from "./raw-mcp.js";

const ALICE = "alice-token-rebinding-0123";

/** One raw POST of an `initialize` to 127.0.0.1:`port` with exactly these extra headers. */
function initialize(port: number, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`http://127.0.0.1:${port}/mcp`, {
      method: "POST",
      headers: { ...JSON_HEADERS, authorization: `Bearer ${ALICE}`, ...headers },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end(INITIALIZE);
  });
}

describe.each(["v1", "v2"] as const)("proxy on SDK %s bound to 0.0.0.0: DNS-rebinding guard", (sdk) => {
  let dir: string;
  let proxy: FileProxy;
  let port: number;
  const logs: string[] = [];

  beforeAll(async () => {
    dir = await tempDir("proxy-rebind-");
    proxy = await createFileProxy({
      sdk,
      authenticate: bearerTokens(parseBearerTokens(`alice:${ALICE}`, "test")),
      log: (line) => logs.push(line),
      config: {
        mcpServers: { up: fixtureCommand({ OUTPUT_DIR: dir }) },
        proxy: { baseUrl: "https://files.example.com", limits: { sessionsPerUser: 100 } },
      },
      upstreamStderr: "ignore",
    });
    port = Number(new URL((await proxy.listen({ host: "0.0.0.0", port: 0 })).url).port);
  });

  afterAll(async () => {
    await proxy?.close({ timeoutMs: 1000 });
    await removeDirs(dir);
  });

  it("refuses Host: attacker.example with a matching Origin (the rebinding attack)", async () => {
    expect(await initialize(port, { host: "attacker.example", origin: "http://attacker.example" })).toBe(403);
    expect(await initialize(port, { host: `attacker.example:${port}` })).toBe(403);
    expect(proxy.sessions).toBe(0);
  });

  it("refuses a foreign Origin on /mcp even with an allowed Host", async () => {
    expect(await initialize(port, { host: `127.0.0.1:${port}`, origin: "https://attacker.example" })).toBe(
      403,
    );
  });

  it("regression: the loopback names and the baseUrl host are answered", async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, "files.example.com"]) {
      expect(await initialize(port, { host }), host).toBe(200);
    }
    expect(await initialize(port, { host: "files.example.com", origin: "https://files.example.com" })).toBe(
      200,
    );
  });

  it("warns at start-up which names it answers", () => {
    const warning = logs.find((line) => line.startsWith("warning: listening on 0.0.0.0"));
    expect(warning).toBeDefined();
    expect(warning).toContain("files.example.com");
    expect(warning).toContain("allowedHosts");
  });
});
