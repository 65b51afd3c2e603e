/**
 * One hop of `bench/proxy.ts` in a process of its own, in front of an upstream URL (argv[3]):
 * - `v1`: `createFileProxy` on SDK v1 (2025 sessions);
 * - `v2`: `createFileProxy` on SDK v2 with a bearer token (stateless 2026-07-28 clients);
 * - `forwarder`: a plain node:http JSON-RPC forwarder, the floor a proxy hop is measured against. It
 *   understands nothing: each request (method, headers, body) goes to the upstream over a keep-alive
 *   agent and the reply (SSE included) is piped back, so it adds only the second HTTP hop.
 *
 * Prints `READY {"url": …}` and stays up until its stdin closes.
 */
import { createServer, Agent as HttpAgent, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { bearerTokens, createFileProxy, parseBearerTokens } from "../src/proxy/index.js";
import { servePeer } from "./_lib.js";

/** The bearer token the bench's SDK v2 clients send (the v2 proxy knows it as user "bench"). */
export const PROXY_BENCH_TOKEN = "bench-token-0123456789abcdef";

async function forwarder(upstream: string): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(upstream);
  const agent = new HttpAgent({ keepAlive: true });
  const server = createServer((req, res) => {
    const headers = { ...req.headers, host: target.host };
    const out = httpRequest(
      { host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers, agent },
      (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(res);
      },
    );
    out.on("error", () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${target.pathname}`,
    close: async () => {
      agent.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

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

if (process.argv[1]?.endsWith("_proxy-peer.ts")) {
  const [kind, upstream] = [process.argv[2], process.argv[3]];
  if ((kind !== "v1" && kind !== "v2" && kind !== "forwarder") || !upstream) {
    throw new Error("usage: _proxy-peer.ts v1|v2|forwarder <upstream url>");
  }
  const hop = kind === "forwarder" ? await forwarder(upstream) : await proxy(kind, upstream);
  await servePeer({ url: hop.url }, async () => ({}), hop.close);
}
