import {
  FileBridgeError,
  isFileBridgeError,
  type ToolErrorResult,
  toToolErrorResult,
} from "../errors/file-bridge-error.js";
import {
  collectFieldSlots,
  type FieldSlot,
  type FieldStep,
  parseFieldPath,
} from "../internal/field-paths.js";
import { randomUUID } from "../internal/node-builtins.js";
import { optionCheck } from "../internal/options.js";
import { scopeSourceOf } from "../mcp/scope-source.js";
import { calledTool } from "../mcp/tool-call-schemas.js";
import type { ContentSniffer } from "../media/content-type.js";
import { defaultScope, type ScopeFunction, type ScopeSource } from "../scope/scope.js";
import {
  asMaxSizeExceeded,
  assertAccepted,
  constraintsAt,
  constraintsPublished,
  type FileConstraints,
} from "./file-constraints.js";
import { answerDescriptors, type DescriptorAnswerer } from "./file-descriptors.js";
import { jsonEncodedObject } from "./sources/stray-forms.js";
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

/**
 * How `withFiles` resolves its fields (a FileBridge's): each value to one file, or (`each`, for the
 * items of a list field) to every file it stands for; all or nothing.
 */
export type ResolveFields = (
  items: ReadonlyArray<{ value: unknown; each: boolean; maxBytes?: number }>,
  options: { scope: string; signal?: AbortSignal; maxBytes?: number },
) => Promise<ResolvedFile[][]>;

interface PreparedOptions {
  readonly fields: FieldStep[][];
  /** The `inputSchema` option, when given (it wins over the called tool's). */
  readonly inputSchema: object | undefined;
  /** The `accept` option. */
  readonly accept: readonly string[] | undefined;
  readonly sniff: ContentSniffer | undefined;
  readonly pass: "path" | "file";
  readonly scope: ScopeFunction;
  readonly maxBytes: number | undefined;
}

const check = optionCheck("withFiles");

