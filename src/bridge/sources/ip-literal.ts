/**
 * `isIP` of `node:net`, without loading `node:net` (1.1–1.5 ms of CPU at start, and an SDK server
 * does not load it: issue 39, docs/performance.md, session 21). The grammar is RFC 4291 §2.2 as
 * RFC 3986 §3.2.2 writes it (`IPv6address`, `IPv4address` as dotted decimal without leading zeros),
 * plus the `%zone` suffix Node accepts; test/bridge/sources/ip-literal.test.ts checks it equals
 * `net.isIP` on generated addresses, zones and garbage.
 */

/** A dotted quad: four decimal octets, 0–255, without leading zeros. */
const V4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?!$)|$)){4}$/;
const GROUP = /^[0-9a-fA-F]{1,4}$/;
const ZONE = /^[0-9a-zA-Z.:-]+$/;

/**
 * An IPv6 address: eight groups of one to four hex digits, the last two possibly a dotted quad, a
 * run of zero groups (one or more) possibly written `::` once; then optionally `%` and a zone.
 */
function isIPv6(text: string): boolean {
  const [address = "", zone, ...more] = text.split("%");
  if (more.length > 0 || (zone !== undefined && !ZONE.test(zone))) return false;
  let body = address;
  const tail = body.lastIndexOf(":") + 1;
  if (tail === 0) return false;
  if (body.includes(".", tail)) {
    if (!V4.test(body.slice(tail))) return false;
    body = `${body.slice(0, tail)}0:0`;
  }
  const halves = body.split("::");
  const groups = halves.flatMap((half) => (half === "" ? [] : half.split(":")));
  if (halves.length > 2 || !groups.every((group) => GROUP.test(group))) return false;
  return halves.length === 2 ? groups.length < 8 : groups.length === 8;
}

/**
 * 4 for a dotted-quad IPv4 address, 6 for an IPv6 address (optionally with a `%zone`), else 0: the
 * answers of `net.isIP`.
 *
 * @example
 * ```ts
 * isIP("127.0.0.1"); // 4
 * isIP("fe80::1%eth0"); // 6
 * isIP("example.com"); // 0
 * ```
 */
export function isIP(text: string): 0 | 4 | 6 {
  if (V4.test(text)) return 4;
  return isIPv6(text) ? 6 : 0;
}
