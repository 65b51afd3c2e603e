/**
 * The OpenAI Apps SDK's host attachment convention: a tool lists its file fields in
 * `_meta["openai/fileParams"]`, and hosts that follow it hand the tool a `{download_url, file_id,
 * mime_type?, file_name?}` object for each. `fileParamsMeta()` (public as `bridge.fileParamsMeta()`)
 * builds that `_meta` entry from the `fileInput({ fileParams: true })` fields of a tool's input
 * schema; the bridge resolves the objects (sources/download-url.ts).
 */
import { optionCheck } from "../internal/options.js";
import { FILE_PARAMS } from "./file-input.js";
import { isZod, unwrap, type ZodLike } from "./zod-schema.js";

/** The `_meta` key of the OpenAI Apps SDK convention: the tool's top-level file fields. */
export const OPENAI_FILE_PARAMS = "openai/fileParams";

const check = optionCheck("FileBridge.fileParamsMeta");

/** The schemas directly inside `schema` (list items, object properties, union members, pipes). */
function children(schema: ZodLike): unknown[] {
  const def = schema._zod.def;
  if (def.type === "array") return [def.element];
  if (def.type === "object") return Object.values((def.shape as Record<string, unknown>) ?? {});
  if (def.type === "union") return [...((def.options as unknown[]) ?? [])];
  if (def.type === "pipe") return [def.in, def.out];
  if (def.type === "record") return [def.valueType];
  if (def.type === "tuple") return [...((def.items as unknown[]) ?? [])];
  return [];
}

/** True when a `fileParams` field sits anywhere below `schema` (depth-bounded: `z.lazy` can loop). */
function marksBelow(schema: ZodLike, depth = 0): boolean {
  if (depth > 16) return false;
  return children(unwrap(schema)).some(
    (child) => isZod(child) && (FILE_PARAMS.has(unwrap(child)._zod.def) || marksBelow(child, depth + 1)),
  );
}

/** A `fileInput({ fileParams: true })` schema (under wrappers). */
function isMarked(schema: ZodLike): boolean {
  return FILE_PARAMS.has(unwrap(schema)._zod.def);
}

/** A list whose elements are `fileInput({ fileParams: true })` schemas: a host hands one attachment per element. */
function isMarkedList(schema: ZodLike): boolean {
  const def = unwrap(schema)._zod.def;
  return def.type === "array" && isZod(def.element) && isMarked(def.element);
}

/**
 * The tool `_meta` entry naming the tool's host attachment fields: every top-level field of
 * `inputSchema` made with `fileInput({ fileParams: true })` (also under `.optional()`,
 * `.nullable()`, `.default()`, `.describe()`), or a top-level **list** of them
 * (`z.array(fileInput({ fileParams: true }))`: hosts hand one attachment per element, and each is
 * resolved like a single one; name it `"files[]"` in `withFiles`). Spread it into the tool's
 * `_meta`; `{}` when no field is marked. A marked field anywhere else (inside a nested object, a
 * union, a list of objects or of lists) fails with `INVALID_OPTION`: the convention lists top-level
 * fields only, and a host would hand such a field nothing.
 *
 * @param inputSchema the tool's input: the raw shape given to `registerTool`, or a `z.object`.
 *
 * @example
 * ```ts
 * const inputSchema = { attachment: bridge.fileInput({ fileParams: true }), note: z.string().optional() };
 * server.registerTool(
 *   "summarize",
 *   { inputSchema, _meta: fileParamsMeta(inputSchema) }, // { "openai/fileParams": ["attachment"] }
 *   bridge.withFiles(async ({ attachment }) => summarize(attachment), { fields: ["attachment"] }),
 * );
 * ```
 */
export function fileParamsMeta(inputSchema: object): { [OPENAI_FILE_PARAMS]?: string[] } {
  check.object(inputSchema, "inputSchema");
  let shape = inputSchema as Record<string, unknown>;
  if (isZod(inputSchema)) {
    const root = unwrap(inputSchema)._zod.def;
    check.require(root.type === "object", "inputSchema", "must be a z.object or a raw shape of fields");
    shape = root.shape as Record<string, unknown>;
  }
  const names: string[] = [];
  for (const [name, field] of Object.entries(shape)) {
    if (!isZod(field)) continue;
    if (isMarked(field) || isMarkedList(field)) {
      names.push(name);
      continue;
    }
    check.require(
      !marksBelow(field),
      `inputSchema.${name}`,
      "holds a fileInput({ fileParams: true }) below the top level; openai/fileParams lists top-level fields only",
    );
  }
  return names.length > 0 ? { [OPENAI_FILE_PARAMS]: names } : {};
}
