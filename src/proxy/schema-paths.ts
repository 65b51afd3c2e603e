/**
 * Field paths (`"file"`, `"files[]"`, `"input.document"`) inside a tool's JSON Schema: whether they
 * exist (for the wiring check), replacing the schema they point at (upload consumers), and finding
 * arguments marked with `x-mcp-file` (the connect shim). Local references are followed wherever a
 * field is looked for (`{"$ref": "#/$defs/FileArg"}`, as pydantic and other generators write
 * schemas; `#/definitions/…` and any JSON pointer into the same document too).
 */
import { MCP_FILE_KEYWORD } from "../bridge/file-input.js";
import { parseFieldPath } from "../internal/field-paths.js";
import type { JsonObject } from "./types.js";

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Most `$ref` hops followed from one place (a chain of references, or a loop). */
const MAX_REF_HOPS = 16;

/** What a local JSON pointer (`#/$defs/FileArg`) names in `root`, or `undefined`. */
function atPointer(root: JsonObject, ref: string): JsonObject | undefined {
  if (!ref.startsWith("#")) return undefined;
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return undefined;
  let current: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    let token: string;
    try {
      token = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    } catch {
      return undefined;
    }
    if (!isObject(current) && !Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[token];
  }
  return isObject(current) ? current : undefined;
}

/**
 * The schema `schema` stands for: a local `$ref` replaced by a copy of its target, with the
 * reference's own keywords (`description`, `default`, …) over it; any other schema as it is. An
 * unresolvable or remote reference is left as it is.
 */
function deref(schema: JsonObject, root: JsonObject): JsonObject {
  let current = schema;
  for (let hop = 0; hop < MAX_REF_HOPS && typeof current.$ref === "string"; hop++) {
    const target = atPointer(root, current.$ref);
    if (!target) break;
    const { $ref: _ref, ...own } = current;
    current = { ...structuredClone(target), ...own };
  }
  return current;
}

/** The schemas a schema stands for: itself, or the branches of `anyOf` / `oneOf` / `allOf` (references followed). */
function branches(schema: JsonObject, root: JsonObject): JsonObject[] {
  const self = deref(schema, root);
  const out = [self];
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const list = self[key];
    if (Array.isArray(list)) out.push(...list.filter(isObject).map((branch) => deref(branch, root)));
  }
  return out;
}

/**
 * For rewriting: the schema at `slot[key]` with a reference there replaced, in place, by a copy of
 * its target, so what is changed below it is this place's own copy and never the shared definition.
 */
function inlineAt(slot: JsonObject | unknown[], key: string | number, root: JsonObject): JsonObject {
  const place = slot as Record<string | number, unknown>;
  const schema = place[key] as JsonObject;
  if (typeof schema.$ref !== "string") return schema;
  const own = deref(schema, root);
  place[key] = own;
  return own;
}

/** For rewriting: the schema (inlined where it was a reference) and its union branches, each inlined in place. */
function ownBranches(schema: JsonObject, root: JsonObject): JsonObject[] {
  const out = [schema];
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const list = schema[key];
    if (!Array.isArray(list)) continue;
    for (let i = 0; i < list.length; i++) if (isObject(list[i])) out.push(inlineAt(list, i, root));
  }
  return out;
}

/**
 * The schema places a field path points at (several when unions branch), or `[]` when the path does
 * not exist in the schema.
 */
export function schemaAt(inputSchema: unknown, path: string): JsonObject[] {
  if (!isObject(inputSchema)) return [];
  const root = inputSchema;
  let current: JsonObject[] = [inputSchema];
  for (const step of parseFieldPath(path, "path")) {
    const next: JsonObject[] = [];
    for (const schema of current.flatMap((one) => branches(one, root))) {
      const properties = schema.properties;
      if (!isObject(properties)) continue;
      const property = properties[step.key];
      if (!isObject(property)) continue;
      if (!step.list) {
        next.push(deref(property, root));
        continue;
      }
      for (const candidate of branches(property, root)) {
        if (isObject(candidate.items)) next.push(deref(candidate.items, root));
      }
    }
    current = next;
    if (current.length === 0) return [];
  }
  return current;
}

