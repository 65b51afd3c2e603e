import type { ServerContext } from "@modelcontextprotocol/server";
import type { HostAuthInfo, HostExtra, HostRequestContext } from "../host.js";

/**
 * The request context of SDK v2 (`@modelcontextprotocol/server` 2.x), normalized to the port's.
 *
 * SDK v2 hands handlers a `ServerContext`: the request in `ctx.mcpReq` (id, method, signal,
 * `envelope` on 2026-07-28 requests), and, over HTTP, `ctx.http` with the verified `authInfo` and
 * the web `Request` (`ctx.http.req`). There is no session id on a stateless server (and none on any
 * 2026-07-28 request). User callbacks (`scope`, `authorize`, `downloadClaims`) were written against
 * the `ScopeSource` shape SDK v1's `extra` has (`sessionId`, `authInfo`, `requestInfo.headers`), so
 * the `extra` they get on v2 is the v2 context plus those fields: a scope function works unchanged
 * on both generations, and the v2 fields (`mcpReq`, `http`) stay readable.
 */

/** The marker that says a v2 context was already normalized (so it is done once). */
const NORMALIZED = Symbol.for("mcp-file-bridge.v2-context");

/** The parts of a v2 `ServerContext` the adapter reads, structurally (any 2.x minor). */
export type V2Context = Pick<ServerContext, "sessionId" | "mcpReq" | "http">;

/** The `extra` of a v2 request as user callbacks see it: the v2 context plus the `ScopeSource` fields. */
export type V2Extra = V2Context &
  HostExtra & {
    transport: "http" | "local";
    signal: AbortSignal;
    [NORMALIZED]: true;
  };

/**
 * Whether `value` is an SDK v2 handler context (it has `mcpReq` with a method and a signal; SDK v1's
 * `extra` has neither). A context already normalized by {@link v2Extra} counts too.
 */
export function isV2Context(value: unknown): value is V2Context {
  if (typeof value !== "object" || value === null) return false;
  const mcpReq = (value as { mcpReq?: unknown }).mcpReq;
  return (
    typeof mcpReq === "object" &&
    mcpReq !== null &&
    typeof (mcpReq as { method?: unknown }).method === "string" &&
    (mcpReq as { signal?: unknown }).signal instanceof AbortSignal
  );
}

function subjectOf(extra: Record<string, unknown> | undefined): string | undefined {
  const subject = extra?.sub ?? extra?.subject;
  return typeof subject === "string" && subject.length > 0 ? subject : undefined;
}

/** The verified auth info of a v2 request, in the port's shape. */
export function authOfV2(auth: NonNullable<NonNullable<V2Context["http"]>["authInfo"]>): HostAuthInfo {
  const subject = subjectOf(auth.extra);
  return {
    ...(typeof auth.token === "string" ? { token: auth.token } : {}),
    ...(typeof auth.clientId === "string" ? { clientId: auth.clientId } : {}),
    ...(Array.isArray(auth.scopes) ? { scopes: auth.scopes } : {}),
    ...(typeof auth.expiresAt === "number" ? { expiresAt: auth.expiresAt } : {}),
    ...(subject === undefined ? {} : { subject }),
    ...(auth.extra === undefined ? {} : { extra: auth.extra }),
  };
}

/** The headers of the HTTP request behind a v2 context, as a record with lower-case names. */
function headersOf(ctx: V2Context): Record<string, string> | undefined {
  const req = (ctx.http as { req?: unknown } | undefined)?.req;
  if (!(req instanceof Request)) return undefined;
  const headers: Record<string, string> = {};
  req.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return headers;
}

/**
 * The `extra` user callbacks get for a v2 request: the context itself plus `sessionId` (when the
 * transport has one), `authInfo` (from `ctx.http.authInfo`), `requestInfo.headers`, `transport`
 * (`"http"` when the request came over HTTP: SDK v2 sets `ctx.http` exactly then) and `signal`.
 * Idempotent.
 */
export function v2Extra(ctx: V2Context): V2Extra {
  if ((ctx as Partial<V2Extra>)[NORMALIZED] === true) return ctx as V2Extra;
  const headers = headersOf(ctx);
  const authInfo = ctx.http?.authInfo;
  return {
    ...ctx,
    ...(typeof ctx.sessionId === "string" ? { sessionId: ctx.sessionId } : {}),
    authInfo,
    requestInfo: headers === undefined ? undefined : { headers },
    transport: ctx.http === undefined ? "local" : "http",
    signal: ctx.mcpReq.signal,
    [NORMALIZED]: true,
  };
}

/** The port's context of an SDK v2 request. */
export function contextFromV2(ctx: V2Context): HostRequestContext {
  const extra = v2Extra(ctx);
  const authInfo = ctx.http?.authInfo;
  const headers = extra.requestInfo?.headers;
  const context: HostRequestContext = {
    ...(typeof ctx.sessionId === "string" ? { sessionId: ctx.sessionId } : {}),
    ...(authInfo ? { authInfo: authOfV2(authInfo) } : {}),
    ...(headers === undefined ? {} : { headers }),
    transport: extra.transport,
    signal: ctx.mcpReq.signal,
    requestId: ctx.mcpReq.id,
    extra,
  };
  const token = (ctx.mcpReq._meta as { progressToken?: unknown } | undefined)?.progressToken;
  const notify = (ctx.mcpReq as { notify?: (notification: unknown) => Promise<void> }).notify;
  if ((typeof token === "string" || typeof token === "number") && typeof notify === "function") {
    context.notifyProgress = async (progress, total, message) => {
      await notify.call(ctx.mcpReq, {
        method: "notifications/progress",
        params: {
          progressToken: token,
          progress,
          ...(total === undefined ? {} : { total }),
          ...(message === undefined ? {} : { message }),
        },
      });
    };
  }
  return context;
}
