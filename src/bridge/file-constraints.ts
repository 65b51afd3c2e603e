/**
 * What a tool publishes about a file argument (`fileInput({ accept, maxBytes })`, on the wire
 * `x-mcp-file { accept, maxSize }`), enforced before its handler runs. SEP-2631: servers MUST
 * validate `accept` (type/subtype, case-insensitive, wildcards) and `maxSize` (decoded bytes) of
 * `x-mcp-file` fields. The size is a cap handed to the resolution (no byte past it is read or
 * written where the form allows); the type is what the bytes are (media/content-type.ts), not what
 * the client declared.
 */
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import type { FieldStep } from "../internal/field-paths.js";
import {
  acceptsMediaType,
  CONTENT_SNIFF_BYTES,
  type ContentSniffer,
  contentMediaType,
} from "../media/content-type.js";
import type { ResolvedFile } from "./types.js";
import { isZod, unwrap, type ZodLike } from "./zod-schema.js";

/** What one file field accepts. */
export interface FileConstraints {
  /** Media type patterns (`image/png`, `image/*`). */
  readonly accept?: readonly string[];
  /** Largest decoded size in bytes. */
  readonly maxSize?: number;
  /**
   * `maxSize` is the bridge's own cap that `bridge.fileInput()` publishes when given no `maxBytes`
   * (the bridge holds it anyway; a `withFiles({ maxBytes })` replaces it, as documented).
   */
  readonly maxSizeIsBridgeDefault?: boolean;
}

/**
 * The constraints each `fileInput()` schema publishes, by its definition (`.describe()` / `.meta()`
 * copies share it). `fileInput()` fills it; {@link constraintsAt} reads it.
 */
export const FILE_CONSTRAINTS = new WeakMap<object, FileConstraints>();

let published = 0;

/**
 * Notes that a `fileInput()` in this process publishes a constraint only the tool's schema tells
 * (`accept`, or a `maxBytes` given to it rather than a bridge's own cap, which the bridge holds
 * anyway). From then on a `withFiles` call that cannot see its tool's schema (the server was never
 * attached, and no `inputSchema` option was given) is refused instead of running unchecked.
 */
export function notePublishedConstraints(): void {
  published++;
}

/** Whether any `fileInput()` in this process published a constraint (see {@link notePublishedConstraints}). */
export function constraintsPublished(): boolean {
  return published > 0;
}

/** Deeper than any schema a tool is written with; past it nothing more is looked into. */
const MAX_LOOK = 32;

/**
 * The schema under its wrappers, also looking through what keeps the published JSON Schema of the
 * value it holds: a `.transform()` pipe (its input side), a `z.preprocess` (its output side), a
 * `z.lazy`.
 */
function underneath(schema: ZodLike): ZodLike {
  let current = unwrap(schema);
  for (let depth = 0; depth < MAX_LOOK; depth++) {
    const def = current._zod.def;
    // A pipe is published as its input side, or its output side under a `z.preprocess` transform.
    const side = isZod(def.in) && def.in._zod.def.type === "transform" ? def.out : def.in;
    const next =
      def.type === "pipe"
        ? side
        : def.type === "lazy" && typeof def.getter === "function"
          ? (def.getter as () => unknown)()
          : undefined;
    if (!isZod(next)) return current;
    current = unwrap(next);
  }
  return current;
}

/**
 * What a `fileInput()` schema publishes: its own definition's constraints, or (a `.refine()` /
 * `.check()` copy has a definition of its own) those of the schema it was copied from; for a union
 * that is not a `fileInput()` itself (`z.union([fileInput(...), z.null()])`), those of its branches.
 */
function constraintsOf(schema: ZodLike, depth = 0): FileConstraints | undefined {
  if (depth > MAX_LOOK) return undefined;
  for (let at: ZodLike | undefined = schema, n = 0; at && n < MAX_LOOK; n++) {
    const own = FILE_CONSTRAINTS.get(at._zod.def);
    if (own) return own;
    const parent: unknown = (at._zod as { parent?: unknown }).parent;
    at = isZod(parent) ? parent : undefined;
  }
  const def = schema._zod.def;
  if (def.type !== "union" || !Array.isArray(def.options)) return undefined;
  const found = (def.options as unknown[]).flatMap((option) => {
    const rule = isZod(option) ? constraintsOf(underneath(option), depth + 1) : undefined;
    return rule ? [rule] : [];
  });
  if (found.length <= 1) return found[0];
  // Several file branches (published as `anyOf`): a file one of them takes is taken.
  const accept = found.every((rule) => rule.accept)
    ? [...new Set(found.flatMap((rule) => rule.accept ?? []))]
    : undefined;
  const maxSize = found.every((rule) => rule.maxSize !== undefined)
    ? Math.max(...found.map((rule) => rule.maxSize ?? 0))
    : undefined;
  return {
    ...(accept ? { accept } : {}),
    ...(maxSize !== undefined ? { maxSize } : {}),
    ...(found.every((rule) => rule.maxSizeIsBridgeDefault) ? { maxSizeIsBridgeDefault: true } : {}),
  };
}

