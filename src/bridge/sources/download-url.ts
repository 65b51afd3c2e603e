/**
 * Input form: the `download_url` of a host attachment object (`{download_url, file_id, mime_type?,
 * file_name?}`, the OpenAI Apps SDK's `openai/fileParams` convention). An `https://` download URL is
 * fetched through safe-fetch.ts, like an `https://` string, when its origin is one the author
 * allowed in `https.downloadOrigins` (redirects stay on those hosts); a URL the `https://` string
 * form would take (its host on `https.allowHosts`) is taken too. Any other origin is refused with a
 * message naming the origin and the option to add it to.
 */
import { FileBridgeError } from "../../errors/file-bridge-error.js";
import type { CallContext } from "../call-context.js";
import type { HttpsSettings } from "../options.js";
import type { ResolvedFile } from "../types.js";
import { fromHttps } from "./https.js";
import { type HostPattern, hostAllowed, normalizeHost, parseHostPattern } from "./safe-fetch.js";

/** The option that allows a host's download origin. */
export const DOWNLOAD_ORIGINS_OPTION = "https.downloadOrigins";

/** A parsed `https.downloadOrigins` entry: a host (or `*.suffix`) and a port. */
export interface DownloadOrigin {
  readonly host: HostPattern;
  readonly port: string;
}

/**
 * Parses a `https.downloadOrigins` entry: `https://files.example.com`, `https://host:8443` or
 * `https://*.example.com` (any subdomain). Only `https:`, no path, query or credentials. Throws
 * `INVALID_OPTION`.
 */
export function parseDownloadOrigin(entry: unknown, option: string): DownloadOrigin {
  const bad = (problem: string, cause?: unknown) =>
    new FileBridgeError("INVALID_OPTION", `FileBridge: ${option} ${problem}`, {
      data: { option },
      ...(cause === undefined ? {} : { cause }),
    });
  if (typeof entry !== "string") throw bad("entries must be origins like https://files.example.com");
  const wildcard = /^https:\/\/\*\./i.test(entry.trim());
  let url: URL;
  try {
    url = new URL(entry.trim().replace(/^https:\/\/\*\./i, "https://"));
  } catch (cause) {
    throw bad(`"${entry}" is not an origin like https://files.example.com`, cause);
  }
  if (url.protocol !== "https:") throw bad(`"${entry}" must be an https:// origin`);
  if (url.username || url.password || url.search || url.hash || url.pathname !== "/") {
    throw bad(`"${entry}" must be an origin only (scheme, host and port; no path)`);
  }
  const host = parseHostPattern(wildcard ? `*.${url.hostname}` : url.hostname, option);
  return { host, port: url.port || "443" };
}

/** True when `url`'s origin is one of `origins`. */
export function originAllowed(url: URL, origins: readonly DownloadOrigin[]): boolean {
  if (url.protocol !== "https:") return false;
  const port = url.port || "443";
  return origins.some((origin) => origin.port === port && hostAllowed(url.hostname, [origin.host]));
}

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
    return fromHttps(input, ctx, { ...https, allowHosts });
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
