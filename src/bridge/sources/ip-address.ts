/*
 * Kept hand-written after measuring ipaddr.js 2.5.0 (what proxy-addr and Express trust): behind the
 * same `isIP` gate it is no faster (IPv4 1.7–3.0 vs 1.3–1.6 µs, IPv6 7.3–7.7 vs 6.6–8.6 µs per call),
 * and looser for this guard: it rewrites `::a.b.c.d` to `::ffff:a.b.c.d` (so `::8.8.8.8` passes),
 * calls `1::` or `4000::1` unicast, and we would still own the embedded-IPv4 rules. Its range list
 * gave us one prefix we lacked: 3fff::/20.
 */
import { isIP } from "./ip-literal.js";

/** Why an address is refused, or `null` when it is a public unicast address. */
export type AddressClass =
  | "unspecified"
  | "loopback"
  | "private"
  | "link-local"
  | "unique-local"
  | "cgnat"
  | "multicast"
  | "broadcast"
  | "reserved"
  | "documentation"
  | "invalid";

type V4Range = readonly [base: number, prefix: number, kind: AddressClass];

function v4(text: string): number {
  return text.split(".").reduce((acc, part) => acc * 256 + Number(part), 0);
}

const V4_RANGES: readonly V4Range[] = [
  [v4("0.0.0.0"), 8, "unspecified"],
  [v4("10.0.0.0"), 8, "private"],
  [v4("100.64.0.0"), 10, "cgnat"],
  [v4("127.0.0.0"), 8, "loopback"],
  [v4("169.254.0.0"), 16, "link-local"],
  [v4("172.16.0.0"), 12, "private"],
  [v4("192.0.0.0"), 24, "reserved"],
  [v4("192.0.2.0"), 24, "documentation"],
  [v4("192.88.99.0"), 24, "reserved"],
  [v4("192.168.0.0"), 16, "private"],
  [v4("198.18.0.0"), 15, "reserved"],
  [v4("198.51.100.0"), 24, "documentation"],
  [v4("203.0.113.0"), 24, "documentation"],
  [v4("224.0.0.0"), 4, "multicast"],
  [v4("255.255.255.255"), 32, "broadcast"],
  [v4("240.0.0.0"), 4, "reserved"],
];

function classifyV4(value: number): AddressClass | null {
  for (const [base, prefix, kind] of V4_RANGES) {
    const size = 2 ** (32 - prefix);
    if (value >= base && value < base + size) return kind;
  }
  return null;
}

/** Parses a dotted-quad IPv4 address to a 32-bit number, or `null`. */
export function parseIPv4(text: string): number | null {
  if (isIP(text) !== 4) return null;
  return v4(text);
}

/** Parses an IPv6 address (with `::` and an embedded IPv4 tail, no zone) to 8 16-bit groups. */
export function parseIPv6(text: string): number[] | null {
  return isIP(text) === 6 ? groupsOf(text) : null;
}

/** The 8 groups of `text`, which `isIP` has already found to be IPv6. */
function groupsOf(text: string): number[] | null {
  let body = text;
  const lastColon = body.lastIndexOf(":");
  const last = body.slice(lastColon + 1);
  if (last.includes(".")) {
    const value = v4(last); // isIP accepted the whole address, so the tail is a dotted quad
    const high = Math.floor(value / 65536).toString(16);
    const low = (value % 65536).toString(16);
    body = `${body.slice(0, lastColon + 1)}${high}:${low}`;
  }
  const halves = body.split("::");
  if (halves.length > 2) return null;
  const parseGroups = (part: string) =>
    part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16));
  const left = parseGroups(halves[0] ?? "");
  let groups = left;
  if (halves.length === 2) {
    const right = parseGroups(halves[1] ?? "");
    const fill = 8 - left.length - right.length;
    if (fill < 1) return null;
    groups = [...left, ...new Array<number>(fill).fill(0), ...right];
  }
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) return null;
  return groups;
}

function embeddedV4(high: number, low: number): number {
  return high * 65536 + low;
}

function classifyV6(g: number[]): AddressClass | null {
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, h = 0, i = 0] = g;
  const firstFiveZero = a === 0 && b === 0 && c === 0 && d === 0 && e === 0;
  if (firstFiveZero && f === 0 && h === 0 && i === 0) return "unspecified";
  if (firstFiveZero && f === 0 && h === 0 && i === 1) return "loopback";
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d): judge the embedded address.
  if (firstFiveZero && (f === 0xffff || f === 0))
    return classifyV4(embeddedV4(h, i)) ?? (f === 0 ? "reserved" : null);
  // NAT64 64:ff9b::/96 and 6to4 2002::/16 embed an IPv4 address too.
  if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0) {
    return classifyV4(embeddedV4(h, i));
  }
  if (a === 0x2002) return classifyV4(embeddedV4(b, c)) ?? null;
  if ((a & 0xfe00) === 0xfc00) return "unique-local";
  if ((a & 0xffc0) === 0xfe80) return "link-local";
  if ((a & 0xffc0) === 0xfec0) return "link-local"; // deprecated site-local
  if ((a & 0xff00) === 0xff00) return "multicast";
  if (a === 0x2001 && b === 0x0db8) return "documentation";
  if (a === 0x2001 && b < 0x0200) return "reserved"; // IETF protocol assignments, Teredo
  if (a === 0x0100 && b === 0 && c === 0 && d === 0) return "reserved"; // discard prefix
  if (a === 0x3fff && b < 0x1000) return "documentation"; // 3fff::/20, RFC 9637
  if ((a & 0xe000) !== 0x2000) return "reserved"; // outside global unicast 2000::/3
  return null;
}

/**
 * Classifies an IP address: `null` for a public unicast address that may be fetched, otherwise why
 * it must not be (loopback, private, link-local, unique-local, CGNAT, multicast, unspecified, …).
 * IPv4-mapped / compatible / NAT64 / 6to4 IPv6 forms are judged by the IPv4 address they carry.
 * Brackets and a zone id (`fe80::1%eth0`) are accepted; anything unparsable is `"invalid"`.
 */
export function classifyAddress(address: string): AddressClass | null {
  let text = address.trim();
  if (text.startsWith("[") && text.endsWith("]")) text = text.slice(1, -1);
  const zone = text.indexOf("%");
  if (zone >= 0) text = text.slice(0, zone);
  const family = isIP(text); // node's own literal grammar: dotted quads only, no 0x7f.1 or 2130706433
  if (family === 4) return classifyV4(v4(text));
  const groups = family === 6 ? groupsOf(text) : null;
  return groups === null ? "invalid" : classifyV6(groups);
}

/** True when the address is a public unicast address (see {@link classifyAddress}). */
export function isPublicAddress(address: string): boolean {
  return classifyAddress(address) === null;
}
