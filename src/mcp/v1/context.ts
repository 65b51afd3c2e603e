import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { noUrlElicitation } from "../errors.js";
import type { HostAuthInfo, HostClientCapabilities, HostExtra, HostRequestContext } from "../host.js";
import { loadHostWork } from "../load-host-work.js";
import { v1Schemas } from "./schemas.js";

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
 * which is how `transport` tells `"http"` from `"local"`. With the server (`low`), the context also
 * carries the client's capabilities and URL-mode elicitation, sent through `extra.sendRequest` /
 * `extra.sendNotification` so they stay related to the request (over HTTP: the same SSE stream);
 * the elicitation's round trip is loaded on its first use (host-work.ts).
 */
export function contextFromV1(extra: V1Extra, low?: Server): HostRequestContext {
  const headers = extra.requestInfo?.headers;
  const context: HostRequestContext = {
    ...(typeof extra.sessionId === "string" ? { sessionId: extra.sessionId } : {}),
    ...(extra.authInfo ? { authInfo: authOf(extra.authInfo) } : {}),
    ...(headers === undefined ? {} : { headers: headers as Record<string, string | string[] | undefined> }),
    transport: extra.requestInfo === undefined ? "local" : "http",
    signal: extra.signal,
    requestId: extra.requestId,
    extra: extra as unknown as HostExtra,
  };
  const token = (extra._meta as { progressToken?: unknown } | undefined)?.progressToken;
  if (typeof token === "string" || typeof token === "number") {
    context.notifyProgress = async (progress, total, message) => {
      await extra.sendNotification({
        method: "notifications/progress",
        params: {
          progressToken: token,
          progress,
          ...(total === undefined ? {} : { total }),
          ...(message === undefined ? {} : { message }),
        },
      } as ServerNotification);
    };
  }
  if (!low) return context;
  const capabilities = low.getClientCapabilities() as HostClientCapabilities | undefined;
  if (capabilities) context.clientCapabilities = capabilities;
  context.elicitUrl = async (request, options) => {
    if (!capabilities?.elicitation?.url) throw noUrlElicitation();
    return (await loadHostWork()).elicitUrlV1(
      extra as never,
      v1Schemas().ElicitResultSchema,
      request,
      options,
    );
  };
  context.notifyElicitationComplete = async (elicitationId) => {
    // The SDK refuses this notification unless the client declared elicitation.url.
    await extra.sendNotification({
      method: "notifications/elicitation/complete",
      params: { elicitationId },
    } as ServerNotification);
  };
  return context;
}
