/**
 * Per-request rewrites of an SDK v2 server's `tools/list` answers (`McpHost.rewriteListedTools`).
 * The `McpServer` mounts its `tools/list` handler when its first tool is registered, before or after
 * a piece asks; so the rewrite goes through the low-level `Server`'s handler hook (`_wrapHandler`,
 * which the SDK documents as the seam for wrapping every registered handler) for a handler mounted
 * later, and over the stored handler for one mounted already. No SDK import.
 */
import type { HostRequestContext, HostToolsRewrite } from "../host.js";
import { loadHostWork } from "../load-host-work.js";

type Handler = (request: unknown, ctx: unknown) => Promise<unknown>;

/** The members of an SDK v2 low-level `Server` this uses. */
interface WrappableServer {
  _wrapHandler?: (method: string, handler: Handler) => Handler;
  _requestHandlers?: Map<string, Handler>;
}

interface Installed {
  rewrites: HostToolsRewrite[];
  context: (ctx: unknown) => HostRequestContext;
}

const installed = new WeakMap<object, Installed>();

/**
 * Adds `rewrite` to the `tools/list` answers of `low` (an SDK v2 low-level `Server`); `context`
 * turns the SDK's request context into the port's. Rewrites run in the order they were added.
 */
export function rewriteToolsList(
  low: object,
  rewrite: HostToolsRewrite,
  context: (ctx: unknown) => HostRequestContext,
): void {
  const known = installed.get(low);
  if (known) {
    known.rewrites.push(rewrite);
    return;
  }
  const server = low as WrappableServer;
  const base = server._wrapHandler;
  if (typeof base !== "function" || !(server._requestHandlers instanceof Map)) return;
  const state: Installed = { rewrites: [rewrite], context };
  installed.set(low, state);
  const rewritten =
    (handler: Handler): Handler =>
    async (request, ctx) => {
      const result = await handler(request, ctx);
      // The rewriting itself is loaded on first use (host-work.ts).
      return (await loadHostWork()).rewriteListed(result, state.rewrites, () => state.context(ctx));
    };
  server._wrapHandler = function (this: unknown, method: string, handler: Handler): Handler {
    const inner = base.call(this, method, handler);
    return method === "tools/list" ? rewritten(inner) : inner;
  };
  const mounted = server._requestHandlers.get("tools/list");
  if (mounted) server._requestHandlers.set("tools/list", rewritten(mounted));
}
