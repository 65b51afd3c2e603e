import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import type { HostAuthInfo, HostExtra, HostRequestContext } from "../host.js";

/** The `extra` SDK v1 hands a server's request handlers. */
export type V1Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

function subjectOf(extra: Record<string, unknown> | undefined): string | undefined {
  const subject = extra?.sub ?? extra?.subject;
  return typeof subject === "string" && subject.length > 0 ? subject : undefined;
}

function authOf(auth: NonNullable<V1Extra["authInfo"]>): HostAuthInfo {
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

/**
 * The normalized context of an SDK v1 request. SDK v1's HTTP transports (Streamable HTTP, SSE) put
 * `requestInfo` (the request's headers) on every message; stdio and `InMemoryTransport` never do,
 * which is how `transport` tells `"http"` from `"local"`.
 */
export function contextFromV1(extra: V1Extra): HostRequestContext {
  const headers = extra.requestInfo?.headers;
  return {
    ...(typeof extra.sessionId === "string" ? { sessionId: extra.sessionId } : {}),
    ...(extra.authInfo ? { authInfo: authOf(extra.authInfo) } : {}),
    ...(headers === undefined ? {} : { headers: headers as Record<string, string | string[] | undefined> }),
    transport: extra.requestInfo === undefined ? "local" : "http",
    signal: extra.signal,
    requestId: extra.requestId,
    extra: extra as unknown as HostExtra,
  };
}
