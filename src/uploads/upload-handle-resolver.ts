import type { DescriptorAnswerer } from "../bridge/file-descriptors.js";
import { storedFileSource } from "../bridge/stored-file-source.js";
import type { FileSourceResolver } from "../bridge/types.js";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { defaultTmpDir } from "../internal/default-tmp-dir.js";
import type { Duration } from "../internal/duration.js";
import { firstUse } from "../internal/first-use.js";
import { DEFAULT_MAX_FILES_PER_CALL } from "../internal/limits.js";
import type { HostInput, HostRequestContext, HostToolHandle, McpHost, McpServerLike } from "../mcp/host.js";
import { toHost } from "../mcp/to-host.js";
import { assertScope, type ScopeFunction, type ScopeSource } from "../scope/scope.js";
import { type ScopeRefs, scopeRefsOf } from "../scope/scope-refs.js";
import type { UrlSigner } from "../signing/types.js";
import type { FileStore, StateStore, StoredFile } from "../storage/types.js";
import { awaitUploadTool } from "./await-upload.js";
import { DirectUploadStrategy } from "./direct-upload.js";
import type { FilesExtensionOptions } from "./files-extension.js";
import { FilesExtension } from "./files-extension.js";
import { askerName, FileRequests } from "./request-files.js";
import type { FileRequestOutcome, RequestFilesCallOptions } from "./request-files-flow.js";
import { loadRequestFilesFlow } from "./request-files-later.js";
import { checkToolName, resolverSettings, uploadWaitMs } from "./resolver-settings.js";
import { type TicketAsk, ticketAskClaims } from "./ticket-ask.js";
import type {
  RewrittenArgs,
  UploadAttachOptions,
  UploadHandleResolverOptions,
  UploadTicket,
  UploadTicketRateLimitInfo,
} from "./types.js";
import {
  formatUploadHandle,
  parseUploadHandle,
  UPLOAD_HANDLE_PREFIX,
  UPLOAD_PAGE_CLAIMS,
} from "./upload-handle.js";
import type { UploadStatus } from "./upload-status.js";
import { checkUploadTool, statusToolName } from "./upload-status-tool.js";
import { attachedHandle, registerUploadWidget, uploadUrlTool } from "./upload-url-tool.js";
import { uploadWidgetToolMeta } from "./widget-meta.js";

export type { TicketAsk } from "./ticket-ask.js";
export type {
  RewrittenArgs,
  UploadAttachOptions,
  UploadHandleResolverOptions,
  UploadTicket,
  UploadTicketRateLimitInfo,
  UploadToolWidget,
} from "./types.js";
export type { UploadStatus } from "./upload-status.js";

/** What only the async paths run (`resolver-later.ts`), loaded on first use (issue 39). */
const loadLater = firstUse(() => import("./resolver-later.js"));

/**
 * Out-of-band uploads for MCP tools. Registers a `get_upload_url` tool that hands the client a
 * short-lived, single-use upload URL bound to the calling scope; the bytes go over plain HTTP to
 * the routes of `createFileRoutes()`, never through the model. The upload answers with
 * `upload://sessions/{scopeRef}/{id}` handles (the scope's opaque reference, never the scope), which any `withFiles` tool then accepts (through
 * {@link UploadHandleResolver.fileSourceResolver}) and which resolve only in their own scope.
 *
 * @example
 * ```ts
 * const state = memoryState();
 * const minter = new SignedUrlMinter({ secret, baseUrl: "https://mcp.example.com", state });
 * const uploads = new UploadHandleResolver({ store, minter, state, bridge });
 * uploads.attach(server); // registers get_upload_url
 * // routes: createFileRoutes({ store, minter, state })
 * ```
 */
export class UploadHandleResolver {
  /** Name of the tool {@link attach} registers. */
  readonly toolName: string;
  /** Size cap per file, in bytes. */
  readonly maxBytes: number;
  /** Most files per upload. */
  readonly maxFiles: number;

