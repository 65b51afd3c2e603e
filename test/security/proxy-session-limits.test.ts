/**
 * Issue 21, part 3: the proxy's 2025-era sessions are bounded, on both SDK generations, over real
 * HTTP on 127.0.0.1 in front of the real stdio fixture upstream:
 * - with auth configured, an anonymous `initialize` is refused (401) and leaves no session;
 * - each user holds at most `sessionsPerUser` sessions and all anonymous callers together at most
 *   `anonymousSessions` (429 past the cap); a closed session frees its slot; one user's sessions do
 *   not use up another's;
 * - a session idle for `sessionIdle` is closed (its id then answers 404), one in use is not.
 */
import { afterEach, describe, expect, it } from "vitest";
import { bearerTokens, parseBearerTokens } from "../../src/proxy/bearer-tokens.js";
import { createFileProxy, type FileProxy } from "../../src/proxy/index.js";
import { fixtureCommand, removeDirs, tempDir } from "../proxy/support.js";
import { waitUntil } from "../support/helpers.js";
import { deleteSession, INITIALIZE, JSON_HEADERS, onSession, openSession } from "./raw-mcp.js";

const ALICE = "alice-token-sessions-0123";
const BOB = "bob-token-sessions-012345";

const running: Array<{ proxy: FileProxy; dir: string }> = [];

afterEach(async () => {
  for (const { proxy, dir } of running.splice(0)) {
    await proxy.close({ timeoutMs: 1000 });
    await removeDirs(dir);
  }
});

async function start(
  sdk: "v1" | "v2",
  limits: Record<string, unknown>,
  withAuth: boolean,
): Promise<{ proxy: FileProxy; mcpUrl: string }> {
  const dir = await tempDir("proxy-sessions-");
  const proxy = await createFileProxy({
    sdk,
    ...(withAuth
      ? { authenticate: bearerTokens(parseBearerTokens(`alice:${ALICE},bob:${BOB}`, "test")) }
      : {}),
    config: {
      mcpServers: { up: fixtureCommand({ OUTPUT_DIR: dir }) },
      proxy: { limits },
    },
    upstreamStderr: "ignore",
  });
  running.push({ proxy, dir });
  const { mcpUrl } = await proxy.listen();
  return { proxy, mcpUrl };
}

/** A raw `initialize`: its status (and the reply drained). */
async function initialize(mcpUrl: string, token?: string): Promise<number> {
  const response = await fetch(mcpUrl, {
    method: "POST",
    headers: { ...JSON_HEADERS, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: INITIALIZE,
  });
  await response.text();
  return response.status;
}

describe.each(["v1", "v2"] as const)("proxy on SDK %s: bounded sessions", (sdk) => {
  it("with auth configured, an anonymous initialize is refused with 401 and opens nothing", async () => {
    const { proxy, mcpUrl } = await start(sdk, {}, true);
    const statuses = await Promise.all(Array.from({ length: 20 }, () => initialize(mcpUrl)));
    expect(new Set(statuses)).toEqual(new Set([401]));
    expect(proxy.sessions).toBe(0);
    expect(typeof (await openSession(mcpUrl, ALICE))).toBe("string");
    expect(proxy.sessions).toBe(1);
  });

  it("caps each user's sessions (429 past it); a closed session frees its slot; users do not share a cap", async () => {
    const { mcpUrl } = await start(sdk, { sessionsPerUser: 3 }, true);
    const alice = [
      await openSession(mcpUrl, ALICE),
      await openSession(mcpUrl, ALICE),
      await openSession(mcpUrl, ALICE),
    ];
    // Concurrent attempts past the cap: all refused, none slips through between check and open.
    expect(await Promise.all(Array.from({ length: 6 }, () => initialize(mcpUrl, ALICE)))).toEqual(
      Array(6).fill(429),
    );
    const bob = await openSession(mcpUrl, BOB);
    expect((await onSession(mcpUrl, bob, "tools/list", {}, BOB)).status).toBe(200);
    // Without her token the session is not found (it is hers); with it, it closes.
    expect(await deleteSession(mcpUrl, alice[0] as string)).toBe(404);
    const closed = await fetch(mcpUrl, {
      method: "DELETE",
      headers: { authorization: `Bearer ${ALICE}`, "mcp-session-id": alice[0] as string },
    });
    await closed.text();
    expect(closed.status).toBe(200);
    const again = await openSession(mcpUrl, ALICE);
    expect((await onSession(mcpUrl, again, "tools/list", {}, ALICE)).status).toBe(200);
  });

  it("caps all anonymous callers together when no auth is configured", async () => {
    const { proxy, mcpUrl } = await start(sdk, { anonymousSessions: 4 }, false);
    const statuses = await Promise.all(Array.from({ length: 12 }, () => initialize(mcpUrl)));
    expect(statuses.filter((status) => status === 200)).toHaveLength(4);
    expect(statuses.filter((status) => status === 429)).toHaveLength(8);
    expect(proxy.sessions).toBe(4);
  });

  it("closes a session idle for sessionIdle; its id then answers 404", async () => {
    const { proxy, mcpUrl } = await start(sdk, { sessionIdle: "1s" }, true);
    const idle = await openSession(mcpUrl, ALICE);
    expect(proxy.sessions).toBe(1);
    await waitUntil(() => proxy.sessions === 0, 15_000);
    expect((await onSession(mcpUrl, idle, "tools/list", {}, ALICE)).status).toBe(404);
    // The slot is free again.
    const next = await openSession(mcpUrl, ALICE);
    expect((await onSession(mcpUrl, next, "tools/list", {}, ALICE)).status).toBe(200);
  });
});
