/**
 * Input forms that carry the bytes in the argument itself: `data:` URLs (decoded by data-url.ts) and
 * base64 text (bare, or the `content` of an object form). The size cap is enforced from the encoded
 * length before decoding, then the bytes are decoded chunk by chunk into the materializer.
 */

import type { CallContext } from "../call-context.js";
import { type MaterializeSpec, materialize } from "../materialize.js";
import type { FileSourceKind, ResolvedFile } from "../types.js";
import { assertBase64Fits, decodeBase64To, planBase64 } from "./base64.js";
import { assertDataUrlFits, decodeDataUrlTo, parseDataUrl } from "./data-url.js";

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
  // Size cap before anything is decoded; then decoded chunk by chunk into the writer (which enforces
  // the cap exactly), without copying the payload, letting the event loop turn between chunks.
  assertDataUrlFits(parsed, ctx.maxBytes);
  return materialize(ctx, spec, (writer) => decodeDataUrlTo(parsed, writer));
}

/** Resolves base64 text, strictly validated (`INVALID_BASE64`). */
export async function fromBase64(
  input: string,
  ctx: CallContext,
  kind: FileSourceKind = "base64",
): Promise<ResolvedFile> {
  // Size cap from the length (whitespace counted only if needed), nothing copied.
  const plan = assertBase64Fits(planBase64(input), ctx.maxBytes);
  const spec: MaterializeSpec = {
    kind,
    detail: kind === "object" ? "inline base64" : "base64",
    name: undefined,
    mimeType: undefined,
  };
  return materialize(ctx, spec, (writer) => decodeBase64To(plan, writer));
}
