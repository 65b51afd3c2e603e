import type { FileOutput } from "../links/file-output.js";
import { withFileOutputs } from "../links/with-file-outputs.js";
import type { CallToolResult, ContentBlock, EmbeddedResource, MediaContent } from "../mcp/types.js";
import { parseMediaType } from "../media/media-type.js";
import type { InlineBudget } from "./inline-budget.js";

/** What `fitResult` needs of a stored artifact (`Artifacts.capture()`'s answer has it). */
export interface FitCaptured {
  file: { name: string };
  content: readonly ContentBlock[];
  structuredContent: FileOutput;
}

/** What one oversized block is stored as: bytes (or an embedded resource) with a name. */
export type FitCapture =
  | { bytes: Uint8Array; name: string; mimeType?: string }
  | { resource: EmbeddedResource["resource"]; name?: string };

/**
 * What an image block became when it was shaped: the blocks that replace it (the shaped image and,
 * when the original was stored, its link blocks), the stored original, and the base64 characters
 * kept inline.
 */
export interface FitShaped {
  kept: ContentBlock[];
  stored?: FitCaptured;
  chars: number;
}

/** Shapes one image block with `room` base64 characters left; undefined: handle it as before. */
export type FitImageShaper = (
  block: MediaContent,
  name: string,
  room: number,
) => Promise<FitShaped | undefined>;

/** Characters of an oversized text shown inline before its link. */
const PREVIEW_CHARS = 1_000;

/** True for `image/*` and `audio/*` (parsed, never substring-matched). */
function isMedia(mimeType: string | undefined): boolean {
  const type = mimeType === undefined ? null : parseMediaType(mimeType);
  return type !== null && (type.type === "image" || type.type === "audio");
}

function previewOf(text: string, room: number): string {
  const length = Math.max(0, Math.min(PREVIEW_CHARS, room));
  return text.slice(0, length);
}

function previewNote(preview: string, total: number, name: string): string {
  const head = preview.length > 0 ? `${preview}\n` : "";
  return `${head}[… ${total} characters in all: too long to show here, so the whole output is stored as "${name}" — read it with the link below]`;
}

/** Claude Code persists a result over this many characters to a file and shows the model a preview. */
export const CLAUDE_CODE_RESULT_CAP = 50_000;
/** The most `anthropic/maxResultSizeChars` raises Claude Code's cap to. */
const CLAUDE_CODE_MAX_RESULT_CAP = 500_000;

/**
 * A result whose inline text passes Claude Code's 50,000-character cap (a budget raised above it)
 * gets `_meta["anthropic/maxResultSizeChars"]` (its text, up to 500,000), unless it set one itself.
 */
function withClaudeCodeCap(result: CallToolResult, textChars: number): CallToolResult {
  if (textChars <= CLAUDE_CODE_RESULT_CAP) return result;
  const meta = (result._meta ?? {}) as Record<string, unknown>;
  if (meta["anthropic/maxResultSizeChars"] !== undefined) return result;
  const cap = Math.min(CLAUDE_CODE_MAX_RESULT_CAP, textChars);
  return { ...result, _meta: { ...meta, "anthropic/maxResultSizeChars": cap } };
}

/**
 * Keeps a tool result inside an inline budget: image blocks go through `shapeImage` when given
 * (a shaped copy inline, the original stored and linked), text past `budget.text` characters,
 * images and audio past `budget.media` base64 characters, and every embedded blob that is not an image or audio are
 * stored through `capture` and replaced by a short preview (text) plus the file's link blocks; the
 * files are added to `structuredContent.files` when the result has `structuredContent`. A result
 * whose inline text passes Claude Code's 50,000-character cap gets
 * `_meta["anthropic/maxResultSizeChars"]` so Claude Code shows it rather than persisting it.
 */
export async function fitResult(
  result: CallToolResult,
  budget: InlineBudget,
  textName: string,
  capture: (what: FitCapture) => Promise<FitCaptured>,
  shapeImage?: FitImageShaper,
): Promise<CallToolResult> {
  if (result.isError === true || !Array.isArray(result.content)) return result;
  const kept: ContentBlock[] = [];
  const stored: FitCaptured[] = [];
  let textUsed = 0;
  let mediaUsed = 0;
  const storeText = async (text: string, name: string) => {
    const captured = await capture({ bytes: Buffer.from(text, "utf8"), name });
    const preview = previewOf(text, budget.text - textUsed - 400);
    textUsed += preview.length;
    kept.push({ type: "text", text: previewNote(preview, text.length, captured.file.name) });
    kept.push(...captured.content);
    stored.push({ ...captured, structuredContent: { ...captured.structuredContent, preview } });
  };
  let index = 0;
  for (const block of result.content) {
    index += 1;
    const suffix = index === 1 ? "" : `-${index}`;
    if (block.type === "text") {
      if (textUsed + block.text.length <= budget.text) {
        textUsed += block.text.length;
        kept.push(block);
      } else {
        const dot = textName.lastIndexOf(".");
        const name =
          dot > 0 ? `${textName.slice(0, dot)}${suffix}${textName.slice(dot)}` : `${textName}${suffix}`;
        await storeText(block.text, dot > 0 ? name : `${name}.txt`);
      }
      continue;
    }
    if (block.type === "image" || block.type === "audio") {
      const media = block as MediaContent;
      const shaped =
        block.type === "image" && shapeImage !== undefined
          ? await shapeImage(media, `${block.type}${suffix}`, budget.media - mediaUsed)
          : undefined;
      if (shaped !== undefined) {
        mediaUsed += shaped.chars;
        kept.push(...shaped.kept);
        if (shaped.stored !== undefined) stored.push(shaped.stored);
        continue;
      }
      if (mediaUsed + media.data.length <= budget.media) {
        mediaUsed += media.data.length;
        kept.push(block);
        continue;
      }
      const name = `${block.type}${suffix}`;
      const captured = await capture({
        resource: { uri: `mem://${name}`, mimeType: media.mimeType, blob: media.data },
        name,
      });
      kept.push(...captured.content);
      stored.push(captured);
      continue;
    }
    if (block.type === "resource") {
      const resource = (block as EmbeddedResource).resource;
      const text = typeof resource.text === "string" ? resource.text : undefined;
      const blob = typeof resource.blob === "string" ? resource.blob : undefined;
      if (text !== undefined && textUsed + text.length <= budget.text) {
        textUsed += text.length;
        kept.push(block);
        continue;
      }
      if (blob !== undefined && isMedia(resource.mimeType) && mediaUsed + blob.length <= budget.media) {
        mediaUsed += blob.length;
        kept.push(block);
        continue;
      }
      if (text !== undefined || blob !== undefined) {
        const captured = await capture({ resource });
        if (text !== undefined) {
          const preview = previewOf(text, budget.text - textUsed - 400);
          textUsed += preview.length;
          kept.push({ type: "text", text: previewNote(preview, text.length, captured.file.name) });
          stored.push({ ...captured, structuredContent: { ...captured.structuredContent, preview } });
        } else stored.push(captured);
        kept.push(...captured.content);
        continue;
      }
    }
    kept.push(block);
  }
  const fitted: CallToolResult = withClaudeCodeCap({ ...result, content: kept }, textUsed);
  if (stored.length === 0) return fitted;
  // Blocks are already in place; only the structured forms are added.
  const structuredOnly = stored.map((captured) => ({
    content: [],
    structuredContent: captured.structuredContent,
  }));
  return withFileOutputs(fitted, ...structuredOnly);
}
