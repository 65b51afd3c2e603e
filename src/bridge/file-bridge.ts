/**
 * The `FileBridge` class: dispatches a file argument to the input form that takes it (strings in a
 * fixed order, then objects), resolves lists all-or-nothing, wraps tool handlers (with-files.ts) and
 * sweeps stale temp folders. Options live in options.ts, each input form in sources/, and the copying
 * into temp files in materialize.ts.
 */
import type { ToolErrorResult } from "../errors/file-bridge-error.js";
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import { durationToMs } from "../internal/duration.js";
import { firstUse } from "../internal/first-use.js";
import { ACTIVE_CALL_DIRS, sweepCallDirs, sweepOnTimer } from "../internal/temp-dir.js";
import { watchToolCalls } from "../mcp/tool-call-schemas.js";
import { type CallContext, callContext } from "./call-context.js";
import { releaseCallFolders, underWay } from "./call-folders.js";
import { aborted, resolverFailure } from "./failures.js";
import type { DescriptorAnswerer } from "./file-descriptors.js";
import { type FileInputOptions, type fileInput, makeFileInput } from "./file-input.js";
import { fileParamsMeta } from "./file-params.js";
import {
  type BridgeSettings,
  DEFAULT_SWEEP_OLDER_THAN,
  type FileBridgeOptions,
  normalizeOptions,
  type ResolveOptions,
  type SweepOptions,
} from "./options.js";
import { settleLimited } from "./settle-limited.js";
import { BASE64_CHARSET, isDataUrl, looksLikePath } from "./sources/form-tests.js";
import type { ObjectFormHost } from "./sources/object.js";
import type { Root } from "./sources/path-containment.js";
import { bareBase64Refused, jsonEncodedObject, looksLikeBareBase64 } from "./sources/stray-forms.js";
import type { FileSourceResolver, ResolvedFile } from "./types.js";
import { type WithFilesArgs, type WithFilesOptions, wrapWithFiles } from "./with-files.js";

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]+):/;

/**
 * The input forms' code (`sources/`), loaded on the first file argument resolved: a server's start
 * compiles none of it (issue 39). A failed load fails that resolve; the next one loads again.
 */
const loadForms = firstUse(() => import("./sources/forms.js"));

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `Symbol.asyncDispose`, or its registered stand-in where the runtime has none. */
const asyncDispose: typeof Symbol.asyncDispose = Symbol.asyncDispose ?? Symbol.for("Symbol.asyncDispose");

/**
 * Turns whatever a client sends as a "file" argument into a real local file ({@link ResolvedFile})
 * and cleans up afterwards. Strings are tried in a fixed order: registered resolvers, `data:` URLs,
 * `https://` URLs, `file://` URIs and paths inside `roots`, then (if enabled) bare base64. Objects
 * carry base64 content, a `uri` (SEP-2631) or a `download_url`. Anything else fails with a
 * {@link FileBridgeError} whose code says why, and leaves no temp file behind.
 *
 * @example
 * ```ts
 * const bridge = new FileBridge({ roots: ["/srv/shared"], maxBytes: 20 * 1024 * 1024 });
 * await using file = await bridge.resolve("data:text/plain;name=a.txt;base64,aGk=", { scope: "s1" });
 * console.log(file.name, file.size, file.path); // a.txt 2 /tmp/mcp-file-bridge-1000/call-123-Ab12Cd/a.txt
 * ```
 */
