import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { rename } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { extension as extensionFor } from "mime-types";
import pLimit from "p-limit";
import type { ToolErrorResult } from "../errors/file-bridge-error.js";
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import { assertBase64Fits, BASE64_CHARSET, decodeBase64To, planBase64 } from "../internal/base64.js";
import { type Duration, durationToMs } from "../internal/duration.js";
import { baseName, sanitizeFileName } from "../internal/file-name.js";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_FILES_PER_CALL } from "../internal/limits.js";
import { ACTIVE_CALL_DIRS, createCallDir, removeDir, sweepCallDirs } from "../internal/temp-dir.js";
import { chooseMediaType, OCTET_STREAM, parseMediaType } from "../media/media-type.js";
import { assertScope } from "../scope/scope.js";
import { LocalResolvedFile } from "./resolved-file.js";
import { assertDataUrlFits, decodeDataUrlTo, isDataUrl, parseDataUrl } from "./sources/data-url.js";
import {
  type ContainedFile,
  fileUriToPath,
  prepareRoots,
  type Root,
  resolveContainedPath,
} from "./sources/path-containment.js";
import { type HostPattern, parseHostPattern, safeFetch } from "./sources/safe-fetch.js";
import { sha256OfFileSync, TempFileWriter } from "./temp-file-writer.js";
import type { FileSourceKind, FileSourceResolver, ResolvedFile, ResolverResult } from "./types.js";
import { type WithFilesArgs, type WithFilesOptions, wrapWithFiles } from "./with-files.js";

/**
 * Which input forms a {@link FileBridge} accepts. Each can be switched off (or on).
 *
 * @example
 * ```ts
 * const forms: FileBridgeForms = { path: true, object: false, base64: true };
 * const bridge = new FileBridge({ roots: ["/srv/shared"], forms });
 * ```
 */
export interface FileBridgeForms {
  /**
   * Local paths and `file://` URIs inside `roots`.
   * @default true when `roots` is given, else false (and true without roots is an `INVALID_OPTION`)
   */
  path?: boolean;
  /** `data:` URLs (RFC 2397), including a `name=` parameter. @default true */
  dataUrl?: boolean;
  /** Object forms (`{name, content}`, `{uri, name, size, digest}`, `{download_url, file_name}`). @default true */
  object?: boolean;
  /** Strings recognised by registered resolvers (`upload://…`, resource URIs). @default true */
  resolver?: boolean;
  /** `https://` URLs. @default true when `https.allowHosts` is given, else false */
  https?: boolean;
  /** Bare base64 strings (ambiguous with names, so off unless asked for; strictly validated). @default false */
  base64?: boolean;
}

/**
 * Options for fetching `https://` inputs.
 *
 * @example
 * ```ts
 * const https: FileBridgeHttpsOptions = { allowHosts: ["files.example.com", "*.cdn.example.com"], timeout: "10s" };
 * const bridge = new FileBridge({ https }); // https:// inputs are now accepted from those hosts
 * ```
 */
export interface FileBridgeHttpsOptions {
  /**
   * Hosts that may be fetched: exact names (`files.example.com`), subdomain wildcards
   * (`*.example.com`, not the apex) or `*` for any host. Private addresses stay refused regardless.
   */
  allowHosts: string[];
  /** Overall time for connecting, redirects and the body; over it the call fails with `TIMEOUT`. @default "30s" */
  timeout?: Duration;
  /** Redirects followed, each hop re-checked against the allow-list and address rules. @default 3 */
  maxRedirects?: number;
  /**
   * Allow loopback, private, link-local and other non-public addresses. Only for tests.
   * @default false
   */
  allowPrivateAddresses?: boolean;
  /** An extra trusted CA certificate (PEM), added to Node's bundled roots; for tests. @default none */
  ca?: string | Buffer;
}

/**
 * Options of {@link FileBridge}.
 *
 * @example
 * ```ts
 * const options: FileBridgeOptions = { roots: ["/srv/docs"], maxBytes: 10 * 1024 * 1024 };
 * const bridge = new FileBridge(options);
 * ```
 */
