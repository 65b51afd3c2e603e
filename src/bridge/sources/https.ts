/**
 * Input form: an `https://` URL (opt-in). Fetched through safe-fetch.ts (host allow-list, no private
 * addresses, redirects re-checked, size cap, timeout) and streamed into the materializer.
 */
import type { CallContext } from "../call-context.js";
import { type MaterializeSpec, materialize } from "../materialize.js";
import type { HttpsSettings } from "../options.js";
import type { ResolvedFile } from "../types.js";
import { type SafeFetchOptions, safeFetch } from "./safe-fetch.js";

/** Fetches an `https://` URL with the bridge's https settings (and a further check of each hop's URL). */
export async function fromHttps(
  input: string,
  ctx: CallContext,
  https: HttpsSettings & Pick<SafeFetchOptions, "allowUrl">,
): Promise<ResolvedFile> {
  const response = await safeFetch(input, { ...https, maxBytes: ctx.maxBytes, signal: ctx.signal });
  const segment = decodeSegment(response.url.pathname.split("/").pop() ?? "");
  const spec: MaterializeSpec = {
    kind: "https",
    detail: `${response.url.origin}${response.url.pathname}`,
    name: response.fileName ?? (segment || undefined),
    mimeType: response.contentType,
    expectedSize: response.contentLength,
  };
  try {
    return await materialize(ctx, spec, async (writer) => {
      for await (const chunk of response.body) await writer.write(chunk);
    });
  } finally {
    response.cancel();
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
