import type * as z from "zod/v4";
import type { HostFilesParams, HostFilesResult } from "./host-files.js";
import type {
  CallToolResult,
  CompleteParams,
  CompleteResult,
  CompletionReference,
  EmptyResult,
  ListResourcesResult,
  ListResourceTemplatesResult,
  ReadResourceResult,
} from "./types.js";

/**
 * The host port: the few things the pieces need from an MCP server, whatever SDK generation runs it.
 * Pieces (`ResourceRegistry`, `UploadHandleResolver`, …) talk only to this; `src/mcp/v1/` adapts an
 * SDK v1 `McpServer` or low-level `Server` to it, and an SDK v2 adapter or the proxy plugs in the
 * same way (see docs/architecture.md). Get one with {@link toHost}; a host can also be passed to
 * the pieces instead of a server.
 */

export { HOST_FILES_METHODS, type HostFilesParams, type HostFilesResult } from "./host-files.js";

/**
 * Marks an object as an {@link McpHost}, so `toHost` passes it through (a custom host, such as a
 * proxy's, sets it to `true`).
 *
 * @example
 * ```ts
 * const host = { [MCP_HOST]: true, kind: "proxy", ... } satisfies McpHost;
 * ```
 */
export const MCP_HOST = Symbol.for("mcp-file-bridge.host");

/**
 * The caller's verified auth info, as the transport's authentication put it on the request.
 *
 * @example
 * ```ts
 * const auth: HostAuthInfo = { token: "…", clientId: "app-1", scopes: ["files"], subject: "user-7" };
 * ```
 */
export interface HostAuthInfo {
  /** The access token. */
  token?: string;
  /** The OAuth client (the application, not the user). */
  clientId?: string;
  /** Granted scopes. */
  scopes?: string[];
  /** When the token expires, seconds since the epoch. */
  expiresAt?: number;
  /**
   * The authenticated user, when the verifier says who it is: SDK v1 has no field for it, so the
   * v1 adapter takes a string `extra.sub` (the JWT claim name) or `extra.subject`.
   */
  subject?: string;
  /** Whatever else the verifier attached. */
  extra?: Record<string, unknown>;
}

/**
 * What a request handler or tool handler is told about the request, the same for every SDK
 * generation.
 *
 * @example
 * ```ts
 * host.handle("resources/list", async (params, ctx) => {
 *   if (ctx.transport === "http" && !ctx.sessionId && !ctx.authInfo?.subject) throw forbidden();
 *   return { resources: [] };
 * });
 * ```
 */
export interface HostRequestContext {
  /** The session id of a stateful connection (SDK v1 Streamable HTTP); absent on stdio, in-process and stateless servers. */
  sessionId?: string;
  /** Verified auth info, when the transport authenticated the caller. */
  authInfo?: HostAuthInfo;
  /** The HTTP request headers, when the request came over HTTP. */
  headers?: Record<string, string | string[] | undefined>;
  /**
   * `"http"` when the request came over an HTTP transport (several callers may share the server),
   * `"local"` for stdio and in-process transports (one caller per connection).
   */
  transport: "http" | "local";
  /** Aborted when the client cancels the request or the connection closes. */
  signal: AbortSignal;
  /** The JSON-RPC id of the request. */
  requestId?: string | number;
  /**
   * The SDK's own request context, unchanged (v1: the handler's `extra`). The pieces hand it to the
   * user's callbacks (`scope`, `authorize`, `downloadClaims`), which were written against it.
   */
  extra: HostExtra;
  /**
   * What the client declared at `initialize`, when the adapter knows it (SDK v1: always).
   * @default undefined (unknown: treat every optional client feature as absent)
   */
  clientCapabilities?: HostClientCapabilities;
  /**
   * Asks the client to open a URL (`elicitation/create`, `mode: "url"`, MCP 2025-11-25), related to
   * this request, and resolves with the person's answer. Only when the client declared
   * `elicitation.url`. Under the 2026-07-28 protocol an adapter ends the round here with an
   * `input_required` result and answers on the client's retry (see docs/architecture.md).
   * @default undefined (the adapter cannot ask)
   */
  elicitUrl?(request: HostUrlElicitation, options?: { timeoutMs?: number }): Promise<HostElicitationAnswer>;
  /**
   * Tells the client the out-of-band work of a URL elicitation finished
   * (`notifications/elicitation/complete`).
   * @default undefined (the adapter cannot notify)
   */
  notifyElicitationComplete?(elicitationId: string): Promise<void>;
  /**
   * Under the 2026-07-28 protocol, on the client's retry of a request whose first round ended with
   * `input_required`: the client's answers to the URL elicitations that round asked for, by
   * `elicitationId` (only ids the adapter verified it issued for this request). SDK v1 never sets it.
   * @default undefined (not a retry)
   */
  elicitationAnswers?: ReadonlyMap<string, HostElicitationAnswer>;
  /**
   * Under the 2026-07-28 protocol, on a retry whose `elicitationAnswers` accepted `elicitationId`: the
   * result that ends this round with an `input_required` carrying only a request state, so the client
   * retries at once and the next call sees the same accepted answer (a wait spread over calls, each
   * shorter than the client's request timeout). The tool returns it.
   * @default undefined (no such rounds: SDK v1, the 2025 era)
   */
  waitAgain?(elicitationId: string): Record<string, unknown>;
  /**
   * Sends `notifications/progress` related to this request, when the client asked for progress
   * (its request carried `_meta.progressToken`); `progress` must grow from call to call.
   * @default undefined (the client asked for no progress, or the adapter cannot send it)
   */
  notifyProgress?(progress: number, total?: number, message?: string): Promise<void>;
}