export interface FileBridgeOptions {
  /**
   * Folders local paths must be inside (checked on real paths, so symlinks cannot leave them). A
   * relative path is taken relative to the first root. Each must exist.
   * @default none: local paths are refused
   */
  roots?: string[];
  /**
   * Where per-call temp folders are made (created with mode 0700 if missing). On POSIX it must be
   * private: owned by this user (or root) and not writable by anyone without the sticky bit, else
   * resolving fails with `STORAGE_ERROR`.
   * @default join(os.tmpdir(), "mcp-file-bridge")
   */
  tmpDir?: string;
  /** Largest accepted file, in bytes (decoded size). @default 52428800 (50 MiB) */
  maxBytes?: number;
  /** Which input forms are accepted; see {@link FileBridgeForms}. @default see each form */
  forms?: FileBridgeForms;
  /** Enables `https://` inputs (with `forms.https`). @default none: https URLs are refused */
  https?: FileBridgeHttpsOptions;
  /** Accept zero-byte files instead of failing with `EMPTY_FILE`. @default false */
  allowEmpty?: boolean;
  /** How many inputs {@link FileBridge.resolveAll} resolves at once. @default 4 */
  concurrency?: number;
  /**
   * Most files one {@link FileBridge.resolveAll} (and so one `withFiles` call) accepts; more fail with
   * `TOO_MANY_FILES` before anything is read. With `maxBytes` it bounds the disk one call can fill.
   * @default 32
   */
  maxFiles?: number;
  /** Resolvers to add right away (see {@link FileBridge.addResolver}). @default [] */
  resolvers?: FileSourceResolver[];
  /** Clock used by {@link FileBridge.sweep}, in milliseconds. @default Date.now */
  now?: () => number;
}

/**
 * Options of {@link FileBridge.resolve} and {@link FileBridge.resolveAll}.
 *
 * @example
 * ```ts
 * const options: ResolveOptions = { scope: "session-1", signal: extra.signal, maxBytes: 5 * 1024 * 1024 };
 * await using file = await bridge.resolve(args.file, options);
 * ```
 */
export interface ResolveOptions {
  /** Scope of the caller (session, chat, user); resolvers only find that scope's files. */
  scope: string;
  /** Aborts the resolution (`ABORTED`); any temp file is removed. */
  signal?: AbortSignal;
  /** Size cap for this call, replacing the bridge's `maxBytes`. @default the bridge's maxBytes */
  maxBytes?: number;
  /** Name to use when the input carries none (bare base64, a data URL without `name=`). @default "file" + extension */
  name?: string;
}

/**
 * Options of {@link FileBridge.sweep}.
 *
 * @example
 * ```ts
 * const removed = await bridge.sweep({ olderThan: "30m" }); // how many temp folders were removed
 * ```
 */
export interface SweepOptions {
  /** Folders older than this are removed even when their process still runs. @default "1h" */
  olderThan?: Duration;
}

const DEFAULT_TIMEOUT: Duration = "30s";
const MAX_DISK_NAME_BYTES = 200;
/** [decode] Sources decoded in memory from the argument: their sha256 is computed on first read. */
const DECODED_KINDS: ReadonlySet<FileSourceKind> = new Set(["data-url", "base64", "object"]);
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]+):/;

/** Per-call state threaded through the resolution of one input. */
interface CallContext {
  readonly scope: string;
  readonly signal: AbortSignal | undefined;
  readonly maxBytes: number;
  readonly fallbackName: string | undefined;
  /** Name / media type given by an enclosing object form; they win over what the string carries. */
  readonly nameOverride?: string | undefined;
  readonly mimeOverride?: string | undefined;
}

/** What {@link FileBridge.materialize} needs to know besides the bytes. */
interface MaterializeSpec {
  readonly kind: FileSourceKind;
  readonly detail: string;
  /** A name the input carries (data URL `name=`, URL segment…). */
  readonly name: string | undefined;
  /** A media type the input declares. */
  readonly mimeType: string | undefined;
  /** Expected size / sha256 to verify after writing (`DIGEST_MISMATCH`). */
  readonly expectedSize?: number | undefined;
  readonly expectedSha256?: string | undefined;
}

type Producer = (writer: TempFileWriter) => Promise<void>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function positiveInteger(value: unknown, option: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0) {
    throw new FileBridgeError("INVALID_OPTION", `${option} must be a positive integer`);
  }
  return value;
}

function tooLarge(size: number, limit: number): FileBridgeError {
  return new FileBridgeError("FILE_TOO_LARGE", `the file is ${size} bytes; the limit is ${limit}`, {
    data: { size, limit },
  });
}

/** A resolver's own FileBridgeError passes through; anything else becomes `STORAGE_ERROR` (cause kept). */
function resolverFailure(what: string, error: unknown): FileBridgeError {
  if (isFileBridgeError(error)) return error;
  return new FileBridgeError("STORAGE_ERROR", `${what} failed`, { cause: error });
}