export class FileBridge {
  /** The temp folder per-call folders are made in. */
  readonly tmpDir: string;
  /** The default size cap in bytes. */
  readonly maxBytes: number;
  readonly #settings: BridgeSettings;
  #roots: Promise<Root[]> | undefined;
  readonly #resolvers: FileSourceResolver[] = [];
  #descriptors: DescriptorAnswerer | undefined;
  #startupSweep: Promise<number> | undefined;
  /** Shared by every bridge in the process: one bridge's sweep never takes another's folder. */
  readonly #active = ACTIVE_CALL_DIRS;
  /** The bridge as object forms see it: they resolve their `uri` as a string. */
  readonly #objectHost: ObjectFormHost = {
    resolveString: (input, ctx) => this.#resolveString(input, ctx),
    resolveDownloadUrl: async (input, ctx) =>
      (await loadForms()).fromDownloadUrl(input, ctx, {
        https: this.#settings.https,
        httpsForm: this.#settings.forms.https,
      }),
    enabledForms: () => this.enabledForms,
  };

  constructor(options: FileBridgeOptions = {}) {
    this.#settings = normalizeOptions(options);
    this.tmpDir = this.#settings.tmpDir;
    this.maxBytes = this.#settings.maxBytes;
    for (const resolver of this.#settings.resolvers) this.addResolver(resolver);
    if (this.#settings.sweepOnStart && this.#settings.disk && claimStartupSweep(this.tmpDir)) {
      // Not in the constructor: reading the process's space and the folder waits until the process
      // has run a while (a server's start is not held up by it, and a process that ends at once
      // neither waits for it nor pays for it), or for whoever asks for the count.
      setTimeout(() => void this.startupSweep, STARTUP_SWEEP_DELAY_MS).unref?.();
    } else this.#startupSweep = Promise.resolve(0);
  }

  /**
   * The start-up sweep of this bridge's temp folder (see `sweepOnStart`): how many stale folders it
   * removed. It runs once per folder and process, in the background, starting about a second after
   * the bridge is made if the process still runs then (or when this is first read); later bridges on
   * the same folder get `0`.
   * Never rejects.
   *
   * @example
   * ```ts
   * const bridge = new FileBridge();
   * console.log(`removed ${await bridge.startupSweep} folders left by a crash`);
   * ```
   */
  get startupSweep(): Promise<number> {
    this.#startupSweep ??= sweepOnce(this.tmpDir, this.#settings.now);
    return this.#startupSweep;
  }

  /**
   * Teaches the bridge a new string form (upload handles, resource URIs). Resolvers are tried before
   * every built-in form, in the order added. Returns a function that removes the resolver again.
   *
   * @example
   * ```ts
   * const remove = bridge.addResolver({
   *   name: "upload handle",
   *   matches: (input) => input.startsWith("upload://"),
   *   resolve: async (input, { scope }) => lookUpUpload(scope, input),
   * });
   * ```
   */
  addResolver(resolver: FileSourceResolver): () => void {
    if (
      typeof resolver !== "object" ||
      resolver === null ||
      typeof resolver.name !== "string" ||
      typeof resolver.matches !== "function" ||
      typeof resolver.resolve !== "function"
    ) {
      throw new FileBridgeError("INVALID_OPTION", "resolver must have a name, matches() and resolve()");
    }
    this.#resolvers.push(resolver);
    return () => {
      const index = this.#resolvers.indexOf(resolver);
      if (index >= 0) this.#resolvers.splice(index, 1);
    };
  }

  /**
   * Lets `withFiles` see, on each call, the input schema the called tool was registered with, so
   * what its `fileInput({ accept, maxBytes })` fields publish (`x-mcp-file { accept, maxSize }`) is
   * enforced before the handler runs, for every input form. Attaching any other piece to the server
   * (`registry.attach`, `uploads.attach`, …) does the same; call this on a server that has only the
   * bridge. Once per server (an `McpServer` of SDK v1 or v2), before or after its tools register.
   * Without it, and with no `inputSchema` given to `withFiles`, a call on a process where some
   * `fileInput()` publishes `accept` or `maxBytes` is refused (`INVALID_OPTION`): never run unchecked.
   *
   * @throws FileBridgeError `INVALID_INPUT` when `server` is not an `McpServer`.
   * @example
   * ```ts
   * const server = new McpServer({ name: "images", version: "1.0.0" });
   * bridge.attach(server);
   * server.registerTool("resize", { inputSchema: { image: bridge.fileInput({ accept: ["image/*"] }) } }, handler);
   * ```
   */
  attach(server: object): void {
    watchToolCalls(server, "bridge.attach()");
  }

  /**
   * Sets what answers `withFiles` calls that carry file descriptors (`{id, mimeType, size}`, the
   * files extension revision Claude Code ships): `UploadHandleResolver.attach(server, { files })`
   * sets it. Without one such a call fails with `UNSUPPORTED_INPUT`. Returns a function that unsets it.
   *
   * @example
   * ```ts
   * const unset = bridge.answerDescriptors(answerer); // what uploads.attach(server, { files: true }) does
   * ```
   */
  answerDescriptors(answerer: DescriptorAnswerer): () => void {
    if (typeof answerer?.answer !== "function") {
      throw new FileBridgeError("INVALID_OPTION", "answerer must have answer()");
    }
    this.#descriptors = answerer;
    return () => {
      if (this.#descriptors === answerer) this.#descriptors = undefined;
    };
  }

  /**
   * {@link fileInput} for this bridge: the description also tells the model that a local path or
   * `file://` URI works when `roots` are set, and that an `https://` URL works when hosts are allowed,
   * and the schema advertises the bridge's `maxBytes`. Options given explicitly win.
   *
   * @example
   * ```ts
   * const bridge = new FileBridge({ roots: [process.cwd()] });
   * server.registerTool("count_words", { inputSchema: { file: bridge.fileInput() } }, handler);
   * ```
   */
  fileInput(options: FileInputOptions = {}): ReturnType<typeof fileInput> {
    return makeFileInput(
      {
        ...options,
        paths: options.paths ?? this.#settings.forms.path,
        https: options.https ?? this.#settings.forms.https,
      },
      this.maxBytes,
    );
  }

  /**
   * The tool `_meta` entry `{"openai/fileParams": [...]}` naming the top-level fields of
   * `inputSchema` made with `fileInput({ fileParams: true })`, or `{}` (see {@link FileInputOptions.fileParams}).
   * Hosts following that convention hand those fields `{download_url, file_id}` objects, fetched from
   * `https.downloadOrigins`. A marked field below the top level fails with `INVALID_OPTION`.
   *
   * @example
   * ```ts
   * const inputSchema = { attachment: bridge.fileInput({ fileParams: true }) };
   * server.registerTool("summarize", { inputSchema, _meta: bridge.fileParamsMeta(inputSchema) }, handler);
   * ```
   */
  fileParamsMeta(inputSchema: object): { "openai/fileParams"?: string[] } {
    return fileParamsMeta(inputSchema);
  }

  /** The names of the forms currently enabled, as shown in `UNSUPPORTED_INPUT` errors. */
  get enabledForms(): string[] {
    const names: string[] = [];
    if (this.#settings.forms.resolver) for (const resolver of this.#resolvers) names.push(resolver.name);
    if (this.#settings.forms.dataUrl) names.push("data: URL");
    if (this.#settings.forms.https) names.push("https:// URL");
    if (this.#settings.forms.path) names.push("file:// URI", "local path");
    if (this.#settings.forms.object) names.push("object {name, content (base64)}", "object {uri, name}");
    if (this.#settings.forms.base64) names.push("bare base64");
    return names;
  }

  /**
   * Resolves one file argument to a local file. Call `dispose()` (or use `await using`) when done.
   *
   * @example
   * ```ts
   * const file = await bridge.resolve(args.file, { scope: "session-1" });
   * try {
   *   await convert(file.path);
   * } finally {
   *   await file.dispose();
   * }
   * ```
   */
  resolve(input: unknown, options: ResolveOptions): Promise<ResolvedFile> {
    return underWay(this.tmpDir, this.#resolveOne(input, options));
  }

  async #resolveOne(input: unknown, options: ResolveOptions): Promise<ResolvedFile> {
    const ctx = this.#context(options);
    if (ctx.signal?.aborted) throw aborted();
    if (Array.isArray(input)) {
      throw new FileBridgeError(
        "INVALID_INPUT",
        "a list was given where one file was expected; use resolveAll()",
      );
    }
    if (typeof input === "string") return this.#resolveString(input, ctx);
    if (isRecord(input)) return this.#resolveObject(input, ctx);
    throw new FileBridgeError("INVALID_INPUT", "a file must be given as a string or an object", {
      data: { forms: this.enabledForms },
    });
  }

  /**
   * Resolves one file argument to every file it stands for: the handle of an upload that carried
   * several files gives all of them, in upload order; any other form gives its one file (what
   * {@link resolve} gives). At most `maxFiles` (`TOO_MANY_FILES`, before anything is copied); all or
   * nothing. `withFiles` resolves list fields (`"files[]"`) this way, so one upload handle in a list
   * becomes every file of that upload.
   *
   * @example
   * ```ts
   * const files = await bridge.resolveEach(ticket.handle, { scope }); // all 3 files of a 3-file upload
   * try { await merge(files.map((f) => f.path)); } finally { await Promise.all(files.map((f) => f.dispose())); }
   * ```
   */
  async resolveEach(input: unknown, options: ResolveOptions): Promise<ResolvedFile[]> {
    const ctx = this.#context(options);
    if (ctx.signal?.aborted) throw aborted();
    const resolver =
      typeof input === "string" && this.#settings.forms.resolver ? this.#resolverFor(input) : undefined;
    if (!resolver) return [await this.resolve(input, options)];
    const files = loadForms().then((forms) =>
      forms.fromResolverEach(resolver, input as string, ctx, this.#settings.maxFiles),
    );
    return underWay(this.tmpDir, files);
  }

  /**
   * Resolves several file arguments (any mix of forms), each to one file (an upload handle that
   * stands for several files is `INVALID_INPUT` here; {@link resolveEach} gives them all), at most
   * `concurrency` at a time and at most `maxFiles` in all (`TOO_MANY_FILES`). All or nothing: when one fails, the others are aborted and the ones already resolved are disposed, then
   * the first error is thrown.
   *
   * @example
   * ```ts
   * const files = await bridge.resolveAll(args.files, { scope });
   * try { await merge(files.map((f) => f.path)); } finally { await Promise.all(files.map((f) => f.dispose())); }
   * ```
   */
  async resolveAll(inputs: unknown[], options: ResolveOptions): Promise<ResolvedFile[]> {
    if (!Array.isArray(inputs)) throw new FileBridgeError("INVALID_INPUT", "resolveAll() takes a list");
    const groups = await underWay(
      this.tmpDir,
      this.#resolveGroups(
        inputs.map((value) => ({ value, each: false })),
        options,
      ),
    );
    return groups.map((group) => group[0] as ResolvedFile);
  }

  /**
   * Resolves file arguments, each to one file or (`each`) to every file it stands for, at most
   * `concurrency` at a time and at most `maxFiles` files in all. All or nothing: when one fails, the
   * others are aborted and the ones already resolved are disposed, then the first error is thrown.
   */
  async #resolveGroups(
    items: ReadonlyArray<{ value: unknown; each: boolean; maxBytes?: number }>,
    options: ResolveOptions,
  ): Promise<ResolvedFile[][]> {
    this.#context(options);
    if (items.length > this.#settings.maxFiles) throw this.#tooMany(items.length);
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) controller.abort();
    let firstError: unknown;
    const settled = await settleLimited(items, this.#settings.concurrency, async (item) => {
      if (controller.signal.aborted) throw aborted();
      const inner = { ...options, signal: controller.signal };
      // A field's own cap (its published maxSize) only ever lowers the call's.
      if (item.maxBytes !== undefined)
        inner.maxBytes = Math.min(item.maxBytes, options.maxBytes ?? this.maxBytes);
      try {
        return item.each
          ? await this.resolveEach(item.value, inner)
          : [await this.resolve(item.value, inner)];
      } catch (error) {
        if (firstError === undefined) {
          firstError = error;
          controller.abort();
        }
        throw error;
      }
    });
    options.signal?.removeEventListener("abort", onAbort);
    const resolved = settled.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    const count = resolved.reduce((sum, group) => sum + group.length, 0);
    if (resolved.length === items.length && count <= this.#settings.maxFiles) return resolved;
    await Promise.allSettled(resolved.flat().map((file) => file.dispose()));
    throw firstError ?? (resolved.length === items.length ? this.#tooMany(count) : aborted());
  }

  #tooMany(count: number): FileBridgeError {
    const limit = this.#settings.maxFiles;
    return new FileBridgeError("TOO_MANY_FILES", `at most ${limit} files can be sent at once`, {
      data: { limit, count },
    });
  }

  /**
   * Wraps a tool handler for `McpServer.registerTool`: the named argument fields are resolved and
   * replaced by local paths (or {@link ResolvedFile}s with `pass: "file"`) before the handler runs,
   * and every temp file is removed after it returns or throws. If a file cannot be resolved, the
   * handler is not called and the result is an `isError` tool result naming the error code.
   *
   * @example
   * ```ts
   * server.registerTool(
   *   "word_count",
   *   { inputSchema: { file: fileInput() } },
   *   bridge.withFiles(async ({ file }) => {
   *     const text = await readFile(file, "utf8"); // `file` is a local path here
   *     return { content: [{ type: "text", text: String(text.split(/\s+/).length) }] };
   *   }, { fields: ["file"] }),
   * );
   * ```
   */
  withFiles<
    Args,
    Extra,
    Result,
    const Fields extends readonly string[] = readonly string[],
    Pass extends "path" | "file" = "path",
  >(
    handler: (args: WithFilesArgs<Args, Fields, Pass>, extra: Extra) => Result | Promise<Result>,
    options: WithFilesOptions & { fields: Fields; pass?: Pass },
  ): (args: Args, extra: Extra) => Promise<Result | ToolErrorResult> {
    return wrapWithFiles(
      (items, resolveOptions) => this.#resolveGroups(items, resolveOptions),
      handler as (args: Args, extra: Extra) => Result | Promise<Result>,
      options,
      () => this.#descriptors,
      (work) => underWay(this.tmpDir, work),
    );
  }

  /**
   * Removes per-call temp folders left behind by a crashed process (their process id is gone) and
   * any older than `olderThan`. Folders in use anywhere in this process (by any bridge) are kept.
   * Returns how many folders were removed.
   *
   * @example
   * ```ts
   * setInterval(() => void bridge.sweep({ olderThan: "30m" }), 10 * 60_000).unref();
   * ```
   */
  async sweep(options: SweepOptions = {}): Promise<number> {
    const olderThanMs = durationToMs(options.olderThan ?? DEFAULT_SWEEP_OLDER_THAN, "olderThan");
    if (!this.#settings.disk) return 0;
    return sweepCallDirs(this.tmpDir, { olderThanMs, now: this.#settings.now(), active: this.#active });
  }

  /**
   * Lets the bridge's temp folder go quiet: waits for the resolutions started before it (each has
   * then written its file or, failing, removed its folder), for its background work (the start-up
   * sweep, the refill of spare call folders) and removes the call folders kept ready between calls
   * (spare ones, and emptied ones kept for a scope's next call). Files resolved and not yet disposed
   * stay where they are (a `withFiles` handler still running keeps its files). Call it before
   * removing the temp folder yourself (a test's clean-up) or when a server shuts down; the bridge
   * stays usable, and a later call makes what it needs again. Bridges on the same temp folder share
   * these folders and resolutions. Never rejects.
   *
   * @example
   * ```ts
   * const bridge = new FileBridge({ tmpDir });
   * // … calls …
   * await bridge.close();
   * await rm(tmpDir, { recursive: true }); // nothing of the bridge is being made in it any more
   * ```
   */
  async close(): Promise<void> {
    await this.startupSweep;
    if (this.#settings.disk) await releaseCallFolders(this.tmpDir);
  }

  /** {@link close}, for `await using bridge = new FileBridge(...)`. */
  async [asyncDispose](): Promise<void> {
    await this.close();
  }

  // ---------------------------------------------------------------------------------------------

  #context(options: ResolveOptions): CallContext {
    return callContext(options, this.#settings);
  }

  #disabled(form: string): FileBridgeError {
    const forms = this.enabledForms;
    return new FileBridgeError(
      "FORM_DISABLED",
      `this server does not accept files as ${form}; it accepts ${forms.join(", ") || "no form at all"}`,
      { data: { form, forms } },
    );
  }

  async #resolveObject(input: Record<string, unknown>, ctx: CallContext): Promise<ResolvedFile> {
    if (!this.#settings.forms.object) throw this.#disabled("object");
    return (await loadForms()).fromObject(input, ctx, this.#objectHost);
  }

  /** Bare base64 on a server with that form off: an error showing the form to send instead. */
  #bareBase64(input: string): FileBridgeError | undefined {
    if (this.#settings.forms.base64 || !looksLikeBareBase64(input)) return undefined;
    return bareBase64Refused(this.#settings.forms, this.enabledForms);
  }

  #roots$(): Promise<Root[]> {
    this.#roots ??= loadForms().then((forms) => forms.prepareRoots(this.#settings.roots));
    // Do not cache a failure (a root may be created later).
    this.#roots.catch(() => {
      this.#roots = undefined;
    });
    return this.#roots;
  }

  #resolverFor(input: string): FileSourceResolver | undefined {
    try {
      return this.#resolvers.find((candidate) => candidate.matches(input));
    } catch (error) {
      throw resolverFailure("a resolver's matches()", error);
    }
  }

  async #resolveString(input: string, ctx: CallContext): Promise<ResolvedFile> {
    if (input.length === 0) throw new FileBridgeError("INVALID_INPUT", "the file argument is empty");
    // An object form sent as a JSON string (`"{\"filename\": …}"`) is that object.
    const encoded = jsonEncodedObject(input);
    if (encoded !== undefined) return this.#resolveObject(encoded, ctx);
    // (1) registered resolvers
    const resolver = this.#resolverFor(input);
    if (resolver) {
      if (!this.#settings.forms.resolver) throw this.#disabled(resolver.name);
      return (await loadForms()).fromResolver(resolver, input, ctx);
    }
    // (2) data: URL
    if (isDataUrl(input)) {
      if (!this.#settings.forms.dataUrl) throw this.#disabled("data: URL");
      return (await loadForms()).fromDataUrl(input, ctx);
    }
    const scheme = SCHEME.exec(input)?.[1]?.toLowerCase();
    // (3) https:// (plain http:// is never fetched: FORM_DISABLED)
    if (scheme === "https") {
      if (!this.#settings.forms.https) throw this.#disabled("https:// URL");
      return this.#fromHttps(input, ctx);
    }
    if (scheme === "http") throw this.#disabled("http:// URL (only https:// can be enabled)");
    // (4) file:// URI or path
    if (scheme === "file") {
      if (!this.#settings.forms.path) throw this.#disabled("file:// URI");
      const { fromPath, fileUriToPath } = await loadForms();
      return fromPath(fileUriToPath(input), input, ctx, await this.#roots$());
    }
    if (scheme !== undefined) {
      throw new FileBridgeError(
        "UNSUPPORTED_INPUT",
        `"${scheme}:" inputs are not supported; accepted forms: ${this.enabledForms.join(", ")}`,
        { data: { scheme, forms: this.enabledForms } },
      );
    }
    const base64Candidate = this.#settings.forms.base64 && BASE64_CHARSET.test(input);
    const { fromPath, fromBase64 } = await loadForms();
    if (this.#settings.forms.path) {
      try {
        return await fromPath(input, input, ctx, await this.#roots$());
      } catch (error) {
        // (5) a string that is no file may still be base64, when that form is on.
        if (base64Candidate && isFileBridgeError(error, "NOT_FOUND")) return fromBase64(input, ctx);
        // Base64 may start with "/" (JPEG is "/9j/…"): an absolute "path" outside every root is tried
        // as base64 too, and if it is not valid base64 either, the path refusal stands.
        const outsideRoots =
          isFileBridgeError(error, "PATH_NOT_ALLOWED") && error.data?.outsideRoots === true;
        if (base64Candidate && outsideRoots) {
          try {
            return await fromBase64(input, ctx);
          } catch (base64Error) {
            if (isFileBridgeError(base64Error, "INVALID_BASE64")) throw error;
            throw base64Error;
          }
        }
        // With bare base64 off, content that is surely base64 gets the form to use, not NOT_FOUND.
        if (isFileBridgeError(error, "NOT_FOUND") || outsideRoots) throw this.#bareBase64(input) ?? error;
        throw error;
      }
    }
    // (5) bare base64
    if (this.#settings.forms.base64) {
      if (base64Candidate || !looksLikePath(input)) return fromBase64(input, ctx);
    }
    const bareBase64 = this.#bareBase64(input);
    if (bareBase64) throw bareBase64;
    if (looksLikePath(input)) throw this.#disabled("local path");
    throw new FileBridgeError(
      "UNSUPPORTED_INPUT",
      `the string is not a file in any accepted form; accepted forms: ${this.enabledForms.join(", ")}`,
      { data: { forms: this.enabledForms } },
    );
  }

  async #fromHttps(input: string, ctx: CallContext): Promise<ResolvedFile> {
    const https = this.#settings.https;
    if (!https) throw this.#disabled("https:// URL");
    return (await loadForms()).fromHttps(input, ctx, https);
  }
}

/** Temp folders already swept at start-up in this process. */
const SWEPT_AT_START = new Set<string>();
/**
 * How long after the first bridge on a folder its start-up sweep begins, on an unref'd timer: a
 * process still running then (a server) sweeps; one that has ended by then never started it.
 */
const STARTUP_SWEEP_DELAY_MS = 1000;
/** How long a start-up sweep may look through a folder. */
const STARTUP_SWEEP_MS = 5000;

/** Whether this is the first bridge of the process on `tmpDir` (the one that sweeps it at start-up). */
function claimStartupSweep(tmpDir: string): boolean {
  if (SWEPT_AT_START.has(tmpDir)) return false;
  SWEPT_AT_START.add(tmpDir);
  return true;
}

/**
 * Sweeps `tmpDir` (claimed by {@link claimStartupSweep}), bounded in time, and then on the leftover
 * timer (`sweepOnTimer`); resolves to the count of the first sweep. Never throws nor rejects: it may
 * run from a timer, where a throwing clock (`now`) would be an uncaught exception, so a clock that
 * fails is a sweep that fails (nothing removed, `0`).
 */
function sweepOnce(tmpDir: string, now: () => number): Promise<number> {
  const olderThanMs = durationToMs(DEFAULT_SWEEP_OLDER_THAN, "olderThan");
  // And again every ten minutes while the process runs (crash leftovers of other processes too).
  sweepOnTimer(`call:${tmpDir}`, () =>
    sweepCallDirs(tmpDir, { olderThanMs, now: Date.now(), active: ACTIVE_CALL_DIRS }),
  );
  return new Promise<number>((done) => done(now()))
    .then((at) =>
      sweepCallDirs(tmpDir, {
        olderThanMs,
        now: at,
        active: ACTIVE_CALL_DIRS,
        deadline: Date.now() + STARTUP_SWEEP_MS,
      }),
    )
    .catch(() => 0);
}