/**
 * The client capabilities a piece may look at (the `initialize` request's `capabilities`).
 *
 * @example
 * ```ts
 * const canOpenUrls = Boolean(ctx.clientCapabilities?.elicitation?.url);
 * ```
 */
export interface HostClientCapabilities {
  [key: string]: unknown;
  elicitation?: { [key: string]: unknown; form?: object; url?: object };
}

/**
 * A URL-mode elicitation (MCP 2025-11-25 `elicitation/create` params with `mode: "url"`).
 *
 * @example
 * ```ts
 * const request: HostUrlElicitation = { mode: "url", message: "Upload the contract", url, elicitationId: id };
 * ```
 */
export interface HostUrlElicitation {
  [key: string]: unknown;
  mode: "url";
  /** Why the person should open the link. */
  message: string;
  /** The URL to open. */
  url: string;
  /** Names this elicitation in `notifications/elicitation/complete`. */
  elicitationId: string;
}

/**
 * The client's answer to an elicitation: the person agreed (`accept`), said no (`decline`) or
 * dismissed it (`cancel`).
 *
 * @example
 * ```ts
 * const answer: HostElicitationAnswer = await ctx.elicitUrl!(request);
 * if (answer.action !== "accept") return declined();
 * ```
 */
export interface HostElicitationAnswer {
  [key: string]: unknown;
  action: "accept" | "decline" | "cancel";
}

/**
 * A fixed resource a piece registers (the MCP App upload widget's `ui://` resource): listed in
 * `resources/list` and answered by `resources/read`, beside whatever else serves resources.
 *
 * @example
 * ```ts
 * host.registerResource?.({
 *   uri: "ui://files/upload.html",
 *   name: "upload-widget",
 *   mimeType: "text/html;profile=mcp-app",
 *   read: async () => ({ contents: [{ uri: "ui://files/upload.html", text: "<!doctype html>…" }] }),
 * });
 * ```
 */
export interface HostResource {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  _meta?: Record<string, unknown>;
  /** Answers `resources/read` for `uri`. */
  read(ctx: HostRequestContext): Promise<ReadResourceResult>;
}

/**
 * A registered fixed resource.
 *
 * @example
 * ```ts
 * const handle: HostResourceHandle = host.registerResource!(widget);
 * handle.remove(); // gone from resources/list and resources/read
 * ```
 */
export interface HostResourceHandle {
  remove(): void;
}

/**
 * The SDK request context as user callbacks see it: at least the fields a scope can come from
 * (`sessionId`, `authInfo`, `requestInfo.headers`), plus whatever else the SDK puts there.
 *
 * @example
 * ```ts
 * const scope = defaultScope(extra as ScopeSource); // the documented rule, over any SDK's extra
 * ```
 */
export interface HostExtra {
  [key: string]: unknown;
  sessionId?: string | undefined;
  authInfo?: { clientId?: string | undefined; extra?: Record<string, unknown> | undefined } | undefined;
  requestInfo?: { headers?: Record<string, string | string[] | undefined> } | undefined;
}

/**
 * The request methods a piece can mount, with their params and results.
 *
 * @example
 * ```ts
 * type ReadParams = HostMethods["resources/read"]["params"]; // { uri: string }
 * ```
 */
export interface HostMethods {
  "resources/list": { params: { cursor?: string }; result: ListResourcesResult };
  "resources/templates/list": { params: { cursor?: string }; result: ListResourceTemplatesResult };
  "resources/read": { params: { uri: string }; result: ReadResourceResult };
  "resources/subscribe": { params: { uri: string }; result: EmptyResult };
  "resources/unsubscribe": { params: { uri: string }; result: EmptyResult };
  "files/authorizeUpload": { params: HostFilesParams; result: HostFilesResult };
  "files/authorizeDownload": { params: HostFilesParams; result: HostFilesResult };
  "files/prepareUpload": { params: HostFilesParams; result: HostFilesResult };
  "files/completeUpload": { params: HostFilesParams; result: HostFilesResult };
  "files/getDownload": { params: HostFilesParams; result: HostFilesResult };
}

