/**
 * The downstream face of the proxy: a low-level SDK `Server` whose handlers hand every request to the
 * SDK-free {@link ProxyCore} and send its notifications (list changes, resource updates, log
 * messages, progress) to the client. Upstream tools keep their raw JSON Schemas.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { ProxyCore } from "../../proxy/proxy-core.js";
import type { DownstreamSink, JsonObject, RequestContext } from "../../proxy/types.js";

/** Options of {@link createProxyServer}. */
export interface ProxyServerOptions {
  name: string;
  version: string;
  instructions?: string;
  /** Which optional capabilities to announce (from the upstreams'). */
  prompts?: boolean;
  logging?: boolean;
  completions?: boolean;
}

type Extra = {
  signal: AbortSignal;
  sessionId?: string | undefined;
  authInfo?: unknown;
  requestInfo?: unknown;
  sendNotification: (notification: never) => Promise<void>;
};

/**
 * Makes one downstream MCP server (one per session over HTTP) in front of a {@link ProxyCore}.
 *
 * @example
 * ```ts
 * const server = createProxyServer(core, { name: "my-proxy", version: "1.0.0" });
 * await server.connect(new StdioServerTransport());
 * ```
 */
export function createProxyServer(core: ProxyCore, options: ProxyServerOptions): Server {
  const server = new Server(
    { name: options.name, version: options.version },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        ...(options.prompts ? { prompts: { listChanged: true } } : {}),
        ...(options.logging ? { logging: {} } : {}),
        ...(options.completions ? { completions: {} } : {}),
      },
      ...(options.instructions ? { instructions: options.instructions } : {}),
    },
  );
  const sink: DownstreamSink = {
    notify(method, params) {
      if (!server.transport) return;
      void server
        .notification((params === undefined ? { method } : { method, params }) as never)
        .catch(() => undefined);
    },
  };
  const remove = core.addSink(sink);
  const previous = server.onclose;
  server.onclose = () => {
    remove();
    previous?.();
  };

  /** Progress notifications still being sent, per request: the result must not overtake them. */
  const sending = new WeakMap<RequestContext, Promise<unknown>[]>();
  const context = (raw: unknown, params: JsonObject | undefined): RequestContext => {
    const extra = raw as Extra;
    const ctx: RequestContext = {
      extra: {
        sessionId: extra.sessionId,
        authInfo: extra.authInfo as never,
        requestInfo: extra.requestInfo as never,
      },
      signal: extra.signal,
      sink,
    };
    const token = (params?._meta as JsonObject | undefined)?.progressToken;
    if (token !== undefined) {
      ctx.progress = (update) => {
        void extra
          .sendNotification({
            method: "notifications/progress",
            params: { ...update, progressToken: token },
          } as never)
          .catch(() => undefined);
      };
    }
    sink.scope ??= core.scopeOf(ctx);
    return ctx;
  };
  const params = (request: unknown): JsonObject =>
    ((request as { params?: JsonObject }).params ?? {}) as JsonObject;

  server.setRequestHandler(
    ListToolsRequestSchema,
    async (request, extra) => (await core.listTools(context(extra, params(request)))) as never,
  );
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const p = params(request);
    const ctx = context(extra, p);
    const result = await core.callTool(p, ctx);
    await Promise.allSettled(sending.get(ctx) ?? []);
    return result as never;
  });
  server.setRequestHandler(
    ListResourcesRequestSchema,
    async (request, extra) =>
      (await core.listResources(params(request), context(extra, params(request)))) as never,
  );
  server.setRequestHandler(
    ListResourceTemplatesRequestSchema,
    async (request, extra) => (await core.listResourceTemplates(context(extra, params(request)))) as never,
  );
  server.setRequestHandler(
    ReadResourceRequestSchema,
    async (request, extra) =>
      (await core.readResource(params(request), context(extra, params(request)))) as never,
  );
  server.setRequestHandler(
    SubscribeRequestSchema,
    async (request, extra) =>
      (await core.subscribe(params(request), context(extra, params(request)))) as never,
  );
  server.setRequestHandler(
    UnsubscribeRequestSchema,
    async (request, extra) =>
      (await core.subscribe(params(request), context(extra, params(request)), true)) as never,
  );
  if (options.prompts) {
    server.setRequestHandler(ListPromptsRequestSchema, async () => (await core.listPrompts()) as never);
    server.setRequestHandler(
      GetPromptRequestSchema,
      async (request, extra) =>
        (await core.getPrompt(params(request), context(extra, params(request)))) as never,
    );
  }
  if (options.completions) {
    server.setRequestHandler(
      CompleteRequestSchema,
      async (request, extra) =>
        (await core.complete(params(request), context(extra, params(request)))) as never,
    );
  }
  if (options.logging) {
    server.setRequestHandler(
      SetLevelRequestSchema,
      async (request, extra) =>
        (await core.setLoggingLevel(params(request), context(extra, params(request)))) as never,
    );
  }
  return server;
}