function aborted(): FileBridgeError {
  return new FileBridgeError("ABORTED", "the resolution was aborted");
}

/** A name safe to use inside a private temp folder: the sanitized name, shortened to fit on disk. */
function diskName(name: string): string {
  if (Buffer.byteLength(name) <= MAX_DISK_NAME_BYTES) return name;
  const dot = name.lastIndexOf(".");
  const ext = dot > 0 ? name.slice(dot) : "";
  return /^\.[A-Za-z0-9]{1,16}$/.test(ext) ? `file${ext}` : "file";
}

/** `sha256:<hex>` or SRI `sha256-<base64>` → lower-case hex. */
export function parseSha256Digest(digest: unknown): string {
  if (typeof digest !== "string") throw new FileBridgeError("INVALID_INPUT", "digest must be a string");
  const hex = /^sha-?256:([0-9a-fA-F]{64})$/.exec(digest.trim());
  if (hex?.[1]) return hex[1].toLowerCase();
  const sri = /^sha256-([A-Za-z0-9+/_-]{43}=?)$/.exec(digest.trim());
  if (sri?.[1]) {
    const bytes = Buffer.from(sri[1], "base64");
    if (bytes.length === 32) return bytes.toString("hex");
  }
  throw new FileBridgeError(
    "INVALID_INPUT",
    'digest must be "sha256:<64 hex digits>" or "sha256-<base64>" (other algorithms are not supported)',
  );
}

