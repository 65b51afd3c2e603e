/**
 * `https.downloadOrigins` entries (the origins a host's file attachments are fetched from): parsing
 * and matching. A leaf, so the options can parse them without importing the fetching code.
 */
import { FileBridgeError } from "../../errors/file-bridge-error.js";
import { type HostPattern, hostAllowed, parseHostPattern } from "./host-patterns.js";

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
