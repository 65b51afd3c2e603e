/**
 * Input forms given as objects: inline content (`{filename|name, content|content_base64|data,
 * mimeType?, encoding?}`), SEP-2631 references (`{uri, name, mimeType, size, digest}`) and
 * OpenAI-Apps-style ones (`{download_url, file_id, file_name, mime_type}`). Inline content goes to
 * inline.ts; a reference is resolved as a string by the bridge, then checked against its declared
 * size and digest.
 */
import { FileBridgeError } from "../../errors/file-bridge-error.js";
import type { CallContext } from "../call-context.js";
import { tooLarge } from "../failures.js";
import { materialize } from "../materialize.js";
import type { ResolvedFile } from "../types.js";
import { isDataUrl } from "./data-url.js";
import { fromBase64, fromDataUrl } from "./inline.js";

/**
 * What an object form needs from the bridge: string resolution (for `uri`), a host attachment's
 * `https://` `download_url` (download-url.ts) and the enabled forms.
 */
export interface ObjectFormHost {
  resolveString(input: string, ctx: CallContext): Promise<ResolvedFile>;
  resolveDownloadUrl(input: string, ctx: CallContext): Promise<ResolvedFile>;
  enabledForms(): string[];
}

/** Resolves a file given as an object (any of the object forms). */
export async function fromObject(
  input: Record<string, unknown>,
  ctx: CallContext,
  host: ObjectFormHost,
): Promise<ResolvedFile> {
  const name = firstString(input, ["filename", "name", "file_name", "fileName"], "file");
  const mimeType = firstString(input, ["mimeType", "mime_type", "mediaType", "contentType"], "file");
  const content = firstString(input, ["content", "content_base64", "data"], "file");
  const inner: CallContext = {
    ...ctx,
    nameOverride: name ?? ctx.nameOverride,
    mimeOverride: mimeType ?? ctx.mimeOverride,
  };
  if (content !== undefined) {
    const encoding = input.encoding ?? "base64";
    if (encoding === "utf8" || encoding === "utf-8" || encoding === "text") {
      const size = Buffer.byteLength(content, "utf8");
      if (size > ctx.maxBytes) throw tooLarge(size, ctx.maxBytes);
      return materialize(inner, { kind: "object", detail: "inline text", name, mimeType }, async (w) => {
        await w.write(Buffer.from(content, "utf8"));
      });
    }
    if (encoding !== "base64") {
      throw new FileBridgeError("INVALID_INPUT", 'file.encoding must be "base64" or "utf8"');
    }
    // Plain text (`encoding: "utf8"`) is taken literally above, even when it starts with "data:".
    if (isDataUrl(content)) return fromDataUrl(content, inner, "object");
    return fromBase64(content, inner, "object");
  }
  const given = firstString(input, ["uri", "url"], "file");
  const downloadUrl = given === undefined ? firstString(input, ["download_url"], "file") : undefined;
  const uri = given ?? downloadUrl;
  if (uri !== undefined) {
    let expectedSize: number | undefined;
    if (input.size !== undefined && input.size !== null) {
      if (typeof input.size !== "number" || !Number.isSafeInteger(input.size) || input.size < 0) {
        throw new FileBridgeError("INVALID_INPUT", "file.size must be a non-negative integer");
      }
      expectedSize = input.size;
      if (expectedSize > ctx.maxBytes) throw tooLarge(expectedSize, ctx.maxBytes);
    }
    const expectedSha256 =
      input.digest === undefined || input.digest === null ? undefined : parseSha256Digest(input.digest);
    const file =
      downloadUrl !== undefined && /^https:/i.test(downloadUrl)
        ? await host.resolveDownloadUrl(downloadUrl, inner)
        : await host.resolveString(uri, inner);
    if (
      (expectedSize !== undefined && file.size !== expectedSize) ||
      (expectedSha256 !== undefined && file.sha256 !== expectedSha256)
    ) {
      await file.dispose();
      throw new FileBridgeError("DIGEST_MISMATCH", "the file does not match its declared size or digest", {
        data: { size: file.size, ...(expectedSize !== undefined ? { expectedSize } : {}) },
      });
    }
    return file;
  }
  throw new FileBridgeError(
    "INVALID_INPUT",
    "a file object needs content (base64), a uri, or a download_url",
    {
      data: { forms: host.enabledForms() },
    },
  );
}

/** `sha256:<hex>` or SRI `sha256-<base64>` → lower-case hex. */
export function parseSha256Digest(digest: unknown): string {
  if (typeof digest !== "string") throw new FileBridgeError("INVALID_INPUT", "digest must be a string");
  const hex = /^sha-?256:([0-9a-fA-F]{64})$/.exec(digest.trim());
  if (hex?.[1]) return hex[1].toLowerCase();
  const sri = /^sha256-([A-Za-z0-9+/_-]{43}=?)$/.exec(digest.trim());
  if (sri?.[1]) {
    const bytes = Buffer.from(sri[1], "base64");
    if (bytes.length === 32) return bytes.toString("hex");
  }
  throw new FileBridgeError(
    "INVALID_INPUT",
    'digest must be "sha256:<64 hex digits>" or "sha256-<base64>" (other algorithms are not supported)',
  );
}

function firstString(
  record: Record<string, unknown>,
  keys: readonly string[],
  label: string,
): string | undefined {
  for (const key of keys) {
    const value = record[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== "string")
      throw new FileBridgeError("INVALID_INPUT", `${label}.${key} must be a string`);
    return value;
  }
  return undefined;
}