function firstString(
  record: Record<string, unknown>,
  keys: readonly string[],
  label: string,
): string | undefined {
  for (const key of keys) {
    const value = record[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== "string")
      throw new FileBridgeError("INVALID_INPUT", `${label}.${key} must be a string`);
    return value;
  }
  return undefined;
}

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
 * console.log(file.name, file.size, file.path); // a.txt 2 /tmp/mcp-file-bridge/call-123-Ab12Cd/a.txt
 * ```
 */
export class FileBridge {
  /** The temp folder per-call folders are made in. */
  readonly tmpDir: string;
  /** The default size cap in bytes. */
  readonly maxBytes: number;
  readonly #rootsGiven: readonly string[];
  #roots: Promise<Root[]> | undefined;
  readonly #forms: Required<FileBridgeForms>;
  readonly #allowEmpty: boolean;
  readonly #concurrency: number;
  readonly #maxFiles: number;
  readonly #resolvers: FileSourceResolver[] = [];
  /** Shared by every bridge in the process: one bridge's sweep never takes another's folder. */
  readonly #active = ACTIVE_CALL_DIRS;
  readonly #now: () => number;
  readonly #https:
    | {
        allowHosts: HostPattern[];
        timeoutMs: number;
        maxRedirects: number;
        allowPrivateAddresses: boolean;
        ca: string | Buffer | undefined;
      }
    | undefined;

  constructor(options: FileBridgeOptions = {}) {
    if (typeof options !== "object" || options === null) {
      throw new FileBridgeError("INVALID_OPTION", "options must be an object");
    }
    const roots = options.roots ?? [];
    if (!Array.isArray(roots) || roots.some((root) => typeof root !== "string" || root.trim() === "")) {
      throw new FileBridgeError("INVALID_OPTION", "roots must be a list of folder paths");
    }
    this.#rootsGiven = [...roots];
    if (
      options.tmpDir !== undefined &&
      (typeof options.tmpDir !== "string" || options.tmpDir.trim() === "")
    ) {
      throw new FileBridgeError("INVALID_OPTION", "tmpDir must be a folder path");
    }
    this.tmpDir = options.tmpDir ?? join(tmpdir(), "mcp-file-bridge");
    this.maxBytes =
      options.maxBytes === undefined ? DEFAULT_MAX_BYTES : positiveInteger(options.maxBytes, "maxBytes");
    this.#allowEmpty = options.allowEmpty ?? false;
    if (typeof this.#allowEmpty !== "boolean")
      throw new FileBridgeError("INVALID_OPTION", "allowEmpty must be a boolean");
    this.#concurrency =
      options.concurrency === undefined ? 4 : positiveInteger(options.concurrency, "concurrency");
    this.#maxFiles =
      options.maxFiles === undefined
        ? DEFAULT_MAX_FILES_PER_CALL
        : positiveInteger(options.maxFiles, "maxFiles");
    if (options.now !== undefined && typeof options.now !== "function") {
      throw new FileBridgeError("INVALID_OPTION", "now must be a function");
    }
    this.#now = options.now ?? Date.now;

    if (options.https !== undefined) {
      const https = options.https;
      if (
        typeof https !== "object" ||
        https === null ||
        !Array.isArray(https.allowHosts) ||
        https.allowHosts.length === 0
      ) {
        throw new FileBridgeError("INVALID_OPTION", "https.allowHosts must be a non-empty list of hosts");
      }
      const maxRedirects = https.maxRedirects ?? 3;
      if (!Number.isSafeInteger(maxRedirects) || maxRedirects < 0) {
        throw new FileBridgeError("INVALID_OPTION", "https.maxRedirects must be a non-negative integer");
      }
      const timeoutMs = durationToMs(https.timeout ?? DEFAULT_TIMEOUT, "https.timeout");
      if (timeoutMs <= 0) throw new FileBridgeError("INVALID_OPTION", "https.timeout must be more than zero");
      if (https.ca !== undefined && typeof https.ca !== "string" && !Buffer.isBuffer(https.ca)) {
        throw new FileBridgeError("INVALID_OPTION", "https.ca must be a PEM string or Buffer");
      }
      this.#https = {
        allowHosts: https.allowHosts.map((entry) => parseHostPattern(entry, "https.allowHosts")),
        timeoutMs,
        maxRedirects,
        allowPrivateAddresses: https.allowPrivateAddresses === true,
        ca: https.ca,
      };
    }

    const forms = options.forms ?? {};
    if (typeof forms !== "object" || forms === null) {
      throw new FileBridgeError("INVALID_OPTION", "forms must be an object");
    }
    for (const [key, value] of Object.entries(forms)) {
      if (!["path", "dataUrl", "object", "resolver", "https", "base64"].includes(key)) {
        throw new FileBridgeError("INVALID_OPTION", `forms.${key} is not a known form`);
      }
      if (value !== undefined && typeof value !== "boolean") {
        throw new FileBridgeError("INVALID_OPTION", `forms.${key} must be a boolean`);
      }
    }
    this.#forms = {
      path: forms.path ?? roots.length > 0,
      dataUrl: forms.dataUrl ?? true,
      object: forms.object ?? true,
      resolver: forms.resolver ?? true,
      https: forms.https ?? this.#https !== undefined,
      base64: forms.base64 ?? false,
    };
    if (this.#forms.path && roots.length === 0) {
      throw new FileBridgeError("INVALID_OPTION", "forms.path needs at least one entry in roots");
    }
    if (this.#forms.https && this.#https === undefined) {
      throw new FileBridgeError("INVALID_OPTION", "forms.https needs https.allowHosts");
    }
    for (const resolver of options.resolvers ?? []) this.addResolver(resolver);
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

  /** The names of the forms currently enabled, as shown in `UNSUPPORTED_INPUT` errors. */
  get enabledForms(): string[] {
    const names: string[] = [];
    if (this.#forms.resolver) for (const resolver of this.#resolvers) names.push(resolver.name);
    if (this.#forms.dataUrl) names.push("data: URL");
    if (this.#forms.https) names.push("https:// URL");
    if (this.#forms.path) names.push("file:// URI", "local path");
    if (this.#forms.object) names.push("object {name, content (base64)}", "object {uri, name}");
    if (this.#forms.base64) names.push("bare base64");
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
  async resolve(input: unknown, options: ResolveOptions): Promise<ResolvedFile> {
    const ctx = this.#context(options);
    if (ctx.signal?.aborted) throw aborted();
    if (Array.isArray(input)) {
      throw new FileBridgeError(
        "INVALID_INPUT",
        "a list was given where one file was expected; use resolveAll()",
      );
    }
    if (typeof input === "string") return this.#resolveString(input, ctx);
    if (isRecord(input)) {
      if (!this.#forms.object) throw this.#disabled("object");
      return this.#resolveObject(input, ctx);
    }
    throw new FileBridgeError("INVALID_INPUT", "a file must be given as a string or an object", {
      data: { forms: this.enabledForms },
    });
  }

  /**
   * Resolves several file arguments (any mix of forms), at most `concurrency` at a time and at most
   * `maxFiles` in all (`TOO_MANY_FILES`). All or nothing: when one fails, the others are aborted and the ones already resolved are disposed, then
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
    this.#context(options);
    if (inputs.length > this.#maxFiles) {
      throw new FileBridgeError("TOO_MANY_FILES", `at most ${this.#maxFiles} files can be sent at once`, {
        data: { limit: this.#maxFiles, count: inputs.length },
      });
    }
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) controller.abort();
    const limit = pLimit(this.#concurrency);
    let firstError: unknown;
    const settled = await Promise.allSettled(
      inputs.map((input) =>
        limit(async () => {
          if (controller.signal.aborted) throw aborted();
          try {
            return await this.resolve(input, { ...options, signal: controller.signal });
          } catch (error) {
            if (firstError === undefined) {
              firstError = error;
              controller.abort();
            }
            throw error;
          }
        }),
      ),
    );
    options.signal?.removeEventListener("abort", onAbort);
    const resolved = settled.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    if (resolved.length === inputs.length) return resolved;
    await Promise.allSettled(resolved.map((file) => file.dispose()));
    throw firstError ?? aborted();
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
    return wrapWithFiles(this, handler as (args: Args, extra: Extra) => Result | Promise<Result>, options);
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
    const olderThanMs = durationToMs(options.olderThan ?? "1h", "olderThan");
    return sweepCallDirs(this.tmpDir, { olderThanMs, now: this.#now(), active: this.#active });
  }

  // ---------------------------------------------------------------------------------------------

  #context(options: ResolveOptions): CallContext {
    if (typeof options !== "object" || options === null) {
      throw new FileBridgeError("INVALID_INPUT", "resolve() needs options with a scope");
    }
    assertScope(options.scope);
    let maxBytes = this.maxBytes;
    if (options.maxBytes !== undefined) {
      if (!Number.isSafeInteger(options.maxBytes) || options.maxBytes <= 0) {
        throw new FileBridgeError("INVALID_INPUT", "maxBytes must be a positive integer");
      }
      maxBytes = options.maxBytes;
    }
    return {
      scope: options.scope,
      signal: options.signal,
      maxBytes,
      fallbackName: typeof options.name === "string" ? options.name : undefined,
    };
  }

  #disabled(form: string): FileBridgeError {
    return new FileBridgeError("FORM_DISABLED", `this server does not accept files as ${form}`, {
      data: { form, forms: this.enabledForms },
    });
  }

  #roots$(): Promise<Root[]> {
    this.#roots ??= prepareRoots(this.#rootsGiven);
    // Do not cache a failure (a root may be created later).
    this.#roots.catch(() => {
      this.#roots = undefined;
    });
    return this.#roots;
  }

  async #resolveString(input: string, ctx: CallContext): Promise<ResolvedFile> {
    if (input.length === 0) throw new FileBridgeError("INVALID_INPUT", "the file argument is empty");
    // (1) registered resolvers
    let resolver: FileSourceResolver | undefined;
    try {
      resolver = this.#resolvers.find((candidate) => candidate.matches(input));
    } catch (error) {
      throw resolverFailure("a resolver's matches()", error);
    }
    if (resolver) {
      if (!this.#forms.resolver) throw this.#disabled(resolver.name);
      return this.#fromResolver(resolver, input, ctx);
    }
    // (2) data: URL
    if (isDataUrl(input)) {
      if (!this.#forms.dataUrl) throw this.#disabled("data: URL");
      return this.#fromDataUrl(input, ctx);
    }
    const scheme = SCHEME.exec(input)?.[1]?.toLowerCase();
    // (3) https:// (plain http:// is never fetched: FORM_DISABLED)
    if (scheme === "https") {
      if (!this.#forms.https) throw this.#disabled("https:// URL");
      return this.#fromHttps(input, ctx);
    }
    if (scheme === "http") throw this.#disabled("http:// URL (only https:// can be enabled)");
    // (4) file:// URI or path
    if (scheme === "file") {
      if (!this.#forms.path) throw this.#disabled("file:// URI");
      return this.#fromPath(fileUriToPath(input), input, ctx);
    }
    if (scheme !== undefined) {
      throw new FileBridgeError(
        "UNSUPPORTED_INPUT",
        `"${scheme}:" inputs are not supported; accepted forms: ${this.enabledForms.join(", ")}`,
        { data: { scheme, forms: this.enabledForms } },
      );
    }
    const base64Candidate = this.#forms.base64 && BASE64_CHARSET.test(input);
    if (this.#forms.path) {
      try {
        return await this.#fromPath(input, input, ctx);
      } catch (error) {
        // (5) a string that is no file may still be base64, when that form is on.
        if (base64Candidate && isFileBridgeError(error, "NOT_FOUND")) return this.#fromBase64(input, ctx);
        // Base64 may start with "/" (JPEG is "/9j/…"): an absolute "path" outside every root is tried
        // as base64 too, and if it is not valid base64 either, the path refusal stands.
        if (base64Candidate && isFileBridgeError(error, "PATH_NOT_ALLOWED") && error.data?.outsideRoots) {
          try {
            return await this.#fromBase64(input, ctx);
          } catch (base64Error) {
            if (isFileBridgeError(base64Error, "INVALID_BASE64")) throw error;
            throw base64Error;
          }
        }
        throw error;
      }
    }
    // (5) bare base64
    if (this.#forms.base64) {
      if (base64Candidate || !looksLikePath(input)) return this.#fromBase64(input, ctx);
    }
    if (looksLikePath(input)) throw this.#disabled("local path");
    throw new FileBridgeError(
      "UNSUPPORTED_INPUT",
      `the string is not a file in any accepted form; accepted forms: ${this.enabledForms.join(", ")}`,
      { data: { forms: this.enabledForms } },
    );
  }

  async #resolveObject(input: Record<string, unknown>, ctx: CallContext): Promise<ResolvedFile> {
    const name = firstString(input, ["filename", "name", "file_name", "fileName"], "file");
    const mimeType = firstString(input, ["mimeType", "mime_type", "mediaType", "contentType"], "file");
    const content = firstString(input, ["content", "content_base64", "data"], "file");
    const inner: CallContext = {
      ...ctx,
      nameOverride: name ?? ctx.nameOverride,
      mimeOverride: mimeType ?? ctx.mimeOverride,
    };
    if (content !== undefined) {
      const encoding = input.encoding ?? "base64";
      if (encoding === "utf8" || encoding === "utf-8" || encoding === "text") {
        const size = Buffer.byteLength(content, "utf8");
        if (size > ctx.maxBytes) throw tooLarge(size, ctx.maxBytes);
        return this.#materialize(
          inner,
          { kind: "object", detail: "inline text", name, mimeType },
          async (w) => {
            await w.write(Buffer.from(content, "utf8"));
          },
        );
      }
      if (encoding !== "base64") {
        throw new FileBridgeError("INVALID_INPUT", 'file.encoding must be "base64" or "utf8"');
      }
      // Plain text (`encoding: "utf8"`) is taken literally above, even when it starts with "data:".
      if (isDataUrl(content)) return this.#fromDataUrl(content, inner, "object");
      return this.#fromBase64(content, inner, "object");
    }
    const uri = firstString(input, ["uri", "url", "download_url"], "file");
    if (uri !== undefined) {
      let expectedSize: number | undefined;
      if (input.size !== undefined && input.size !== null) {
        if (typeof input.size !== "number" || !Number.isSafeInteger(input.size) || input.size < 0) {
          throw new FileBridgeError("INVALID_INPUT", "file.size must be a non-negative integer");
        }
        expectedSize = input.size;
        if (expectedSize > ctx.maxBytes) throw tooLarge(expectedSize, ctx.maxBytes);
      }
      const expectedSha256 =
        input.digest === undefined || input.digest === null ? undefined : parseSha256Digest(input.digest);
      const file = await this.#resolveString(uri, inner);
      if (
        (expectedSize !== undefined && file.size !== expectedSize) ||
        (expectedSha256 !== undefined && file.sha256 !== expectedSha256)
      ) {
        await file.dispose();
        throw new FileBridgeError("DIGEST_MISMATCH", "the file does not match its declared size or digest", {
          data: { size: file.size, ...(expectedSize !== undefined ? { expectedSize } : {}) },
        });
      }
      return file;
    }
    throw new FileBridgeError(
      "INVALID_INPUT",
      "a file object needs content (base64), a uri, or a download_url",
      { data: { forms: this.enabledForms } },
    );
  }

  async #fromDataUrl(
    input: string,
    ctx: CallContext,
    kind: FileSourceKind = "data-url",
  ): Promise<ResolvedFile> {
    const parsed = parseDataUrl(input);
    const spec: MaterializeSpec = {
      kind,
      detail: `data: URL (${parsed.mimeType.split(";")[0]})`,
      name: parsed.name,
      mimeType: parsed.mimeTypeDeclared ? parsed.mimeType : undefined,
    };
    // [decode] Size cap before anything is decoded; then decoded chunk by chunk into the writer
    // (which enforces the cap exactly), without copying the payload, letting the event loop turn.
    assertDataUrlFits(parsed, ctx.maxBytes);
    return this.#materialize(ctx, spec, (writer) => decodeDataUrlTo(parsed, writer));
  }

  async #fromBase64(input: string, ctx: CallContext, kind: FileSourceKind = "base64"): Promise<ResolvedFile> {
    // [decode] Size cap from the length (whitespace counted only if needed), nothing copied.
    const plan = assertBase64Fits(planBase64(input), ctx.maxBytes);
    const spec: MaterializeSpec = {
      kind,
      detail: kind === "object" ? "inline base64" : "base64",
      name: undefined,
      mimeType: undefined,
    };
    return this.#materialize(ctx, spec, (writer) => decodeBase64To(plan, writer)); // [decode]
  }

  async #fromHttps(input: string, ctx: CallContext): Promise<ResolvedFile> {
    const https = this.#https;
    if (!https) throw this.#disabled("https:// URL");
    const response = await safeFetch(input, { ...https, maxBytes: ctx.maxBytes, signal: ctx.signal });
    const segment = decodeSegment(response.url.pathname.split("/").pop() ?? "");
    const spec: MaterializeSpec = {
      kind: "https",
      detail: `${response.url.origin}${response.url.pathname}`,
      name: response.fileName ?? (segment || undefined),
      mimeType: response.contentType,
      expectedSize: response.contentLength,
    };
    try {
      return await this.#materialize(ctx, spec, async (writer) => {
        for await (const chunk of response.body) await writer.write(chunk);
      });
    } finally {
      response.cancel();
    }
  }

  async #fromPath(path: string, detail: string, ctx: CallContext): Promise<ResolvedFile> {
    const found: ContainedFile = await resolveContainedPath(path, await this.#roots$());
    if (found.size > ctx.maxBytes) throw tooLarge(found.size, ctx.maxBytes);
    if (found.size === 0 && !this.#allowEmpty) {
      throw new FileBridgeError("EMPTY_FILE", "the file is empty");
    }
    // Hash without copying: local inputs are handed over as they are and never deleted.
    const writerLike = new HashOnly(ctx.maxBytes, ctx.signal);
    for await (const chunk of createReadStream(found.path)) writerLike.update(chunk as Buffer);
    if (writerLike.size === 0 && !this.#allowEmpty)
      throw new FileBridgeError("EMPTY_FILE", "the file is empty");
    const name = sanitizeFileName(ctx.nameOverride ?? baseName(found.path.replaceAll("\\", "/")));
    return new LocalResolvedFile({
      name,
      mimeType: chooseMediaType(ctx.mimeOverride, name, writerLike.head),
      size: writerLike.size,
      sha256: writerLike.digest(),
      path: found.path,
      source: { kind: "path", detail },
    });
  }

  async #fromResolver(resolver: FileSourceResolver, input: string, ctx: CallContext): Promise<ResolvedFile> {
    let result: ResolverResult | null;
    try {
      result = await resolver.resolve(input, {
        scope: ctx.scope,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
    } catch (error) {
      if (ctx.signal?.aborted) throw aborted();
      throw resolverFailure(`the ${resolver.name} resolver`, error);
    }
    if (ctx.signal?.aborted) throw aborted();
    if (!result) throw new FileBridgeError("NOT_FOUND", `no such ${resolver.name}`, { data: { uri: input } });
    if (result.size !== undefined && result.size > ctx.maxBytes) throw tooLarge(result.size, ctx.maxBytes);
    const spec: MaterializeSpec = {
      kind: "resolver",
      detail: resolver.name,
      name: result.name,
      mimeType: result.mimeType,
      expectedSize: result.size,
      expectedSha256: result.sha256,
    };
    return this.#materialize(ctx, spec, async (writer) => {
      const stream: Readable = result.localPath ? createReadStream(result.localPath) : await result.open();
      try {
        for await (const chunk of stream) await writer.write(chunk as Buffer);
      } finally {
        stream.destroy();
      }
    });
  }

  /**
   * Writes the bytes a producer yields into a fresh per-call folder, hashing and capping as it goes,
   * then names the file. On any failure the folder is removed and the error is a FileBridgeError.
   */
  async #materialize(ctx: CallContext, spec: MaterializeSpec, produce: Producer): Promise<ResolvedFile> {
    if (ctx.signal?.aborted) throw aborted();
    // The folder is made on the thread pool while the producer decodes its first chunk.
    const dirReady = createCallDir(this.tmpDir).then((made) => {
      this.#active.add(made);
      return made;
    });
    dirReady.catch(() => {});
    // With a usable name the file is written under it directly; otherwise under a placeholder that
    // is renamed once the sniffed type has given it an extension.
    const givenName = sanitizeFileName(ctx.nameOverride ?? spec.name ?? ctx.fallbackName, "");
    const fileName = givenName ? diskName(givenName) : ".partial";
    // [decode] Inputs decoded from the argument itself are hashed when `sha256` is first read (hashing
    // while writing cost more than decoding and writing); streamed ones and digest checks hash now.
    const hashNow = spec.expectedSha256 !== undefined || !DECODED_KINDS.has(spec.kind);
    const writer = TempFileWriter.deferred(
      dirReady.then((made) => join(made, fileName)),
      ctx.maxBytes,
      { signal: ctx.signal, hash: hashNow },
    );
    try {
      await produce(writer);
      const written = await writer.finish();
      const dir = await dirReady;
      const partial = join(dir, fileName);
      if (ctx.signal?.aborted) throw aborted();
      if (written.size === 0 && !this.#allowEmpty)
        throw new FileBridgeError("EMPTY_FILE", "the file is empty");
      if (
        (spec.expectedSize !== undefined && spec.expectedSize !== written.size) ||
        (spec.expectedSha256 !== undefined && spec.expectedSha256.toLowerCase() !== written.sha256)
      ) {
        throw new FileBridgeError(
          "DIGEST_MISMATCH",
          "the content does not match its declared size or digest",
          {
            data: { size: written.size },
          },
        );
      }
      const mimeType = chooseMediaType(ctx.mimeOverride ?? spec.mimeType, givenName || "file", written.head);
      let name = givenName;
      if (!name) {
        const ext = extensionFor(mimeType);
        name = ext && parseMediaType(mimeType)?.essence !== OCTET_STREAM ? `file.${ext}` : "file";
      }
      const path = givenName ? partial : join(dir, diskName(name));
      if (path !== partial) await rename(partial, path);
      return new LocalResolvedFile({
        name,
        mimeType,
        size: written.size,
        sha256: written.sha256 ?? (() => sha256OfFileSync(path)), // [decode] lazy when not hashed yet
        path,
        source: { kind: spec.kind, detail: spec.detail },
        tempDir: dir,
        onDispose: () => this.#active.delete(dir),
      });
    } catch (error) {
      await writer.close().catch(() => {});
      const dir = await dirReady.catch(() => undefined);
      if (dir) {
        await removeDir(dir).catch(() => {});
        this.#active.delete(dir);
      }
      if (ctx.signal?.aborted && !isFileBridgeError(error, "TIMEOUT")) {
        throw isFileBridgeError(error, "ABORTED") ? error : aborted();
      }
      if (isFileBridgeError(error)) throw error;
      throw new FileBridgeError("STORAGE_ERROR", "could not write the temp file", { cause: error });
    }
  }
}

