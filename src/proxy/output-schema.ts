/**
 * The `outputSchema` the proxy and the shim list for a tool whose results they extend. Clients that
 * validate `structuredContent` against the listed schema (SDK v1 `Client.callTool`, SDK v2, the
 * Inspector, Gemini CLI) refuse a result with a property the schema does not allow
 * (`data must NOT have additional properties` when the upstream's schema is closed, as
 * `@modelcontextprotocol/server-filesystem`'s are). What we add is `structuredContent.files`
 * (artifacts, and `localPath` on the shim's saved outputs), so the listed schema gets a `files`
 * property that allows it: never a result the listed schema refuses.
 */
import * as z from "zod/v4";
import { fileOutputSchema } from "../links/file-output.js";
import type { JsonObject } from "./types.js";

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

let filesSchema: JsonObject | undefined;

/** `{ type: "array", items: <FileOutput> }`, the JSON Schema of what `withFileOutputs` adds. */
function fileOutputsJsonSchema(): JsonObject {
  if (!filesSchema) {
    const schema = z.toJSONSchema(z.array(fileOutputSchema())) as JsonObject;
    delete schema.$schema;
    filesSchema = { ...schema, description: "Files this call produced (added by the file proxy)" };
  }
  return structuredClone(filesSchema);
}

/**
 * `tool` with its `outputSchema` widened to allow the `files` the proxy adds to `structuredContent`.
 * A tool without an `outputSchema` (nothing is validated) is returned as it is. When the upstream's
 * schema already has a `files` property, it stays valid and a `files` array of any items is allowed
 * besides: the proxy appends to an array `files` (and sets `localPath` on entries the shim saved),
 * which the upstream's own item schema may not allow.
 *
 * @example
 * ```ts
 * const listed = withFilesOutput({ name: "write_file", outputSchema: { type: "object", properties: { content: { type: "string" } }, additionalProperties: false } });
 * // listed.outputSchema.properties.files: { type: "array", items: { …FileOutput } }
 * ```
 */
export function withFilesOutput(tool: JsonObject): JsonObject {
  const outputSchema = tool.outputSchema;
  if (!isObject(outputSchema)) return tool;
  const properties = isObject(outputSchema.properties) ? { ...outputSchema.properties } : {};
  const theirs = properties.files;
  properties.files =
    theirs === undefined
      ? fileOutputsJsonSchema()
      : {
          anyOf: [
            theirs,
            { type: "array", description: "The upstream's files, with the outputs the file proxy added" },
          ],
        };
  return { ...tool, outputSchema: { ...outputSchema, properties } };
}
