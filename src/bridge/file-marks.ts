/**
 * The `x-mcp-file` marks of a published input schema, tailored to the client that reads them. The
 * default `fileInput()` marks three places (the property, the draft's `format: "uri"` branch, the
 * file-descriptor object): the draft and the Codex variant read the first two. The revision Claude
 * Code ships takes an argument only when every mark of the tool sits on a descriptor object
 * `{id, mimeType, size[, name, digest]}` (following `$ref` / `$defs`): one mark elsewhere and it
 * leaves every file argument of the tool unfilled. {@link descriptorMarksOnly} makes the copy that
 * client is shown (see docs/files-extension.md); the schema every other client sees stays as it is.
 */

type Json = Record<string, unknown>;

/**
 * `MCP_FILE_KEYWORD` of `file-input.ts`, written here so this file loads without zod (the files
 * extension and the proxy's listing import it; `test/bridge/file-marks.test.ts` checks they agree).
 */
export const MARK_KEYWORD = "x-mcp-file";
const MCP_FILE_KEYWORD = MARK_KEYWORD;

const REQUIRED = ["id", "mimeType", "size"];
const OPTIONAL = ["name", "digest"];
/** Deeper than any schema `fileInput()` makes; past it a schema is left as it is. */
const MAX_DEPTH = 64;

function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The node a local `#/$defs/…` or `#/definitions/…` reference names, or the node itself. */
function target(node: Json, root: Json): Json | undefined {
  const ref = node.$ref;
  if (typeof ref !== "string") return node;
  const match = /^#\/(\$defs|definitions)\/([^/~%]+)$/.exec(ref);
  if (!match) return undefined;
  const defs = root[match[1] as string];
  const found = isRecord(defs) ? defs[match[2] as string] : undefined;
  return isRecord(found) ? found : undefined;
}

/** Whether `node` is a file-descriptor object schema (the shape the revision's client fills in). */
function isDescriptorObject(node: Json): boolean {
  const required = node.required;
  return (
    node.type === "object" &&
    Array.isArray(required) &&
    REQUIRED.every((key) => required.includes(key)) &&
    required.every((key) => REQUIRED.includes(key) || OPTIONAL.includes(key))
  );
}

/** Whether a union branch is a marked descriptor object (directly or through a local `$ref`). */
function isMarkedDescriptor(branch: unknown, root: Json): boolean {
  if (!isRecord(branch)) return false;
  const node = target(branch, root);
  if (!node || !isDescriptorObject(node)) return false;
  return MCP_FILE_KEYWORD in branch || MCP_FILE_KEYWORD in node;
}

/**
 * `node` with the marks of every union that offers a marked descriptor object moved onto that
 * object alone: the union's own mark and its other branches' marks are dropped (the branches stay,
 * so every value the schema accepted is still accepted). Returns whether anything changed.
 */
function tailor(node: unknown, root: Json, depth: number): boolean {
  if (depth > MAX_DEPTH) return false;
  if (Array.isArray(node)) {
    let changed = false;
    for (const item of node) changed = tailor(item, root, depth + 1) || changed;
    return changed;
  }
  if (!isRecord(node)) return false;
  let changed = false;
  for (const key of ["anyOf", "oneOf"]) {
    const branches = node[key];
    if (!Array.isArray(branches) || !branches.some((branch) => isMarkedDescriptor(branch, root))) continue;
    if (MCP_FILE_KEYWORD in node) {
      delete node[MCP_FILE_KEYWORD];
      changed = true;
    }
    for (const branch of branches) {
      if (isRecord(branch) && !isMarkedDescriptor(branch, root) && MCP_FILE_KEYWORD in branch) {
        delete branch[MCP_FILE_KEYWORD];
        changed = true;
      }
    }
  }
  for (const value of Object.values(node)) {
    if (typeof value === "object" && value !== null) changed = tailor(value, root, depth + 1) || changed;
  }
  return changed;
}

/**
 * The input schema as the files extension revision Claude Code ships should see it: every union
 * that offers a marked file-descriptor object (what `fileInput()` publishes) keeps its mark on that
 * object only. Everything else is unchanged; a schema with nothing to move comes back as the same
 * object. Never changes `schema` itself.
 *
 * @example
 * ```ts
 * const listed = z.toJSONSchema(z.object({ document: fileInput() }));
 * const forClaudeCode = descriptorMarksOnly(listed); // x-mcp-file only on the {id, mimeType, size} branch
 * ```
 */
export function descriptorMarksOnly<T>(schema: T): T {
  if (!isRecord(schema) || !JSON.stringify(schema).includes(`"${MCP_FILE_KEYWORD}"`)) return schema;
  const copy = structuredClone(schema) as Json;
  return tailor(copy, copy, 0) ? (copy as T) : schema;
}