/** The properties of a raw shape or a `z.object`, or `undefined`. */
function shapeOf(schema: unknown): Record<string, unknown> | undefined {
  if (isZod(schema)) {
    const def = underneath(schema)._zod.def;
    return def.type === "object" ? (def.shape as Record<string, unknown>) : undefined;
  }
  return typeof schema === "object" && schema !== null ? (schema as Record<string, unknown>) : undefined;
}

/**
 * The constraints of the `fileInput()` schema a field path points at in a tool's input schema (a raw
 * shape or a `z.object`), or `undefined` when the path reaches no `fileInput()` schema.
 */
export function constraintsAt(
  inputSchema: unknown,
  steps: readonly FieldStep[],
): FileConstraints | undefined {
  // An intersection (`z.object(...).and(...)`) is published as `allOf`: its sides are looked into.
  if (isZod(inputSchema)) {
    const def = underneath(inputSchema)._zod.def;
    if (def.type === "intersection") {
      return constraintsAt(def.left, steps) ?? constraintsAt(def.right, steps);
    }
  }
  let current: unknown = inputSchema;
  for (const [index, step] of steps.entries()) {
    const field = shapeOf(current)?.[step.key];
    if (!isZod(field)) return undefined;
    let next = underneath(field);
    if (step.list) {
      const element = next._zod.def.type === "array" ? next._zod.def.element : undefined;
      if (!isZod(element)) return undefined;
      next = underneath(element);
    }
    if (index === steps.length - 1) return constraintsOf(next);
    current = next;
  }
  return undefined;
}

/** The first bytes of a resolved file (at most {@link CONTENT_SNIFF_BYTES}); the rest is not read. */
async function headOf(file: ResolvedFile): Promise<Buffer> {
  const stream = file.stream();
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of stream) {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      chunks.push(buffer);
      length += buffer.length;
      if (length >= CONTENT_SNIFF_BYTES) break;
    }
  } finally {
    stream.destroy();
  }
  return Buffer.concat(chunks).subarray(0, CONTENT_SNIFF_BYTES);
}

/**
 * Refuses a resolved file whose bytes are not of a type `accept` names: `UNSUPPORTED_MEDIA_TYPE`
 * with `data.reason: "mimeTypeNotAccepted"`, `data.accept` and `data.mimeType` (what the bytes are).
 */
export async function assertAccepted(
  file: ResolvedFile,
  accept: readonly string[],
  sniff?: ContentSniffer,
): Promise<void> {
  const actual = contentMediaType(await headOf(file), file.mimeType, sniff);
  if (acceptsMediaType(accept, actual)) return;
  const sent =
    actual === file.mimeType.split(";")[0]?.trim().toLowerCase() ? "" : ` (sent as ${file.mimeType})`;
  throw new FileBridgeError(
    "UNSUPPORTED_MEDIA_TYPE",
    `mimeTypeNotAccepted: ${file.name} is ${actual}${sent}; this tool accepts ${accept.join(", ")}`,
    { data: { reason: "mimeTypeNotAccepted", accept: [...accept], mimeType: actual } },
  );
}

/**
 * A `FILE_TOO_LARGE` that came from a field's published `maxSize` (the cap handed to the
 * resolution), as the draft names it: `data.reason: "maxSizeExceeded"`, `data.maxSize`. Other errors
 * are returned as they are.
 */
export function asMaxSizeExceeded(error: unknown, maxSize: number | undefined): unknown {
  if (maxSize === undefined || !isFileBridgeError(error, "FILE_TOO_LARGE")) return error;
  const limit = error.data?.limit;
  if (typeof limit === "number" && limit > maxSize) return error;
  return new FileBridgeError(
    "FILE_TOO_LARGE",
    `maxSizeExceeded: the file is larger than this tool's maxSize of ${maxSize} bytes`,
    { data: { ...error.data, reason: "maxSizeExceeded", maxSize, limit: maxSize }, cause: error },
  );
}
