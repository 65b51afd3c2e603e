/**
 * Input form: the `download_url` of a host attachment object (`{download_url, file_id, mime_type?,
 * file_name?}`, the OpenAI Apps SDK's `openai/fileParams` convention). An `https://` download URL is
 * fetched through safe-fetch.ts, like an `https://` string, when its origin is one the author
 * allowed in `https.downloadOrigins` (redirects stay on those origins: scheme, host and port); a URL the `https://` string
 * form would take (its host on `https.allowHosts`) is taken too. Any other origin is refused with a
 * message naming the origin and the option to add it to.
 */
import { FileBridgeError } from "../../errors/file-bridge-error.js";
import type { CallContext } from "../call-context.js";
import type { HttpsSettings } from "../options.js";
import type { ResolvedFile } from "../types.js";
import { originAllowed } from "./download-origin.js";
import { fromHttps } from "./https.js";
import { hostAllowed, normalizeHost } from "./safe-fetch.js";

/** The option that allows a host's download origin. */
export const DOWNLOAD_ORIGINS_OPTION = "https.downloadOrigins";

/** Where the https settings come from: the bridge's (absent when none) and whether `https://` strings are on. */
export interface DownloadUrlSettings {
  readonly https: HttpsSettings | undefined;
  readonly httpsForm: boolean;
}

/** Fetches a host attachment's `https://` download URL, or refuses its origin. */
export function fromDownloadUrl(
  input: string,
  ctx: CallContext,
  settings: DownloadUrlSettings,
): Promise<ResolvedFile> {
  let url: URL;
  try {
    url = new URL(input);
  } catch (cause) {
    throw new FileBridgeError("INVALID_INPUT", "file.download_url cannot be parsed", { cause });
  }
  const https = settings.https;
  if (https && originAllowed(url, https.downloadOrigins)) {
    const allowHosts = https.downloadOrigins.map((origin) => origin.host);
    // Every hop is held to the allowed origins (scheme, host and port), not only to their hosts: a
    // redirect to another port of an allowed host is another server.
    const origins = https.downloadOrigins;
    return fromHttps(input, ctx, { ...https, allowHosts, allowUrl: (hop) => originAllowed(hop, origins) });
  }
  if (https && settings.httpsForm && hostAllowed(url.hostname, https.allowHosts)) {
    return fromHttps(input, ctx, https);
  }
  const origin = url.origin;
  throw new FileBridgeError(
    "HOST_NOT_ALLOWED",
    `file.download_url is on ${origin}, which is not an allowed download origin; ` +
      `the server's author can add "${origin}" to the FileBridge option ${DOWNLOAD_ORIGINS_OPTION}`,
    { data: { host: normalizeHost(url.hostname), origin, option: DOWNLOAD_ORIGINS_OPTION } },
  );
}