/**
 * A method name of {@link HostMethods}.
 *
 * @example
 * ```ts
 * const method: HostMethod = "resources/read";
 * ```
 */
export type HostMethod = keyof HostMethods;

/**
 * A request handler: the request's params (validated by the adapter) and its context. What it
 * throws goes back as a JSON-RPC error: errors with an integer `code` as they are, a
 * `FileBridgeError` as `-32602` (with its code in `data`), anything else as `-32603`.
 *
 * @example
 * ```ts
 * const read: HostRequestHandler<"resources/read"> = async ({ uri }) => ({ contents: [{ uri, text: "hi" }] });
 * ```
 */
export type HostRequestHandler<M extends HostMethod> = (
  params: HostMethods[M]["params"],
  ctx: HostRequestContext,
) => Promise<HostMethods[M]["result"]>;

/**
 * Answers `completion/complete` for some references (the registry: its resource templates), next
 * to whatever else the server completes (an `McpServer`'s prompts).
 *
 * @example
 * ```ts
 * host.addCompletion({
 *   handles: (ref) => ref.type === "ref/resource" && ref.uri === "file://uploads/{scope}/{+path}",
 *   complete: async ({ argument }) => ({ completion: { values: [argument.value], hasMore: false } }),
 * });
 * ```
 */
export interface HostCompletionProvider {
  /** Whether this provider answers for `ref`; decided from the reference alone, before dispatch. */
  handles(ref: CompletionReference): boolean;
  complete(params: CompleteParams, ctx: HostRequestContext): Promise<CompleteResult>;
}

/**
 * A tool to register: name, description, schemas and handler.
 *
 * @example
 * ```ts
 * host.registerTool({
 *   name: "echo",
 *   description: "Echoes its text",
 *   inputSchema: { text: z.string() },
 *   handler: async (args) => ({ content: [{ type: "text", text: String(args.text) }] }),
 * });
 * ```
 */
