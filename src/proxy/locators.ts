/**
 * Output locators: find the paths of files an upstream tool says it wrote — by a regular expression
 * over its text content (named group `path`, else group 1, else the whole match) or by JSON pointers
 * (RFC 6901) into its `structuredContent`.
 */
import { FileBridgeError } from "../errors/file-bridge-error.js";
import type { ArtifactRule } from "./config.js";
import type { JsonObject } from "./types.js";

/** Most paths one result may name. */
const MAX_PATHS = 32;

/**
 * Resolves a JSON pointer (`""`, `"/output/path"`, `"/files/0"`) in a value; `undefined` when it
 * points nowhere.
 */
export function jsonPointer(value: unknown, pointer: string): unknown {
  if (pointer === "") return value;
  if (!pointer.startsWith("/"))
    throw new FileBridgeError("INVALID_OPTION", `a JSON pointer starts with "/": ${pointer}`);
  let current = value;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (Array.isArray(current) && /^(0|[1-9]\d*)$/.test(key)) current = current[Number(key)];
    else if (typeof current === "object" && current !== null && Object.hasOwn(current, key)) {
      current = (current as Record<string, unknown>)[key];
    } else return undefined;
  }
  return current;
}

function textsOf(result: JsonObject): string[] {
  const content = Array.isArray(result.content) ? (result.content as JsonObject[]) : [];
  return content
    .filter((block) => block.type === "text" && typeof block.text === "string")
    .map((block) => block.text as string);
}

/** The paths a result names, for the `regex` and `structured` locators (others name none). */
export function locateOutputs(result: JsonObject, rule: ArtifactRule): string[] {
  const found: string[] = [];
  if (rule.locator === "regex") {
    const flags = "g";
    for (const text of textsOf(result)) {
      for (const match of text.matchAll(new RegExp(rule.pattern, flags))) {
        const path = match.groups?.path ?? match[1] ?? match[0];
        if (path) found.push(path.trim());
        if (match[0].length === 0) break;
      }
    }
  } else if (rule.locator === "structured") {
    const pointers = Array.isArray(rule.pointer) ? rule.pointer : [rule.pointer];
    for (const pointer of pointers) {
      const value = jsonPointer(result.structuredContent, pointer);
      if (typeof value === "string" && value) found.push(value);
      else if (Array.isArray(value))
        found.push(...value.filter((v): v is string => typeof v === "string" && v !== ""));
    }
  }
  const unique = [...new Set(found)];
  if (unique.length > MAX_PATHS) {
    throw new FileBridgeError("TOO_MANY_FILES", `the result names more than ${MAX_PATHS} output files`, {
      data: { limit: MAX_PATHS },
    });
  }
  return unique;
}
