/**
 * `FileBridge.withFiles`' options and types, and their check when a handler is wrapped; what a call
 * of the wrapped handler runs is loaded on first use (resolution.ts, with the bridge's
 * resolution: issue 39).
 */
import { parseFieldPath } from "../internal/field-paths.js";
import { optionCheck } from "../internal/options.js";
import type { ContentSniffer } from "../media/content-type.js";
import { defaultScope, type ScopeFunction } from "../scope/scope.js";
import type { PreparedOptions } from "./resolution.js";
import type { ResolvedFile } from "./types.js";

/**
 * Options of `FileBridge.withFiles`.
 *
 * @example
 * ```ts
 * const options: WithFilesOptions = { fields: ["files[]", "input.document"], pass: "file", maxBytes: 5_000_000 };
 * server.registerTool("merge", { inputSchema }, bridge.withFiles(handler, options));
 * ```
 */
export interface WithFilesOptions {
  /**
   * The argument fields holding files: `"file"` (a top-level field), `"files[]"` (each item of a
   * list), `"input.document"` (a nested field), or combinations such as `"jobs[].attachment"`.
   * Missing or `null` fields are left alone, so optional file arguments stay optional.
   */
  fields: readonly string[];
  /**
   * What the handler receives in place of each file: its local path, or the whole {@link ResolvedFile}
   * (name, mimeType, size, sha256, path, bytes(), stream()).
   * @default "path"
   */
  pass?: "path" | "file";
  /** Derives the caller's scope from the request's `extra`. @default defaultScope */
  scope?: ScopeFunction;
  /** Size cap for each file of this tool, replacing the bridge's. @default the bridge's maxBytes */
  maxBytes?: number;
  /**
   * The tool's input schema (the raw shape given to `registerTool`, or a `z.object`). What each
   * field's `fileInput({ accept, maxBytes })` publishes (`x-mcp-file { accept, maxSize }`) is
   * enforced before the handler runs, for every input form: `maxSize` as a cap on the decoded
   * bytes (`FILE_TOO_LARGE`, `data.reason: "maxSizeExceeded"`), `accept` on what the bytes are,
   * not only what the client declared (`UNSUPPORTED_MEDIA_TYPE`, `data.reason: "mimeTypeNotAccepted"`).
   * Not needed on a server the bridge (`bridge.attach(server)`) or any other piece is attached to:
   * there each call's schema is the one the called tool was registered with. Give it where the
   * handler is not run by an `McpServer` (a low-level `Server`'s own `tools/call`, a test).
   * @default the called tool's registered schema, on an attached server
   */
  inputSchema?: object;
  /** Media types every file of this tool must be (checked on the bytes, like a field's `accept`). @default none */
  accept?: readonly string[];
  /**
   * Tells the type of bytes the built-in check does not know (see `contentMediaType` in
   * `media/content-type.ts`): return a media type, or `undefined` for the built-in answer.
   * @default none
   */
  sniff?: ContentSniffer;
}

/**
 * What a file field becomes for the handler: a local path (`"path"`) or the {@link ResolvedFile}.
 *
 * @example
 * ```ts
 * type AsPath = PassedFile<"path">; // string
 * type AsFile = PassedFile<"file">; // ResolvedFile
 * ```
 */
export type PassedFile<Pass extends "path" | "file"> = Pass extends "file" ? ResolvedFile : string;

type Leaf<X, V> = X extends undefined | null ? X : V;
type Descend<X, Rest extends string, V> = Rest extends ""
  ? Leaf<X, V>
  : X extends undefined | null
    ? X
    : AtPath<X, Rest, V>;
type EachItem<X, Rest extends string, V> = X extends readonly (infer Item)[] ? Descend<Item, Rest, V>[] : X;
type AtSegment<T, Segment extends string, Rest extends string, V> = T extends object
  ? Segment extends `${infer Key}[]`
    ? { [K in keyof T]: K extends Key ? EachItem<T[K], Rest, V> : T[K] }
    : { [K in keyof T]: K extends Segment ? Descend<T[K], Rest, V> : T[K] }
  : T;
type AtPath<T, Path extends string, V> = Path extends `${infer Segment}.${infer Rest}`
  ? AtSegment<T, Segment, Rest, V>
  : AtSegment<T, Path, "", V>;

/**
 * The arguments a `withFiles` handler sees: `Args` with every field named in `Fields` replaced by
 * {@link PassedFile} (optional fields stay optional; `files[]` becomes an array of them). With field
 * lists that are not literal, `Args` is left as it is.
 *
 * @example
 * ```ts
 * type Seen = WithFilesArgs<{ file: string | object; note?: string }, ["file"], "path">;
 * // { file: string; note?: string }
 * ```
 */
export type WithFilesArgs<
  Args,
  Fields extends readonly string[],
  Pass extends "path" | "file",
> = Fields extends readonly [infer Field extends string, ...infer More extends readonly string[]]
  ? WithFilesArgs<AtPath<Args, Field, PassedFile<Pass>>, More, Pass>
  : Args;

const check = optionCheck("withFiles");

/**
 * Checks `withFiles`' handler and options once, when the handler is wrapped (a bad option fails at
 * start, not on a call): what each call of the wrapped handler then runs with (resolution.ts).
 */
export function prepareWithFiles(handler: unknown, options: WithFilesOptions): PreparedOptions {
  check.require(typeof handler === "function", "handler", "must be a function");
  check.object(options);
  check.require(
    Array.isArray(options.fields) && options.fields.length > 0,
    "fields",
    "must be a non-empty list of field paths",
  );
  const pass = check.oneOf(options.pass, "pass", ["path", "file"], "path");
  check.optionalFunction(options.scope, "scope");
  if (options.maxBytes !== undefined) check.integer(options.maxBytes, "maxBytes", 0, { min: 1 });
  check.require(
    options.inputSchema === undefined ||
      (typeof options.inputSchema === "object" && options.inputSchema !== null),
    "inputSchema",
    "must be the tool's input schema (a raw shape or a z.object)",
  );
  check.require(
    options.accept === undefined ||
      (Array.isArray(options.accept) && options.accept.every((type) => typeof type === "string")),
    "accept",
    "must be a list of media types",
  );
  check.optionalFunction(options.sniff, "sniff");
  const fields = options.fields.map((field) => parseFieldPath(field, "fields"));
  return {
    fields,
    inputSchema: options.inputSchema,
    accept: options.accept,
    sniff: options.sniff,
    pass,
    scope: options.scope ?? defaultScope,
    maxBytes: options.maxBytes,
  };
}
