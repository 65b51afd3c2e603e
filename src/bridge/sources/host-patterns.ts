/**
 * `allowHosts` entries: parsed when the options are checked (at construction, so this module loads
 * at start) and matched when a URL is fetched (`safe-fetch.ts`, loaded with the input forms).
 */

import { FileBridgeError } from "../../errors/file-bridge-error.js";
import { isIP } from "./ip-literal.js";

/** A normalized host allow-list entry: an exact host, a `*.suffix` wildcard, or `*` (any host). */
export type HostPattern =
  | { kind: "exact"; host: string }
  | { kind: "suffix"; suffix: string }
  | { kind: "any" };

/** Normalizes a host for comparison: lower case, no brackets, no trailing dot. */
export function normalizeHost(host: string): string {
  let value = host.trim().toLowerCase();
  if (value.startsWith("[") && value.endsWith("]")) value = value.slice(1, -1);
  if (value.endsWith(".")) value = value.slice(0, -1);
  return value;
}

/**
 * Parses an `allowHosts` entry: `example.com` (exactly that host), `*.example.com` (any subdomain,
 * not the apex) or `*` (any host; private addresses are still refused). Throws `INVALID_OPTION`.
 */
export function parseHostPattern(entry: unknown, option: string): HostPattern {
  if (typeof entry !== "string" || entry.trim() === "") {
    throw new FileBridgeError("INVALID_OPTION", `${option} entries must be non-empty host names`);
  }
  if (entry.trim() === "*") return { kind: "any" };
  const value = normalizeHost(entry);
  if (value === "*" || value === "") {
    throw new FileBridgeError("INVALID_OPTION", `${option}: "${entry}" is not a valid host`);
  }
  if (/[/:@?#\s]/.test(value.replace(/^\*\./, "")) && isIP(value) !== 6) {
    throw new FileBridgeError("INVALID_OPTION", `${option}: "${entry}" must be a host name, not a URL`);
  }
  if (value.startsWith("*.")) {
    const suffix = value.slice(1);
    if (suffix.length < 2 || suffix.includes("*")) {
      throw new FileBridgeError("INVALID_OPTION", `${option}: "${entry}" is not a valid wildcard`);
    }
    return { kind: "suffix", suffix };
  }
  if (value.includes("*")) {
    throw new FileBridgeError("INVALID_OPTION", `${option}: "${entry}" may only start with "*."`);
  }
  return { kind: "exact", host: value };
}

/** True when `host` (normalized) is allowed by one of the patterns. */
export function hostAllowed(host: string, patterns: readonly HostPattern[]): boolean {
  const value = normalizeHost(host);
  return patterns.some((pattern) => {
    if (pattern.kind === "any") return true;
    if (pattern.kind === "exact") return pattern.host === value;
    return value.endsWith(pattern.suffix) && value.length > pattern.suffix.length;
  });
}

/** Options of {@link safeFetch}. */
