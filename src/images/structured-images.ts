/**
 * A result shaped for a client whose model is shown only `structuredContent` when a result has it
 * (Codex CLI: the JSON becomes the whole tool output, image blocks included in nothing). Such a
 * client sees a result's image only when the result comes without `structuredContent`.
 */
import type { CallToolResult } from "../mcp/types.js";
import { type ImageBudget, type ImageOptions, imageBudgetFor } from "./image-options.js";

/**
 * `result` as `client`'s model can see its image blocks. For a client whose budget says
 * `structuredHidesImages` (Codex CLI), a result carrying an image block and `structuredContent` goes
 * without `structuredContent`; that JSON is appended as a text block instead, so the model still
 * reads every field (the text blocks already carry each file's URI and download URL). Any other
 * result, any other client, and a tool that declares an `outputSchema` (`outputSchema: true`: its
 * results must carry `structuredContent`) get `result` back as it is.
 *
 * @example
 * ```ts
 * const shot = await artifacts.image({ scope, path, client: clientNameOf(server) });
 * return imageResultFor(clientNameOf(server), withFileOutputs({ content: [], structuredContent: { page: 1 } }, shot));
 * ```
 */
export function imageResultFor<R extends CallToolResult>(
  client: string | undefined,
  result: R,
  options: { outputSchema?: boolean; images?: Pick<ImageOptions, "clients"> } = {},
): R {
  return withoutHiddenStructured(result, imageBudgetFor(client, options.images ?? {}), options.outputSchema);
}

/** {@link imageResultFor} with the client's budget already worked out (`false`: shaping is off). */
export function withoutHiddenStructured<R extends CallToolResult>(
  result: R,
  budget: Pick<ImageBudget, "structuredHidesImages"> | false,
  outputSchema = false,
): R {
  if (budget === false || budget.structuredHidesImages !== true || outputSchema) return result;
  const structured = result.structuredContent;
  if (structured === undefined || structured === null || result.isError === true) return result;
  if (!Array.isArray(result.content) || !result.content.some((block) => block.type === "image"))
    return result;
  const { structuredContent: _moved, ...rest } = result;
  const json = { type: "text" as const, text: JSON.stringify(structured) };
  return { ...rest, content: [...result.content, json] } as R;
}
