/**
 * The `FileBridge` class: its options (options.ts), its resolvers, the schemas of its file arguments
 * (file-input.ts) and its wrapped tool handlers (with-files.ts). What a call does is loaded on first
 * use (resolution.ts): which input form takes an argument, lists all or nothing, a wrapped call's
 * work before its handler and the sweeps, with each input form (sources/) and the copying into temp
 * files (materialize.ts).
 */
import { FileBridgeError, type ToolErrorResult, toToolErrorResult } from "../errors/file-bridge-error.js";
import { firstUse } from "../internal/first-use.js";
import { watchToolCalls } from "../mcp/tool-call-schemas.js";
import type { DescriptorAnswerer } from "./file-descriptors.js";
import { type FileInputOptions, type fileInput, makeFileInput } from "./file-input.js";
import { fileParamsMeta } from "./file-params.js";
import {
  type BridgeSettings,
  type FileBridgeOptions,
  normalizeOptions,
  type ResolveOptions,
  type SweepOptions,
} from "./options.js";
import type { BridgeCalls } from "./resolution.js";
import type { FileSourceResolver, ResolvedFile } from "./types.js";
import { prepareWithFiles, type WithFilesArgs, type WithFilesOptions } from "./with-files.js";

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
  /** The default size cap in bytes. */
  readonly maxBytes: number;
  readonly #settings: BridgeSettings;
  readonly #resolvers: FileSourceResolver[] = [];
  #descriptors: DescriptorAnswerer | undefined;
  #startupSweep: Promise<number> | undefined;
  /**
   * The call path (`resolution.ts`: which form takes an argument, with the input forms' code; lists;
   * the per-call folders; a wrapped call's work; the sweeps), loaded on this bridge's first file
   * resolved, wrapped call, sweep or `close()`: a server's start compiles none of it (issue 39). A
   * failed load fails that call; the next one loads again.
   */
  readonly #calls = firstUse(
    async (): Promise<BridgeCalls> =>
      new (await import("./resolution.js")).BridgeCalls(
        this.#settings,
        this.#resolvers,
        () => this.enabledForms,
      ),
  );

  constructor(options: FileBridgeOptions = {}) {
    this.#settings = normalizeOptions(options);
    this.maxBytes = this.#settings.maxBytes;
    for (const resolver of this.#settings.resolvers) this.addResolver(resolver);
    if (this.#settings.sweepOnStart && this.#settings.disk) {
      // Not in the constructor: working out the default folder, reading the process's space and
      // the folder wait until the process has run a while (a server's start is not held up by it,
      // and a process that ends at once neither waits for it nor pays for it), or for whoever asks
      // for the count. The first bridge on the folder to get there sweeps it.
      setTimeout(() => void this.startupSweep, STARTUP_SWEEP_DELAY_MS).unref?.();
    } else this.#startupSweep = Promise.resolve(0);
  }

  /**
   * The temp folder per-call folders are made in: the `tmpDir` option, or the default one
   * (`<os temp folder>/mcp-file-bridge-<uid>`, or a private folder of this process where another user
   * holds that name), worked out when first read and then kept; `""` without a disk.
   */
  get tmpDir(): string {
    return this.#settings.tmpDir();
  }

  /**
   * The start-up sweep of this bridge's temp folder (see `sweepOnStart`): how many stale folders it
   * removed. It runs once per folder and process, in the background, starting about a second after
   * the bridge is made if the process still runs then (or when this is first read); the other
   * bridges on the same folder get `0`.
   * Never rejects.
   *
   * @example
   * ```ts
   * const bridge = new FileBridge();
   * console.log(`removed ${await bridge.startupSweep} folders left by a crash`);
   * ```
   */
  get startupSweep(): Promise<number> {
    this.#startupSweep ??= claimStartupSweep(this.tmpDir)
      ? this.#calls().then(
          (calls) => calls.sweepAtStart(),
          () => 0,
        )
      : Promise.resolve(0);
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
    return this.#calls().then((calls) => calls.resolve(input, options));
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
  resolveEach(input: unknown, options: ResolveOptions): Promise<ResolvedFile[]> {
    return this.#calls().then((calls) => calls.resolveEach(input, options));
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
  resolveAll(inputs: unknown[], options: ResolveOptions): Promise<ResolvedFile[]> {
    return this.#calls().then((calls) => calls.resolveAll(inputs, options));
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
    const prepared = prepareWithFiles(handler, options);
    // The handler gets the arguments with files in place of the fields' values.
    const run = handler as (args: Args, extra: Extra) => Result | Promise<Result>;
    return (args, extra) =>
      this.#calls().then(
        (calls) => calls.runWithFiles(prepared, run, args, extra, this.#descriptors),
        toToolErrorResult,
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
  sweep(options: SweepOptions = {}): Promise<number> {
    return this.#calls().then((calls) => calls.sweep(options));
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
    // A call path that cannot load has made no call folder to release.
    await this.#calls().then(
      (calls) => calls.release(),
      () => undefined,
    );
  }

  /** {@link close}, for `await using bridge = new FileBridge(...)`. */
  async [asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** Temp folders already swept at start-up in this process. */
const SWEPT_AT_START = new Set<string>();
/**
 * How long after a bridge is made its start-up sweep begins, on an unref'd timer: a process still
 * running then (a server) sweeps; one that has ended by then never started it.
 */
const STARTUP_SWEEP_DELAY_MS = 1000;

/** Whether this is the first bridge of the process to sweep `tmpDir` at start-up. */
function claimStartupSweep(tmpDir: string): boolean {
  if (SWEPT_AT_START.has(tmpDir)) return false;
  SWEPT_AT_START.add(tmpDir);
  return true;
}