export interface HostTool {
  name: string;
  title?: string;
  description?: string;
  /** A zod (v4) object schema or its raw shape. @default no arguments */
  inputSchema?: z.ZodRawShape | z.ZodObject;
  /** A zod (v4) object schema or raw shape for `structuredContent`. @default none */
  outputSchema?: z.ZodRawShape | z.ZodObject;
  annotations?: {
    title?: string;
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
  _meta?: Record<string, unknown>;
  /** Runs the tool with the validated arguments. */
  handler(args: Record<string, unknown>, ctx: HostRequestContext): Promise<CallToolResult>;
}

/**
 * Rewrites the tools of one `tools/list` answer for the client that asked (its request context says
 * who: `ctx.clientCapabilities` is that request's own on 2026-07-28). Gets the listed tools (JSON, as
 * the server would send them) and returns the ones to send; must not change the ones it got.
 *
 * @example
 * ```ts
 * const rewrite: HostToolsRewrite = (tools, ctx) =>
 *   ctx.clientCapabilities?.experimental ? tools : tools.filter((tool) => tool.name !== "beta");
 * ```
 */
export type HostToolsRewrite = (
  tools: ReadonlyArray<Record<string, unknown>>,
  ctx: HostRequestContext,
) => Array<Record<string, unknown>>;

/**
 * A registered tool, to switch it off or remove it (SDK v1 and v2 `RegisteredTool`s have these).
 *
 * @example
 * ```ts
 * const tool: HostToolHandle = uploads.attach(server);
 * tool.disable(); // hidden from tools/list until enable()
 * ```
 */
export interface HostToolHandle {
  enabled: boolean;
  enable(): void;
  disable(): void;
  remove(): void;
}

/**
 * Capabilities a piece declares (merged with the server's own).
 *
 * @example
 * ```ts
 * host.declareCapabilities({ resources: { subscribe: true, listChanged: true }, completions: {} });
 * ```
 */
export interface HostCapabilities {
  resources?: { subscribe?: boolean; listChanged?: boolean };
  completions?: Record<string, never>;
  /** Extension capabilities by extension id (`"io.modelcontextprotocol/files"`); both SDK generations keep this key. */
  extensions?: Record<string, Record<string, unknown>>;
}

/**
 * The host port. One instance per server (`toHost` returns the same object for an `McpServer` and
 * its low-level `server`). Mount everything before the server connects.
 *
 * @example
 * ```ts
 * const host = toHost(server); // an SDK v1 McpServer
 * host.declareCapabilities({ resources: { listChanged: true } });
 * host.handle("resources/list", async () => ({ resources: [] }));
 * host.onClose(() => console.log("connection closed"));
 * ```
 */
export interface McpHost {
  readonly [MCP_HOST]: true;
  /** Which adapter this is (`"sdk-v1"`; later `"sdk-v2"`, `"proxy"`). */
  readonly kind: string;
  /** The server object this host stands for; the identity pieces key their per-server state by. */
  readonly server: object;
  /** Whether `registerTool` works (a low-level `Server` has no tool registry). */
  readonly supportsTools: boolean;
  /** Whether nothing handles `method` yet. */
  canHandle(method: HostMethod | "completion/complete"): boolean;
  /** Mounts a request handler. Throws when `method` is already handled. */
  handle<M extends HostMethod>(method: M, handler: HostRequestHandler<M>): void;
  /** Adds a completion provider, composed with the server's own completions (prompts). */
  addCompletion(provider: HostCompletionProvider): void;
  /** Declares capabilities; only before the server connects. */
  declareCapabilities(capabilities: HostCapabilities): void;
  /** Registers a tool. Throws `INVALID_INPUT` when `supportsTools` is false. */
  registerTool(tool: HostTool): HostToolHandle;
  /** Whether the server is connected to a transport now. */
  isConnected(): boolean;
  /** The session id of the current connection (stateful Streamable HTTP), if any. */
  connectionSessionId(): string | undefined;
  /** Calls `listener` whenever the server's connection closes; returns a function that stops it. */
  onClose(listener: () => void): () => void;
  /** Sends `notifications/resources/list_changed` on the current connection. */
  notifyResourceListChanged(): Promise<void>;
  /** Sends `notifications/resources/updated` for `uri` on the current connection. */
  notifyResourceUpdated(uri: string): Promise<void>;
  /**
   * Registers a fixed resource, composed with the other resource handlers (a `ResourceRegistry`
   * attached before or after lists and reads it too). Before the server connects. Throws
   * `INVALID_INPUT` when the URI is taken.
   * @default undefined (the host cannot register fixed resources)
   */
  registerResource?(resource: HostResource): HostResourceHandle;
  /**
   * The port's context for an SDK request context a callback got outside the port (the `extra` of
   * a tool registered on the server directly), so a piece can, e.g., ask the client to open a URL.
   * @default undefined (the host only gives contexts to the handlers mounted through it)
   */
  requestContext?(extra: unknown): HostRequestContext;
  /**
   * The server's own `name` and `title` (what it announces in `initialize`), so a piece can say which
   * server asks, e.g. on the upload page.
   * @default undefined (the host does not know them)
   */
  serverInfo?(): { name: string; title?: string } | undefined;
  /**
   * Adds a rewrite of the server's `tools/list` answers, per request (after the tools were listed,
   * before they are sent): how a piece shows one client a schema tailored to what it reads. Rewrites
   * run in the order they were added; tools registered before or after this call are all rewritten.
   * @default undefined (the host cannot rewrite listings; SDK v2 hosts can)
   */
  rewriteListedTools?(rewrite: HostToolsRewrite): void;
}

/**
 * An SDK `McpServer`, structurally: what `toHost` needs to recognize one without importing the SDK.
 *
 * @example
 * ```ts
 * const like: McpServerLike = new McpServer({ name: "files", version: "1.0.0" });
 * ```
 */
export interface McpServerLike {
  readonly server: object;
  registerTool: (...args: never[]) => unknown;
}

/**
 * An SDK low-level `Server`, structurally.
 *
 * @example
 * ```ts
 * const like: LowLevelServerLike = new Server({ name: "files", version: "1.0.0" }, { capabilities: {} });
 * ```
 */
export interface LowLevelServerLike {
  setRequestHandler: (...args: never[]) => unknown;
}

/**
 * What the pieces' `attach()` accepts: an SDK `McpServer`, a low-level `Server`, or a host port.
 *
 * @example
 * ```ts
 * const target: HostInput = server; // McpServer, Server, or toHost(server)
 * registry.attach(target);
 * ```
 */
export type HostInput = McpHost | McpServerLike | LowLevelServerLike;

/**
 * Whether `value` is a host port object.
 *
 * @example
 * ```ts
 * isMcpHost(toHost(server)); // true
 * isMcpHost(server); // false
 * ```
 */
export function isMcpHost(value: unknown): value is McpHost {
  return (
    typeof value === "object" && value !== null && (value as { [MCP_HOST]?: unknown })[MCP_HOST] === true
  );
}