/** Hashes a local file while reading it, with the same cap and abort checks as a temp-file write. */
class HashOnly {
  readonly #hash = createHash("sha256");
  size = 0;
  head: Buffer = Buffer.alloc(0);
  constructor(
    private readonly maxBytes: number,
    private readonly signal: AbortSignal | undefined,
  ) {}
  update(chunk: Buffer): void {
    if (this.signal?.aborted) throw aborted();
    this.size += chunk.length;
    if (this.size > this.maxBytes) throw tooLarge(this.size, this.maxBytes);
    this.#hash.update(chunk);
    if (this.head.length < 8) this.head = Buffer.concat([this.head, chunk.subarray(0, 8 - this.head.length)]);
  }
  digest(): string {
    return this.#hash.digest("hex");
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Whether a string that matched no other form is meant as a path (for `FORM_DISABLED` vs `UNSUPPORTED_INPUT`). */
function looksLikePath(input: string): boolean {
  return (
    input.startsWith("/") ||
    input.startsWith("./") ||
    input.startsWith("../") ||
    input.startsWith("~") ||
    input.startsWith("\\") ||
    /^[A-Za-z]:[\\/]/.test(input) ||
    /[/\\]/.test(input) ||
    /^[^\s]+\.[A-Za-z0-9]{1,10}$/.test(input)
  );
}