/**
 * Replaces, in place, every schema a path points at with `make(old)` (`old` with its reference
 * followed). References on the way are inlined where they are used, so a shared definition
 * (`$defs`) stays as it was for every other use. Returns how many it replaced.
 */
export function replaceSchemaAt(
  inputSchema: JsonObject,
  path: string,
  make: (old: JsonObject) => JsonObject,
): number {
  const steps = parseFieldPath(path, "path");
  const root = structuredClone(inputSchema);
  if (typeof inputSchema.$ref === "string") {
    const own = deref(inputSchema, root);
    delete inputSchema.$ref;
    Object.assign(inputSchema, own);
  }
  let count = 0;
  const walk = (schema: JsonObject, index: number): void => {
    const step = steps[index];
    if (!step) return;
    for (const branch of ownBranches(schema, root)) {
      const properties = branch.properties;
      if (!isObject(properties) || !isObject(properties[step.key])) continue;
      const last = index === steps.length - 1;
      if (step.list) {
        const property = inlineAt(properties, step.key, root);
        for (const candidate of ownBranches(property, root)) {
          if (!isObject(candidate.items)) continue;
          if (last) {
            candidate.items = make(deref(candidate.items, root));
            count++;
          } else walk(inlineAt(candidate, "items", root), index + 1);
        }
      } else if (last) {
        properties[step.key] = make(deref(properties[step.key] as JsonObject, root));
        count++;
      } else walk(inlineAt(properties, step.key, root), index + 1);
    }
  };
  walk(inputSchema, 0);
  return count;
}

/** Removes a top-level argument from `required`. */
export function makeOptional(inputSchema: JsonObject, name: string): void {
  if (Array.isArray(inputSchema.required)) {
    inputSchema.required = inputSchema.required.filter((entry) => entry !== name);
  }
}

/**
 * `tool` with a top-level argument removed from its input schema (`properties` and `required`): an
 * argument the proxy always fills itself, which callers should not see or set.
 */
export function withoutArgument(tool: JsonObject, name: string): JsonObject {
  const inputSchema = { ...((tool.inputSchema ?? { type: "object" }) as JsonObject) };
  makeOptional(inputSchema, name);
  if (isObject(inputSchema.properties)) {
    const { [name]: _filled, ...rest } = inputSchema.properties;
    inputSchema.properties = rest;
  }
  return { ...tool, inputSchema };
}

/** Field paths of the arguments marked with `x-mcp-file` (properties, list items, nested objects). */
export function markedFileArgs(inputSchema: unknown): string[] {
  const found: string[] = [];
  if (!isObject(inputSchema)) return found;
  const root = inputSchema;
  const marked = (schema: JsonObject) => branches(schema, root).some((branch) => MCP_FILE_KEYWORD in branch);
  const walk = (schema: JsonObject, prefix: string, depth: number): void => {
    if (depth > 4) return;
    for (const branch of branches(schema, root)) {
      const properties = branch.properties;
      if (!isObject(properties)) continue;
      for (const [key, value] of Object.entries(properties)) {
        if (!isObject(value) || !/^[A-Za-z0-9_$-]+$/.test(key)) continue;
        const path = prefix ? `${prefix}.${key}` : key;
        if (marked(value)) {
          found.push(path);
          continue;
        }
        const items = branches(value, root).find((b) => isObject(b.items))?.items as JsonObject | undefined;
        if (items && marked(items)) {
          found.push(`${path}[]`);
          continue;
        }
        if (items) walk(items, `${path}[]`, depth + 1);
        else walk(value, path, depth + 1);
      }
    }
  };
  walk(inputSchema, "", 0);
  return [...new Set(found)];
}
