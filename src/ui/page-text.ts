/**
 * The texts the upload page and widget show about a link: its limits, in the units of the limit
 * (the shared byte formatter), and when it expires, as a date and time with its time zone. The server
 * renders them into the HTML (right without script and before the script runs); the browser adds the
 * person's local time and zone name. Pure: used by the server-side page and, bundled, by the browser
 * code.
 */
import { formatLimit } from "../internal/byte-size.js";

/**
 * The limits line: `"Up to 3 files, at most 2 MiB each."`, `"One file, at most 10 MB."`.
 *
 * @example
 * ```ts
 * limitsText(3, 2 * 1024 * 1024); // "Up to 3 files, at most 2 MiB each."
 * ```
 */
export function limitsText(maxFiles: number, maxBytes: number): string {
  return maxFiles === 1
    ? `One file, at most ${formatLimit(maxBytes)}.`
    : `Up to ${maxFiles} files, at most ${formatLimit(maxBytes)} each.`;
}

const pad = (value: number) => String(value).padStart(2, "0");

/**
 * A date and time in UTC, unambiguous in every locale: `"2026-11-24 17:52 UTC"`.
 *
 * @example
 * ```ts
 * utcText(new Date("2026-11-24T17:52:30Z")); // "2026-11-24 17:52 UTC"
 * ```
 */
export function utcText(date: Date): string {
  return `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())} UTC`;
}

/** The time zone the browser (or process) runs in, e.g. `"Europe/Berlin"`; `"UTC"` when unknown. */
export function localZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    return "UTC";
  }
}

/**
 * When a link expires, in the local time of `zone` with the zone's name, then in UTC:
 * `"Tuesday 24 November 2026 at 23:22 India Standard Time (Asia/Kolkata), 2026-11-24 17:52 UTC"`;
 * just the UTC form when the zone is UTC. `locale` is the person's (the browser's by default).
 *
 * @example
 * ```ts
 * expiryText(new Date("2026-11-24T17:52:00Z"), { zone: "Asia/Kolkata", locale: "en-GB" });
 * ```
 */
export function expiryText(date: Date, options: { zone?: string; locale?: string } = {}): string {
  const zone = options.zone ?? localZone();
  const utc = utcText(date);
  if (zone === "UTC" || zone === "Etc/UTC" || zone === "Etc/GMT") return utc;
  let local: string;
  try {
    local = new Intl.DateTimeFormat(options.locale, {
      weekday: "long",
      year: "numeric",
      month: "long",
      day: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      timeZone: zone,
      timeZoneName: "long",
    }).format(date);
  } catch {
    return utc;
  }
  return `${local} (${zone}), ${utc}`;
}
