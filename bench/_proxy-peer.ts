/**
 * One proxy hop of `bench/proxy.ts` in a process of its own, in front of an upstream URL (argv[3]):
 * - `v1`: `createFileProxy` on SDK v1 (2025 sessions);
 * - `v2`: `createFileProxy` on SDK v2 with a bearer token (stateless 2026-07-28 clients).
 * The plain forwarder it is measured against is `_forwarder.mjs`.
 *
 * Prints `READY {"url": …}` and stays up until its stdin closes.
 */
import { built } from "./_built.js";
import { servePeer } from "./_lib.js";

// Our code as its published build (bench/_built.ts).
const { bearerTokens, createFileProxy, parseBearerTokens } =
  await built<typeof import("../src/proxy/index.js")>("proxy");

/** The bearer token the bench's SDK v2 clients send (the v2 proxy knows it as user "bench"). */
export const PROXY_BENCH_TOKEN = "bench-token-0123456789abcdef";

async function proxy(kind: "v1" | "v2", upstream: string): Promise<{ url: string; close(): Promise<void> }> {
  const made = await createFileProxy(
    kind === "v2"
      ? {
          sdk: "v2",
          authenticate: bearerTokens(parseBearerTokens(`bench:${PROXY_BENCH_TOKEN}`, "bench")),
          config: { mcpServers: { up: { url: upstream } } },
        }
      : { config: { mcpServers: { up: { url: upstream } } } },
  );
  const { mcpUrl } = await made.listen();
  return { url: mcpUrl, close: () => made.close() };
}

// Run as a peer (the source under tsx, or its plain-JS build `.peer-_proxy-peer.mjs`), not imported.
if (/_proxy-peer\.(ts|mjs)$/.test(process.argv[1] ?? "")) {
  const [kind, upstream] = [process.argv[2], process.argv[3]];
  if ((kind !== "v1" && kind !== "v2") || !upstream)
    throw new Error("usage: _proxy-peer.ts v1|v2 <upstream url>");
  const hop = await proxy(kind, upstream);
  await servePeer({ url: hop.url }, async () => ({}), hop.close);
}
