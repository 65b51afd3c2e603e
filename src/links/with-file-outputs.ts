import type { CallToolResult } from "../mcp/types.js";
import type { FileOutputBlocks } from "./file-output.js";

/**
 * Appends file outputs to a tool result: their blocks (a `resource_link` plus the text fallback)
 * to `content`, and, when the result has `structuredContent`, their structured forms to its
 * `files` array (created, or extended when it is already an array; a non-array `files` the tool
 * set itself is left alone). Returns a new result.
 *
 * @example
 * ```ts
 * const captured = await artifacts.capture({ scope, bytes, name: "chart.png" });
 * return withFileOutputs({ content: [{ type: "text", text: "Done." }], structuredContent: { points: 12 } }, captured);
 * ```
 */
export function withFileOutputs<R extends CallToolResult>(result: R, ...outputs: FileOutputBlocks[]): R {
  const content = [...(Array.isArray(result.content) ? result.content : [])];
  for (const output of outputs) content.push(...output.content);
  const next: R = { ...result, content };
  const structured = result.structuredContent;
  if (structured !== null && typeof structured === "object" && !Array.isArray(structured)) {
    const existing = structured.files;
    // A tool's own non-array `files` field is left alone: the text blocks still carry the outputs.
    if (existing === undefined || Array.isArray(existing)) {
      const files = [...(existing ?? []), ...outputs.map((o) => o.structuredContent)];
      next.structuredContent = { ...structured, files };
    }
  }
  return next;
}
