/**
 * Looking into a zod 4 schema without importing zod: what `fileInput()`'s readers (`openai/fileParams`
 * and the `x-mcp-file` constraints) need to find a field's own schema under its wrappers.
 */

/** A zod schema as far as these readers look into it. */
export interface ZodLike {
  _zod: { def: Record<string, unknown> & { type?: string } };
}

export function isZod(value: unknown): value is ZodLike {
  const zod = (value as { _zod?: { def?: unknown } } | null)?._zod;
  return typeof zod?.def === "object" && zod.def !== null;
}

/** Wrappers that leave the field a file field (`.optional()`, `.nullable()`, `.default()`, …). */
const WRAPPERS = new Set(["optional", "nullable", "default", "prefault", "readonly", "nonoptional", "catch"]);

/** The schema under its wrappers. */
export function unwrap(schema: ZodLike): ZodLike {
  let current = schema;
  while (current._zod.def.type && WRAPPERS.has(current._zod.def.type) && isZod(current._zod.def.innerType)) {
    current = current._zod.def.innerType;
  }
  return current;
}
