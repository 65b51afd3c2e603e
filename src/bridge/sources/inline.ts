/**
 * Input forms that carry the bytes in the argument itself: `data:` URLs (decoded by data-url.ts) and
 * base64 text (bare, or the `content` of an object form). The size cap is enforced from the encoded
 * length before decoding, then the bytes are decoded chunk by chunk into the materializer.
 */
import { isFileBridgeError } from "../../errors/file-bridge-error.js";
import {
  type Base64Plan,
  base64Layout,
  decodeBase64Chunks,
  planBase64,
  stripBase64Whitespace,
} from "../../internal/base64.js";
import type { CallContext } from "../call-context.js";
import { tooLarge } from "../failures.js";
import { type MaterializeSpec, materialize } from "../materialize.js";
import type { TempFileWriter } from "../temp-file-writer.js";
import type { FileSourceKind, ResolvedFile } from "../types.js";
import { normalizeDataUrlBase64, parseDataUrl, percentDecodeBytes } from "./data-url.js";

const DATA_CHUNK_BYTES = 4 * 1024 * 1024;

/** Resolves a `data:` URL (RFC 2397, with an optional `name=` parameter). */
export async function fromDataUrl(
  input: string,
  ctx: CallContext,
  kind: FileSourceKind = "data-url",
): Promise<ResolvedFile> {
  const parsed = parseDataUrl(input);
  const spec: MaterializeSpec = {
    kind,
    detail: `data: URL (${parsed.mimeType.split(";")[0]})`,
    name: parsed.name,
    mimeType: parsed.mimeTypeDeclared ? parsed.mimeType : undefined,
  };
  if (parsed.base64) {
    const plan = checkedPlan(
      { text: parsed.payload, byteLength: parsed.maxDecodedLength, normalized: false },
      normalizeDataUrlBase64,
      ctx.maxBytes,
    );
    return materialize(ctx, spec, (writer) => writeBase64(writer, plan, normalizeDataUrlBase64));
  }
  if (parsed.maxDecodedLength / 3 > ctx.maxBytes)
    throw tooLarge(Math.ceil(parsed.maxDecodedLength / 3), ctx.maxBytes);
  const bytes = percentDecodeBytes(parsed.payload);
  if (bytes.length > ctx.maxBytes) throw tooLarge(bytes.length, ctx.maxBytes);
  return materialize(ctx, spec, (writer) => writer.write(bytes));
}

/** Resolves base64 text, strictly validated (`INVALID_BASE64`). */
export async function fromBase64(
  input: string,
  ctx: CallContext,
  kind: FileSourceKind = "base64",
): Promise<ResolvedFile> {
  const plan = checkedPlan(planBase64(input), stripBase64Whitespace, ctx.maxBytes);
  const spec: MaterializeSpec = {
    kind,
    detail: kind === "object" ? "inline base64" : "base64",
    name: undefined,
    mimeType: undefined,
  };
  return materialize(ctx, spec, (writer) => writeBase64(writer, plan, stripBase64Whitespace));
}

/**
 * Enforces the size cap from a base64 length before decoding. A plan made from an unnormalized text
 * may overestimate (whitespace counts as data), so it is normalized once before refusing.
 */
function checkedPlan(plan: Base64Plan, normalize: (text: string) => string, maxBytes: number): Base64Plan {
  if (plan.byteLength <= maxBytes) return plan;
  if (!plan.normalized) {
    const text = normalize(plan.text);
    if (text !== plan.text)
      return checkedPlan(
        { text, byteLength: base64Layout(text).byteLength, normalized: true },
        normalize,
        maxBytes,
      );
  }
  throw tooLarge(plan.byteLength, maxBytes);
}

/**
 * Decodes base64 into the writer chunk by chunk. The text is first taken as given (no scan for
 * whitespace, which costs as much as decoding); if it turns out not to be clean, it is normalized
 * and decoded again from the start.
 */
async function writeBase64(
  writer: TempFileWriter,
  plan: Base64Plan,
  normalize: (text: string) => string,
): Promise<void> {
  try {
    for (const chunk of decodeBase64Chunks(plan.text, DATA_CHUNK_BYTES)) await writer.write(chunk);
  } catch (error) {
    if (plan.normalized || !isFileBridgeError(error, "INVALID_BASE64")) throw error;
    const text = normalize(plan.text);
    if (text === plan.text) throw error;
    await writer.reset();
    for (const chunk of decodeBase64Chunks(text, DATA_CHUNK_BYTES)) await writer.write(chunk);
  }
}
