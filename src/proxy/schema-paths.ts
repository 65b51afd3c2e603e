/**
 * Field paths (`"file"`, `"files[]"`, `"input.document"`) inside a tool's JSON Schema: whether they
 * exist (for the wiring check), replacing the schema they point at (upload consumers), and finding
 * arguments marked with `x-mcp-file` (the connect shim).
 */
import { MCP_FILE_KEYWORD } from "../bridge/file-input.js";
import { parseFieldPath } from "../internal/field-paths.js";
import type { JsonObject } from "./types.js";

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The schemas a schema stands for: itself, or the branches of `anyOf` / `oneOf` / `allOf`. */
function branches(schema: JsonObject): JsonObject[] {
  const out = [schema];
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const list = schema[key];
    if (Array.isArray(list)) out.push(...list.filter(isObject));
  }
  return out;
}

/**
 * The schema places a field path points at (several when unions branch), or `[]` when the path does
 * not exist in the schema.
 */
export function schemaAt(inputSchema: unknown, path: string): JsonObject[] {
  if (!isObject(inputSchema)) return [];
  let current: JsonObject[] = [inputSchema];
  for (const step of parseFieldPath(path, "path")) {
    const next: JsonObject[] = [];
    for (const schema of current.flatMap(branches)) {
      const properties = schema.properties;
      if (!isObject(properties)) continue;
      const property = properties[step.key];
      if (!isObject(property)) continue;
      if (!step.list) {
        next.push(property);
        continue;
      }
      for (const candidate of branches(property)) {
        if (isObject(candidate.items)) next.push(candidate.items);
      }
    }
    current = next;
    if (current.length === 0) return [];
  }
  return current;
}

/** Replaces, in place, every schema a path points at with `make(old)`. Returns how many it replaced. */
export function replaceSchemaAt(
  inputSchema: JsonObject,
  path: string,
  make: (old: JsonObject) => JsonObject,
): number {
  const steps = parseFieldPath(path, "path");
  let count = 0;
  const walk = (schema: JsonObject, index: number): void => {
    const step = steps[index];
    if (!step) return;
    for (const branch of branches(schema)) {
      const properties = branch.properties;
      if (!isObject(properties) || !isObject(properties[step.key])) continue;
      const last = index === steps.length - 1;
      const property = properties[step.key] as JsonObject;
      if (step.list) {
        for (const candidate of branches(property)) {
          if (!isObject(candidate.items)) continue;
          if (last) {
            candidate.items = make(candidate.items);
            count++;
          } else walk(candidate.items, index + 1);
        }
      } else if (last) {
        properties[step.key] = make(property);
        count++;
      } else walk(property, index + 1);
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
  const marked = (schema: JsonObject) => branches(schema).some((branch) => MCP_FILE_KEYWORD in branch);
  const walk = (schema: JsonObject, prefix: string, depth: number): void => {
    if (depth > 4) return;
    for (const branch of branches(schema)) {
      const properties = branch.properties;
      if (!isObject(properties)) continue;
      for (const [key, value] of Object.entries(properties)) {
        if (!isObject(value) || !/^[A-Za-z0-9_$-]+$/.test(key)) continue;
        const path = prefix ? `${prefix}.${key}` : key;
        if (marked(value)) {
          found.push(path);
          continue;
        }
        const items = branches(value).find((b) => isObject(b.items))?.items as JsonObject | undefined;
        if (items && marked(items)) {
          found.push(`${path}[]`);
          continue;
        }
        if (items) walk(items, `${path}[]`, depth + 1);
        else walk(value, path, depth + 1);
      }
    }
  };
  if (isObject(inputSchema)) walk(inputSchema, "", 0);
  return [...new Set(found)];
}
