/**
 * Sizes as people read them, in the units of the limit they are compared with: a limit of
 * 104857600 bytes is "100 MiB", so a file next to it is "120.5 MiB", never "126.4 MB". A limit that
 * is a round decimal number (10000000) is "10 MB", and sizes next to it use decimal units too.
 *
 * One formatter for every text that shows a size: the upload page and widget (bundled into the
 * browser code from here), their error texts, and the server's own replies. Pure: no Node API.
 */

/** Which family of units a size is written in. */
export type ByteUnits = "binary" | "decimal";

const BINARY = ["KiB", "MiB", "GiB", "TiB"] as const;
const DECIMAL = ["kB", "MB", "GB", "TB"] as const;

/**
 * The units a limit reads best in: `"decimal"` when it is a whole number of kB, MB, GB or TB and
 * not of the binary unit of the same rank (10000000 is 10 MB), else `"binary"` (52428800 is 50 MiB).
 *
 * @example
 * ```ts
 * unitsOf(50 * 1024 * 1024); // "binary"
 * unitsOf(10_000_000); // "decimal"
 * ```
 */
export function unitsOf(limit: number): ByteUnits {
  if (!Number.isFinite(limit) || limit < 1000) return "binary";
  let binaryRank = -1;
  let decimalRank = -1;
  for (let rank = 1; rank <= 4; rank++) {
    if (limit % 1024 ** rank === 0) binaryRank = rank;
    if (limit % 1000 ** rank === 0) decimalRank = rank;
  }
  return decimalRank > binaryRank ? "decimal" : "binary";
}

function number(value: number, digits: number): string {
  const text = value.toFixed(digits);
  return text.includes(".") ? text.replace(/\.?0+$/, "") : text;
}

/**
 * A size in `units`: `"1 byte"`, `"512 bytes"`, `"1.5 KiB"`, `"100 MiB"` (one decimal under 10,
 * none above; `"10 MB"` in decimal units).
 *
 * @example
 * ```ts
 * formatBytes(1536); // "1.5 KiB"
 * formatBytes(2_500_000, "decimal"); // "2.5 MB"
 * ```
 */
export function formatBytes(bytes: number, units: ByteUnits = "binary"): string {
  if (bytes < 1000 || (units === "binary" && bytes < 1024)) {
    return `${bytes} ${bytes === 1 ? "byte" : "bytes"}`;
  }
  const base = units === "binary" ? 1024 : 1000;
  const names = units === "binary" ? BINARY : DECIMAL;
  let value = bytes / base;
  let unit = 0;
  while (value >= base && unit < names.length - 1) {
    value /= base;
    unit += 1;
  }
  return `${number(value, value >= 10 ? 0 : 1)} ${names[unit]}`;
}

/**
 * A limit, exactly: `"100 MiB"`, `"10 MB"`, or — when no unit divides it — the rounded size with the
 * exact byte count (`"1.2 MiB (1234567 bytes)"`), so a limit is never shown larger or smaller than
 * it is.
 *
 * @example
 * ```ts
 * formatLimit(100 * 1024 * 1024); // "100 MiB"
 * formatLimit(1_234_567); // "1.2 MiB (1234567 bytes)"
 * ```
 */
export function formatLimit(limit: number): string {
  const units = unitsOf(limit);
  const text = formatBytes(limit, units);
  return shownExactly(limit, units) ? text : `${text} (${limit} bytes)`;
}

/** Whether {@link formatBytes} writes `bytes` without rounding. */
function shownExactly(bytes: number, units: ByteUnits): boolean {
  const [amount, name] = formatBytes(bytes, units).split(" ");
  const names: readonly string[] = units === "binary" ? BINARY : DECIMAL;
  const rank = names.indexOf(name ?? "") + 1;
  return Number(amount) * (units === "binary" ? 1024 : 1000) ** rank === bytes;
}

/**
 * A size next to the limit it is compared with, in the limit's units and with enough decimals that
 * a file over the limit never reads as equal to it (`"100.1 MiB"` against `"100 MiB"`; the byte
 * count when even two decimals cannot tell them apart).
 *
 * @example
 * ```ts
 * formatAgainst(120.5 * 1024 * 1024, 100 * 1024 * 1024); // "120.5 MiB"
 * formatAgainst(100 * 1024 * 1024 + 1, 100 * 1024 * 1024); // "104857601 bytes"
 * ```
 */
export function formatAgainst(bytes: number, limit: number): string {
  const units = unitsOf(limit);
  const text = formatBytes(bytes, units);
  if (bytes === limit || text !== formatBytes(limit, units)) return text;
  const base = units === "binary" ? 1024 : 1000;
  const names = units === "binary" ? BINARY : DECIMAL;
  let value = bytes;
  let unit = -1;
  while (value >= base && unit < names.length - 1) {
    value /= base;
    unit += 1;
  }
  const precise = unit >= 0 ? `${number(value, 2)} ${names[unit]}` : "";
  // Two decimals can round up to the limit's own text (310.995 GiB -> "311 GiB"): then the bytes.
  const differs = precise !== text && precise !== `${number(limit / base ** (unit + 1), 2)} ${names[unit]}`;
  if (unit >= 0 && differs) return precise;
  return `${bytes} bytes`;
}