function prepare(options: WithFilesOptions): PreparedOptions {
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

/** What each field accepts under `inputSchema` (published `x-mcp-file`) and the `accept` option. */
function fieldConstraints(
  prepared: PreparedOptions,
  inputSchema: unknown,
): Array<FileConstraints | undefined> {
  return prepared.fields.map((steps) => {
    const published = inputSchema ? constraintsAt(inputSchema, steps) : undefined;
    const accept = prepared.accept ?? published?.accept;
    // The bridge's own cap, published by a `bridge.fileInput()` given no `maxBytes`, is replaced by
    // this tool's `maxBytes` (as on a server nothing is attached to); a field's own cap is not.
    const replaced = published?.maxSizeIsBridgeDefault === true && prepared.maxBytes !== undefined;
    const maxSize = replaced ? undefined : published?.maxSize;
    if (accept === undefined && maxSize === undefined) return undefined;
    return {
      ...(accept ? { accept } : {}),
      ...(maxSize !== undefined ? { maxSize } : {}),
    };
  });
}

/**
 * The schema this call's fields are checked against: the `inputSchema` option, else the one the
 * called tool was registered with (on a watched server, see mcp/tool-call-schemas.ts). When neither
 * is known and a `fileInput()` in this process publishes a constraint, the call is refused
 * (`INVALID_OPTION`): the constraint might be this tool's, and running unchecked is what the draft
 * forbids.
 */
function schemaOfCall(prepared: PreparedOptions, extra: unknown): unknown {
  if (prepared.inputSchema !== undefined) return prepared.inputSchema;
  const called = calledTool(extra);
  if (called) return called.inputSchema;
  if (!constraintsPublished()) return undefined;
  throw new FileBridgeError(
    "INVALID_OPTION",
    "withFiles: the accept / maxBytes a fileInput() publishes cannot be checked on this call: the " +
      "server does not know the bridge. Call bridge.attach(server) once, before it connects (or pass " +
      "the tool's inputSchema to withFiles)",
    { data: { option: "attach", reason: "constraints_unchecked" } },
  );
}

/** Whether a file argument carries its bytes inline (a data: URL or an object with content). */
function isInline(value: unknown): boolean {
  if (typeof value === "string") {
    if (/^data:/i.test(value.trimStart())) return true;
    const encoded = jsonEncodedObject(value);
    return encoded !== undefined && isInline(encoded);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  return ["content", "content_base64", "data"].some(
    (key) => typeof (value as Record<string, unknown>)[key] === "string",
  );
}

/**
 * The caller's scope; when there is none (`FORBIDDEN`, `no_scope`) and every file is inline, a
 * throwaway scope of this call: nothing is stored or looked up, so the call needs no identity, and
 * the throwaway scope owns nothing another caller could reach.
 */
function scopeFor(prepared: PreparedOptions, source: ScopeSource, values: unknown[]): string {
  try {
    return prepared.scope(source);
  } catch (error) {
    const noScope = isFileBridgeError(error, "FORBIDDEN") && error.data?.reason === "no_scope";
    if (noScope && values.every(isInline)) return `inline-call:${randomUUID()}`;
    throw error;
  }
}

/**
 * Puts the resolved files where their values were: a field's one file in its place, and a list
 * item's files spliced in at the item's position (later items move along).
 */
function placeFiles(slots: readonly FieldSlot[], groups: ResolvedFile[][], pass: "path" | "file"): void {
  const lists = new Map<unknown[], Map<number, unknown[]>>();
  slots.forEach((slot, i) => {
    const values = (groups[i] as ResolvedFile[]).map((file) => (pass === "path" ? file.path : file));
    if (!Array.isArray(slot.container)) {
      (slot.container as Record<string, unknown>)[slot.key] = values[0];
      return;
    }
    const items = lists.get(slot.container) ?? new Map<number, unknown[]>();
    items.set(slot.key as number, values);
    lists.set(slot.container, items);
  });
  for (const [list, items] of lists) {
    const next = list.flatMap((item, index) => items.get(index) ?? [item]);
    list.splice(0, list.length, ...next);
  }
}

function signalOf(extra: unknown): AbortSignal | undefined {
  if (typeof extra !== "object" || extra === null) return undefined;
  const signal = (extra as { signal?: unknown }).signal;
  return signal instanceof AbortSignal ? signal : undefined;
}

/** The published `maxSize` a `FILE_TOO_LARGE` came from (its limit is one of the fields' caps), if any. */
function publishedCap(
  error: unknown,
  found: ReadonlyArray<{ rule: FileConstraints | undefined }>,
): number | undefined {
  const limit = (error as { data?: { limit?: unknown } } | null)?.data?.limit;
  if (typeof limit !== "number") return undefined;
  return found.some(({ rule }) => rule?.maxSize === limit) ? limit : undefined;
}

/** Counts a call's work as under way in the bridge's temp dir until it settles (see `FileBridge.close`). */
export type UnderWay = <T>(work: Promise<T>) => Promise<T>;

/**
 * The implementation behind `FileBridge.withFiles`: resolves the configured fields of a copy of the
 * arguments (all or nothing), calls the handler with paths or files in their place, and disposes
 * every file once the handler has returned or thrown. A field that takes one file gets one file (an
 * upload handle of several files fails with `INVALID_INPUT`); an item of a list field gets every
 * file it stands for, in place (one upload handle of a 3-file upload becomes 3 items). A resolution
 * failure is returned as an `isError` tool result and the handler is not called.
 */
export function wrapWithFiles<Args, Extra, Result>(
  resolveFields: ResolveFields,
  handler: (args: Args, extra: Extra) => Result | Promise<Result>,
  options: WithFilesOptions,
  descriptors?: () => DescriptorAnswerer | undefined,
  underWay: UnderWay = (work) => work,
): (args: Args, extra: Extra) => Promise<Result | ToolErrorResult> {
  check.require(typeof handler === "function", "handler", "must be a function");
  const prepared = prepare(options);
  /** The files resolved and checked, or the result to return at once; nothing left on disk then. */
  const ready = async (
    args: Args,
    extra: Extra,
  ): Promise<{ result: Result | ToolErrorResult } | { nextArgs: Args; files: ResolvedFile[] }> => {
    let files: ResolvedFile[] = [];
    let nextArgs: Args;
    try {
      nextArgs = structuredClone(args);
      const fieldSlots = prepared.fields.map((steps) => collectFieldSlots(nextArgs, steps));
      const constraints = fieldSlots.some((each) => each.length > 0)
        ? fieldConstraints(prepared, schemaOfCall(prepared, extra))
        : [];
      const found = fieldSlots.flatMap((each, field) =>
        each.map((slot) => ({ slot, rule: constraints[field] })),
      );
      const slots = found.map((entry) => entry.slot);
      if (slots.length > 0) {
        // SDK v2 contexts carry auth in `ctx.http`: normalized so scope functions see the caller.
        const source = scopeSourceOf(extra ?? {});
        const scope = scopeFor(
          prepared,
          source as ScopeSource,
          slots.map((slot) => slot.value),
        );
        const signal = signalOf(source);
        // Descriptors (the files extension revision Claude Code ships): upload_required first.
        const answered = await answerDescriptors(
          slots.map((slot) => slot.value),
          descriptors?.(),
          { scope, extra },
        );
        if ("result" in answered) return { result: answered.result as Result };
        const groups = await resolveFields(
          found.map(({ slot, rule }, i) => ({
            value: answered.values[i],
            each: Array.isArray(slot.container),
            ...(rule?.maxSize !== undefined ? { maxBytes: rule.maxSize } : {}),
          })),
          {
            scope,
            ...(signal ? { signal } : {}),
            ...(prepared.maxBytes !== undefined ? { maxBytes: prepared.maxBytes } : {}),
          },
        ).catch((error: unknown) => {
          throw asMaxSizeExceeded(error, publishedCap(error, found));
        });
        files = groups.flat();
        // `accept`: what the bytes are, before the handler sees any of them.
        await Promise.all(
          found.flatMap(({ rule }, i) =>
            rule?.accept
              ? (groups[i] as ResolvedFile[]).map((file) =>
                  assertAccepted(file, rule.accept ?? [], prepared.sniff),
                )
              : [],
          ),
        );
        placeFiles(slots, groups, prepared.pass);
      }
    } catch (error) {
      await Promise.allSettled(files.map((file) => file.dispose()));
      return { result: toToolErrorResult(error) };
    }
    return { nextArgs, files };
  };
  return async (args: Args, extra: Extra): Promise<Result | ToolErrorResult> => {
    // Under way (for the bridge's close()) until the files are ready or, refused, removed again.
    const call = await underWay(ready(args, extra));
    if ("result" in call) return call.result;
    try {
      return await handler(call.nextArgs, extra);
    } finally {
      await Promise.allSettled(call.files.map((file) => file.dispose()));
    }
  };
}
