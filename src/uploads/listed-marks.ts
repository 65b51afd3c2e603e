/**
 * The `tools/list` rewrite the files extension adds for the revision Claude Code ships: that client
 * takes a file argument only when every `x-mcp-file` mark of the tool sits on a file-descriptor
 * object, so a client that declared it (`extensions["io.modelcontextprotocol/files"]: {upload: {}}`
 * in the request's `_meta`) is shown each tool with its marks on the descriptor objects alone
 * (`descriptorMarksOnly`). Every other client sees the tools as they are registered: the default
 * `fileInput()` keeps the marks the draft and the Codex variant read.
 */
import { descriptorMarksOnly } from "../bridge/file-marks.js";
import { clientFilesCapability } from "../mcp/client-files.js";
import type { HostClientCapabilities } from "../mcp/host.js";

/** Whether a client that declared `capabilities` reads marks as the revision Claude Code ships does. */
export function readsDescriptorMarksOnly(capabilities: HostClientCapabilities | undefined): boolean {
  const files = clientFilesCapability(capabilities);
  return files?.upload === true && files.spelling === "upload_required";
}

/**
 * The listed tools as a client that declared `capabilities` should see them: for the revision
 * Claude Code ships, each input schema with its marks on the descriptor objects alone; for every
 * other client, the same tools.
 *
 * @example
 * ```ts
 * host.rewriteListedTools?.((tools, ctx) => toolsForClient(tools, ctx.clientCapabilities));
 * ```
 */
export function toolsForClient<T extends Record<string, unknown>>(
  tools: readonly T[],
  capabilities: HostClientCapabilities | undefined,
): T[] {
  if (!readsDescriptorMarksOnly(capabilities)) return [...tools];
  return tools.map((tool) => {
    const inputSchema = descriptorMarksOnly(tool.inputSchema);
    return inputSchema === tool.inputSchema ? tool : { ...tool, inputSchema };
  });
}
