import type { HostExtra } from "./host.js";
import { isV2Context, v2Extra } from "./v2/context.js";

/**
 * The request context a tool handler got from the SDK, as scope functions expect it (`sessionId`,
 * `authInfo`, `requestInfo.headers`, `transport`), whatever SDK generation sent it. SDK v1's
 * `extra` already has that shape and is returned as it is; an SDK v2 `ServerContext` carries auth
 * in `ctx.http.authInfo` and the request in `ctx.http.req`, so it gets those fields added (the v2
 * fields stay). The pieces call this on the `extra` a user's tool callback hands them (`withFiles`,
 * `withArtifacts`), so `defaultScope` and user scope functions see the caller on both generations.
 *
 * @example
 * ```ts
 * server.registerTool("whoami", {}, async (ctx) => {
 *   const scope = defaultScope(scopeSourceOf(ctx)); // v2: the authenticated subject, never "default" over HTTP
 *   return { content: [{ type: "text", text: scope }] };
 * });
 * ```
 */
export function scopeSourceOf<T>(extra: T): T & HostExtra {
  if (isV2Context(extra)) return v2Extra(extra) as unknown as T & HostExtra;
  return extra as T & HostExtra;
}