  readonly #store: FileStore;
  readonly #minter: Pick<UrlSigner, "mint" | "scopeRefs" | "now">;
  /** The minter's clock: tickets expire by it (a pending handle turns unknown then). */
  readonly #now = (): number => this.#minter.now?.() ?? Date.now();
  readonly #refs: ScopeRefs;
  readonly #state: StateStore;
  readonly #ttl: Duration;
  readonly #handleTtlSeconds: number;
  readonly #singleUse: boolean;
  readonly #scope: ScopeFunction;
  readonly #tmpDirOption: string | undefined;
  /** The temp folder, worked out on first use (a runtime without a disk never asks for it). */
  get #tmpDir(): string {
    return this.#tmpDirOption ?? defaultTmpDir();
  }
  readonly #bridge: UploadHandleResolverOptions["bridge"];
  readonly #rateLimit: ((info: UploadTicketRateLimitInfo) => boolean | Promise<boolean>) | undefined;
  readonly #requests: FileRequests;
  /** The upload tool's name once it was attached with the MCP App widget (the ladder's widget rung). */
  #widgetTool: string | undefined;
  readonly #serverName: string | undefined;
  /** The status tool's name once attached (named in `UPLOAD_PENDING`'s advice). */
  #statusToolName: string | undefined;
  /** Direct-to-storage uploads, once attached with `files: { direct }`: their URIs commit on first resolve. */
  #direct: DirectUploadStrategy | undefined;

  constructor(options: UploadHandleResolverOptions) {
    const settings = resolverSettings(options);
    const { store, minter, state } = options;
    this.toolName = settings.toolName;
    this.maxBytes = settings.maxBytes;
    this.maxFiles = settings.maxFiles;
    this.#ttl = settings.ttl;
    this.#handleTtlSeconds = settings.handleTtlSeconds;
    this.#serverName = settings.serverName;
    this.#singleUse = settings.singleUse;
    this.#scope = settings.scope;
    this.#tmpDirOption = settings.tmpDir;
    this.#rateLimit = settings.rateLimit;
    this.#store = store;
    this.#minter = minter;
    this.#refs = scopeRefsOf(minter);
    this.#state = state;
    this.#requests = new FileRequests({
      store,
      state,
      minter,
      ttl: this.#ttl,
      handleTtl: settings.handleTtlMs,
      maxBytes: this.maxBytes,
      maxFiles: this.maxFiles,
      ...settings.fileRequests,
      allowTicket: (scope, tool) => this.assertTicketAllowed(scope, tool),
    });
    options.bridge?.addResolver(this.fileSourceResolver());
    this.#bridge = options.bridge;
  }

  /**
   * Mints an upload ticket for a scope: a single-use (by default) upload URL carrying the size and
   * count caps, and the handle the upload will answer to. What it asks for (`message`, `accept`,
   * `maxFiles` up to the resolver's) is shown by the upload page. Until the upload commits (or the
   * ticket expires) the handle answers `UPLOAD_PENDING` and {@link statusOf} says `pending`.
   * Fails with `INVALID_INPUT` for a bad `message`, `accept` or `maxFiles`.
   *
   * @example
   * ```ts
   * const ticket = await uploads.createTicket("session-1", { message: "The sales CSV", accept: [".csv"], maxFiles: 1 });
   * console.log(ticket.curl); // curl -F 'file=@/path/to/file' 'https://…/files/upload/eyJ…'
   * ```
   */
  async createTicket(
    scope: string,
    options: { filename?: string; serverName?: string } & TicketAsk = {},
  ): Promise<UploadTicket> {
    assertScope(scope);
    const asked = ticketAskClaims(options, this.maxFiles);
    const claims = { ...asked.claims, ...this.#askerClaim(options.serverName) };
    const work = {
      minter: this.#minter,
      state: this.#state,
      refs: this.#refs,
      ttl: this.#ttl,
      singleUse: this.#singleUse,
      maxBytes: this.maxBytes,
      handleTtlSeconds: this.#handleTtlSeconds,
    };
    return (await loadLater()).mintTicket(
      work,
      scope,
      { maxFiles: asked.maxFiles, claims },
      options.filename,
    );
  }

  /**
   * Registers the upload-URL tool on an `McpServer` (or a host port, see `toHost`) and returns the
   * registered tool (`enable()`, `disable()`, `remove()`). The ticket is bound to the calling scope.
   *
   * @example
   * ```ts
   * const server = new McpServer({ name: "converter", version: "1.0.0" });
   * uploads.attach(server);
   * ```
   */
  attach(server: McpServerLike | McpHost, options: UploadAttachOptions = {}): HostToolHandle {
    const host = toHost(server);
    if (!host.supportsTools) throw new FileBridgeError("INVALID_INPUT", "attach() needs an McpServer");
    const resource = registerUploadWidget(host, options?.widget, this.toolName);
    const files = options?.files ? this.#filesExtension(options.files) : undefined;
    const statusName = statusToolName(options?.statusTool);
    let tool: HostToolHandle | undefined;
    let status: HostToolHandle | undefined;
    try {
      this.#statusToolName = statusName;
      tool = host.registerTool(
        uploadUrlTool(host, {
          name: this.toolName,
          statusName,
          meta: options?.widget === undefined ? undefined : uploadWidgetToolMeta(options.widget.uri),
          scope: this.#scope,
          assertTicketAllowed: (scope, name) => this.assertTicketAllowed(scope, name),
          createTicket: (scope, asked) => this.createTicket(scope, asked),
        }),
      );
      if (statusName !== undefined) {
        status = host.registerTool(
          checkUploadTool(statusName, this.toolName, async (handle, ctx) => {
            const status = await this.statusOf(handle, { scope: this.#scope(ctx.extra as ScopeSource) });
            return (await loadLater()).uploadStatusResult(status);
          }),
        );
      }
      files?.mount(host);
    } catch (error) {
      resource?.remove();
      tool?.remove();
      status?.remove();
      throw error;
    }
    if (resource) this.#widgetTool = this.toolName;
    return attachedHandle(tool, status, resource);
  }

  /**
   * Where an upload handle stands in the caller's scope: `pending` (its link is live and nothing
   * arrived), `receiving` (a resumable upload's bytes so far), `ready` (the files), or `unknown`
   * (expired, never issued, malformed or another scope's — one answer for all, nothing leaks). What
   * the `check_upload` tool answers; cheap (no waiting).
   *
   * @example
   * ```ts
   * const status = await uploads.statusOf(ticket.handle, { scope });
   * if (status.status === "receiving") console.log(`${status.received} of ${status.length} bytes`);
   * ```
   */
  async statusOf(handle: string, options: { scope: string }): Promise<UploadStatus> {
    assertScope(options?.scope);
    return (await loadLater()).uploadStatusOf(
      {
        state: this.#state,
        refs: this.#refs,
        filesFor: this.filesFor.bind(this),
        handleFor: this.handleFor.bind(this),
        now: this.#now,
      },
      handle,
      options.scope,
    );
  }

  /** `UPLOAD_PENDING` when `handle` is unresolved only because its upload has not finished. */
  async #throwIfPending(handle: string, scope: string): Promise<void> {
    return (await loadLater()).throwIfPending(
      { state: this.#state, refs: this.#refs, now: this.#now },
      handle,
      scope,
      this.#statusToolName,
    );
  }

  /**
   * Asks the person in the chat for files, from inside a tool call, and waits for them: mints a
   * single-use upload link bound to the caller's scope, asks the client to open its upload page
   * (`elicitation/create` in URL mode, MCP 2025-11-25), waits — bounded and cancellable — for the
   * upload to commit, tells the client it is done (`notifications/elicitation/complete`) and returns
   * the stored files. A client without URL elicitation gets `status: "upload_required"` with a tool
   * result that carries the link for the model to pass on (not the -32042 error, which such a
   * client does not understand either). Under the 2026-07-28 protocol the adapter turns the ask into
   * an `input_required` round; the tool code stays the same. Pass the server the tool is registered
   * on and the `extra` its callback got (or a host port and its request context). Fails only with
   * `ABORTED` (the call was cancelled) or `INVALID_INPUT` (bad options).
   *
   * @example
   * ```ts
   * server.registerTool("review_contract", { description: "Reviews a contract" }, async (extra) => {
   *   const outcome = await uploads.requestFiles(server, extra, { message: "Upload the contract (PDF)", accept: [".pdf"], maxFiles: 1 });
   *   if (outcome.status !== "uploaded") return outcome.result; // the link as text, declined, timeout
   *   const [contract] = outcome.files;
   *   return { content: [{ type: "text", text: `Got ${contract.name} (${contract.size} bytes)` }] };
   * });
   * ```
   */
  async requestFiles(
    server: HostInput,
    extra: unknown,
    options: RequestFilesCallOptions,
  ): Promise<FileRequestOutcome> {
    const host = isHostRequestContext(extra) ? undefined : toHost(server, "requestFiles()");
    const ctx = host === undefined ? (extra as HostRequestContext) : requestContextOf(host, extra);
    const scope = this.#scope(ctx.extra as ScopeSource);
    const info = host?.serverInfo?.();
    const asker = this.#askerClaim(info?.title ?? info?.name)[UPLOAD_PAGE_CLAIMS.server];
    const asked =
      options.serverName === undefined && asker !== undefined ? { ...options, serverName: asker } : options;
    const { requestFilesThrough } = await loadRequestFilesFlow();
    return requestFilesThrough(this.#requests, ctx, scope, asked, { widgetTool: this.#widgetTool });
  }

  /**
   * Registers `await_upload` (or `name`): the model's poll path for a pending upload. It waits up to
   * `wait_seconds` (at most 55, below the SDKs' 60 s request timeout) for the upload of a
   * `request_id` from {@link requestFiles}, sends MCP progress while the bytes of a resumable (tus)
   * upload arrive, and answers the files, `status: "pending"` with the bytes so far, or
   * `TOKEN_EXPIRED` once the link expired. Requests of other scopes are unknown.
   *
   * @example
   * ```ts
   * uploads.attachAwaitTool(server); // the model calls await_upload { request_id } until uploaded
   * ```
   */
  attachAwaitTool(server: McpServerLike | McpHost, options: { name?: string } = {}): HostToolHandle {
    const host = toHost(server);
    if (!host.supportsTools)
      throw new FileBridgeError("INVALID_INPUT", "attachAwaitTool() needs an McpServer");
    const name = checkToolName(options.name ?? "await_upload", "name");
    return host.registerTool(
      awaitUploadTool(name, this.#requests, (ctx) => this.#scope(ctx.extra as ScopeSource)),
    );
  }

  /**
   * The {@link FileRequests} behind {@link requestFiles}, for a flow of your own (a later call that
   * checks a fallback link with `filesOf`, or `waitFor`).
   *
   * @example
   * ```ts
   * const files = await uploads.fileRequests.filesOf(scope, args.request_id);
   * ```
   */
  get fileRequests(): FileRequests {
    return this.#requests;
  }

  #filesExtension(options: true | FilesExtensionOptions): FilesExtension {
    const direct = options === true ? undefined : options.direct;
    const strategy = direct
      ? new DirectUploadStrategy(
          { store: this.#store, state: this.#state, refs: this.#refs },
          direct === true ? {} : direct,
        )
      : undefined;
    const extension = new FilesExtension(
      {
        minter: this.#minter as Pick<UrlSigner, "mint" | "downloadUrl" | "scopeRefs">,
        scope: this.#scope,
        maxBytes: this.maxBytes,
        ticketTtl: this.#ttl,
        handleTtlSeconds: this.#handleTtlSeconds,
        filesFor: this.filesFor.bind(this),
        refs: this.#refs,
        direct: strategy,
        allowTicket: (scope, method) => this.assertTicketAllowed(scope, method),
      },
      options === true ? {} : options,
    );
    this.#direct ??= strategy;
    // The revision Claude Code ships: descriptor calls of the bridge's withFiles tools.
    this.#bridge?.answerDescriptors?.(this.descriptorAnswerer(options === true ? {} : options));
    return extension;
  }

  /**
   * What answers calls that carry file descriptors (the files extension revision Claude Code ships)
   * on this resolver's tickets: `upload_required` with one signed single-use PUT target per file and
   * a `requestState` used once, then each descriptor as the upload handle of its checked bytes.
   * `attach(server, { files })` installs one on the resolver's bridge; the proxy's upload consumers
   * ask one too.
   *
   * @example
   * ```ts
   * const answered = await answerDescriptors(values, uploads.descriptorAnswerer(), { scope, extra });
   * ```
   */
  descriptorAnswerer(
    options: Pick<FilesExtensionOptions, "maxSize" | "uploadWait"> = {},
  ): DescriptorAnswerer {
    const deps = {
      minter: this.#minter,
      state: this.#state,
      maxSize: options.maxSize ?? this.maxBytes,
      roundWaitMs: uploadWaitMs(options.uploadWait),
      ticketTtl: this.#ttl,
      handleTtlSeconds: this.#handleTtlSeconds,
      filesFor: this.filesFor.bind(this),
      refs: this.#refs,
      allowTicket: (scope: string, tool: string) => this.assertTicketAllowed(scope, tool),
    };
    // `UploadRequired` (the rounds' code) loads with the first call that carries descriptors.
    const answerer = firstUse(async () => new (await loadLater()).UploadRequired(deps));
    return { answer: async (call) => (await answerer()).answer(call) };
  }

  /** The page's "which server asks" claim: the configured name, else `fallback` (the server's own). */
  #askerClaim(fallback: string | undefined): Record<string, string> {
    const asker = this.#serverName ?? askerName(fallback);
    return asker === undefined ? {} : { [UPLOAD_PAGE_CLAIMS.server]: asker };
  }

  /**
   * Asks the `rateLimit` whether `scope` may mint one more upload ticket; every ticket minter of the
   * package asks before minting (the upload-URL tool, `files/authorizeUpload` and
   * `files/prepareUpload`, file requests, the proxy's upload tool). Throws `RATE_LIMITED` when
   * refused; a `FileBridgeError` the hook throws keeps its code, any other throw is `STORAGE_ERROR`.
   * Without a `rateLimit` it allows everything.
   *
   * @example
   * ```ts
   * await uploads.assertTicketAllowed(scope, "my_upload_tool");
   * const ticket = await uploads.createTicket(scope);
   * ```
   */
  async assertTicketAllowed(scope: string, tool: string): Promise<void> {
    if (!this.#rateLimit) return;
    return (await loadLater()).askRateLimit(this.#rateLimit, scope, tool);
  }

  /**
   * The handle of a stored file: `upload://sessions/{scopeRef}/{id}`, with the scope's opaque
   * reference (`scopeRef(file.scope)`), never the scope itself.
   *
   * @example
   * ```ts
   * const handle = uploads.handleFor(file); // "upload://sessions/q3X0…/01j…"
   * ```
   */
  handleFor(file: Pick<StoredFile, "scope" | "id">): string {
    return formatUploadHandle(file.scope, file.id, this.#refs);
  }

  /**
   * Every stored file a handle stands for, in the caller's scope, in upload order: the upload's
   * handle (the ticket's `handle`, also the `handle` of the upload's reply) stands for every file
   * of that upload once it committed; a file's own handle (`files[i].handle` in the reply, the form
   * handles were issued in before) for that one file. `null` when missing, expired, malformed or in
   * another scope.
   *
   * @example
   * ```ts
   * const files = await uploads.filesFor(ticket.handle, { scope }); // both files of a 2-file upload
   * ```
   */
  async filesFor(handle: string, options: { scope: string }): Promise<StoredFile[] | null> {
    assertScope(options.scope);
    const parsed = typeof handle === "string" ? parseUploadHandle(handle) : null;
    // A handle carries the reference of its scope: it resolves only in the scope with that
    // reference, so a handle of another scope is exactly "not found".
    if (!parsed || !this.#refs.matches(parsed.scopeRef, options.scope)) return null;
    const work = { store: this.#store, state: this.#state, direct: this.#direct };
    return (await loadLater()).filesOfHandle(work, parsed.id, options.scope);
  }

  /**
   * The one stored file a handle stands for, in the caller's scope: a file's own handle, or the
   * handle of an upload that stored one file. The handle of an upload of several files is
   * `INVALID_INPUT` naming how many and the files' own handles (use {@link filesFor} for all of
   * them). `null` when missing, expired, malformed or in another scope.
   *
   * @example
   * ```ts
   * const file = await uploads.fileFor(uploads.handleFor(stored), { scope: stored.scope });
   * ```
   */
  async fileFor(handle: string, options: { scope: string }): Promise<StoredFile | null> {
    const files = await this.filesFor(handle, options);
    if (files && files.length > 1) throw (await loadLater()).severalFiles(files, undefined, this.#refs);
    return files?.[0] ?? null;
  }

  /**
   * A resolver for `FileBridge.addResolver`, so every `withFiles` tool accepts upload handles.
   * Handles of other scopes resolve as "not found". The handle of an upload of several files
   * resolves to all of them where a list of files is taken (`bridge.resolveEach`, a `"files[]"`
   * field of `withFiles`) and is `INVALID_INPUT` where one file is (`bridge.resolve`, `"file"`).
   *
   * @example
   * ```ts
   * bridge.addResolver(uploads.fileSourceResolver());
   * ```
   */
  fileSourceResolver(): FileSourceResolver {
    return {
      name: "upload handle",
      matches: (input: string) => input.startsWith(UPLOAD_HANDLE_PREFIX),
      resolve: async (input, context) => {
        const file = await this.fileFor(input, { scope: context.scope });
        if (!file) await this.#throwIfPending(input, context.scope);
        return file ? storedFileSource(this.#store, file) : null;
      },
      resolveEach: async (input, context) => {
        const files = await this.filesFor(input, { scope: context.scope });
        if (!files) await this.#throwIfPending(input, context.scope);
        return files ? files.map((file) => storedFileSource(this.#store, file)) : null;
      },
    };
  }

  /**
   * Replaces upload handles at the given argument paths (`"file"`, `"files[]"`, `"input.doc"`) with
   * paths of local copies, for tools that must not know about handles. Values that are not upload
   * handles are left as they are. A list item holding the handle of an upload of several files
   * becomes one path per file, in place; a field that takes one file fails with `INVALID_INPUT` for
   * such a handle. Fails with `NOT_FOUND` (and keeps no copies) when a handle does not resolve in
   * `scope`. Each distinct handle is copied once however often it appears; more than `maxFiles`
   * files (default 32, see docs/limits.md) fail with `TOO_MANY_FILES` before anything is copied. Call `dispose()` (or `await using`) when the tool is done.
   *
   * @example
   * ```ts
   * await using rewritten = await uploads.rewrite(args, ["file", "attachments[]"], { scope });
   * return upstreamTool(rewritten.args); // args.file is now "/tmp/mcp-file-bridge-1000/call-…/report.pdf"
   * ```
   */
  async rewrite<T>(
    args: T,
    paths: readonly string[],
    options: { scope: string; maxFiles?: number },
  ): Promise<RewrittenArgs<T>> {
    if (!Array.isArray(paths))
      throw new FileBridgeError("INVALID_INPUT", "paths must be a list of field paths");
    assertScope(options?.scope);
    const maxFiles = options.maxFiles ?? DEFAULT_MAX_FILES_PER_CALL;
    if (!Number.isSafeInteger(maxFiles) || maxFiles <= 0) {
      throw new FileBridgeError("INVALID_INPUT", "maxFiles must be a positive integer");
    }
    const deps = {
      store: this.#store,
      tmpDir: this.#tmpDir,
      filesFor: async (handle: string, at: { scope: string }) => {
        const files = await this.filesFor(handle, at);
        if (!files) await this.#throwIfPending(handle, at.scope);
        return files;
      },
      refs: this.#refs,
    };
    return (await loadLater()).rewriteHandles(deps, args, paths, { scope: options.scope, maxFiles });
  }
}

function isHostRequestContext(value: unknown): value is HostRequestContext {
  const ctx = value as Partial<HostRequestContext> | null;
  return (
    typeof ctx === "object" &&
    ctx !== null &&
    (ctx.transport === "http" || ctx.transport === "local") &&
    ctx.signal instanceof AbortSignal &&
    typeof ctx.extra === "object" &&
    ctx.extra !== null
  );
}

function requestContextOf(host: McpHost, extra: unknown): HostRequestContext {
  if (!host.requestContext) {
    throw new FileBridgeError(
      "INVALID_INPUT",
      `requestFiles(): this host (${host.kind}) has no request contexts; pass the context its tool handler got`,
    );
  }
  return host.requestContext(extra);
}
