/**
 * The `clientInfo.name` the connected client sent in `initialize` (on SDK v2's stateless HTTP, in
 * the request's envelope), read from an SDK v1 or v2 `McpServer` or low-level `Server`:
 * `"claude-code"`, `"codex-mcp-client"`, `"gemini-cli-mcp-client"`, … Undefined before the
 * handshake or for anything else. Pass it to `Artifacts.fit({ client })`.
 *
 * @example
 * ```ts
 * server.registerTool("convert", config, async (args, extra) =>
 *   artifacts.fit(await convert(args), { scope: defaultScope(extra), client: clientNameOf(server) }),
 * );
 * ```
 */
export function clientNameOf(server: unknown): string | undefined {
  if (typeof server !== "object" || server === null) return undefined;
  const candidates = [(server as { server?: unknown }).server, server];
  for (const candidate of candidates) {
    const read = (candidate as { getClientVersion?: unknown } | undefined)?.getClientVersion;
    if (typeof read !== "function") continue;
    const info = read.call(candidate) as { name?: unknown } | undefined;
    if (typeof info?.name === "string") return info.name;
  }
  return undefined;
}
