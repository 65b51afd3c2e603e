import type { Readable } from "node:stream";

/**
 * Which input form a file came from.
 *
 * @example
 * ```ts
 * const file = await bridge.resolve(args.file, { scope });
 * const kind: FileSourceKind = file.source.kind; // e.g. "data-url"
 * ```
 */
export type FileSourceKind = "path" | "data-url" | "object" | "resolver" | "https" | "base64";

/**
 * Where a {@link ResolvedFile} came from, for logs and tool output (never the content).
 *
 * @example
 * ```ts
 * const { kind, detail }: FileSource = file.source;
 * console.log(`${file.name} came from ${kind}: ${detail}`); // report.pdf came from resolver: upload handle
 * ```
 */
export interface FileSource {
  /** The input form that matched. */
  readonly kind: FileSourceKind;
  /**
   * A short description: the path, URL or URI (data and base64 payloads are not repeated), or the
   * name of the resolver that matched (e.g. `"upload handle"`).
   */
  readonly detail: string;
}

/**
 * A file argument turned into a real local file. `path` exists until `dispose()`; `dispose()` is
 * idempotent and also runs on `await using`.
 *
 * @example
 * ```ts
 * await using file: ResolvedFile = await bridge.resolve(args.file, { scope });
 * console.log(file.name, file.mimeType, file.size, file.path);
 * const text = (await file.bytes()).toString("utf8");
 * ```
 */
export interface ResolvedFile extends AsyncDisposable {
  /** Sanitized file name (no folders), e.g. `report.pdf`. */
  readonly name: string;
  /** Media type. */
  readonly mimeType: string;
  /** Size in bytes. */
  readonly size: number;
  /**
   * Lower-case hex sha256 of the content. For inputs decoded from the argument itself (`data:` URLs,
   * base64 and inline object content) it is computed from the file at `path` when first read, then
   * kept: resolving does not pay for a hash nobody reads. Read it before changing the file or calling
   * `dispose()` (after which a first read throws `NOT_FOUND`). Inputs with a declared digest are
   * checked while resolving, and streamed inputs are hashed as they arrive.
   */
  readonly sha256: string;
  /** Absolute path of a local file with the content. */
  readonly path: string;
  /** Which form it came from. */
  readonly source: FileSource;
  /** The whole content in memory. Prefer `stream()` for large files. */
  bytes(): Promise<Buffer>;
  /** A fresh read stream of the content. */
  stream(): Readable;
  /** Removes any temp file made for it. The original of a local-path input is never touched. */
  dispose(): Promise<void>;
}

/**
 * What a {@link FileSourceResolver} hands back for a string it recognises.
 *
 * @example
 * ```ts
 * const result: ResolverResult = {
 *   name: "report.pdf",
 *   mimeType: "application/pdf",
 *   open: async () => createReadStream("/srv/reports/report.pdf"),
 * };
 * ```
 */
export interface ResolverResult {
  /** File name. */
  name: string;
  /** Media type, if known. */
  mimeType?: string;
  /** Size in bytes, if known (checked against the bridge's cap before reading). */
  size?: number;
  /** Lower-case hex sha256, if known. */
  sha256?: string;
  /** A local file with the bytes, if there is one: copied instead of streamed (fast path). */
  localPath?: string;
  /** Opens the bytes. */
  open(): Promise<Readable>;
}

/**
 * Context passed to a {@link FileSourceResolver}.
 *
 * @example
 * ```ts
 * bridge.addResolver({
 *   name: "ticket id",
 *   matches: (input) => input.startsWith("ticket:"),
 *   resolve: async (input, context: ResolverContext) => lookUp(context.scope, input.slice(7), context.signal),
 * });
 * ```
 */
export interface ResolverContext {
  /** Scope of the caller; a resolver must treat other scopes' files as missing. */
  readonly scope: string;
  /** Aborts the resolution. */
  readonly signal?: AbortSignal;
}

/**
 * The hook through which other pieces teach a {@link FileBridge} new string forms: upload handles
 * (`upload://…`) and resource URIs this server issued (`file://uploads/…`, `artifact://…`).
 * Resolvers are tried before every built-in string form, in the order they were added.
 *
 * @example
 * ```ts
 * bridge.addResolver({
 *   name: "ticket id",
 *   matches: (input) => input.startsWith("ticket:"),
 *   resolve: async (input, { scope }) => lookUp(scope, input.slice(7)),
 * });
 * ```
 */
export interface FileSourceResolver {
  /** Human-readable name of the form, used in error messages (e.g. `"upload handle"`). */
  readonly name: string;
  /** Cheap, synchronous test: is this string for me? */
  matches(input: string): boolean;
  /** Resolves the string in the caller's scope; `null` = not found (also for other scopes). */
  resolve(input: string, context: ResolverContext): Promise<ResolverResult | null>;
  /**
   * For a string that may stand for several files (the handle of a batch upload): every one of
   * them, in order; `null` = not found. Used by `FileBridge.resolveEach`; `resolve` then answers
   * the first. Without it, `resolveEach` gives `resolve`'s one file.
   */
  resolveEach?(input: string, context: ResolverContext): Promise<ResolverResult[] | null>;
}
