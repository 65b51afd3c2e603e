/**
 * `isIP` of `node:net`, without loading `node:net` (1.1–1.5 ms of CPU at start, and an SDK server
 * does not load it: issue 39, docs/performance.md, session 21). The grammar is RFC 4291 §2.2 as
 * RFC 3986 §3.2.2 writes it (`IPv6address`, `IPv4address` as dotted decimal without leading zeros),
 * plus the `%zone` suffix Node accepts; test/bridge/sources/ip-literal.test.ts checks it equals
 * `net.isIP` on generated addresses, zones and garbage.
 */

/** A decimal octet, 0–255, without leading zeros. */
const OCTET = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]\\d|\\d)";
const V4 = `(?:${OCTET}\\.){3}${OCTET}`;
/** One to four hex digits. */
const H16 = "[0-9a-fA-F]{1,4}";
/** The last 32 bits: two groups or a dotted quad. */
const LS32 = `(?:${H16}:${H16}|${V4})`;

const IPV4 = new RegExp(`^${V4}$`);
const IPV6 = new RegExp(
  `^(?:${[
    `(?:${H16}:){6}${LS32}`,
    `::(?:${H16}:){5}${LS32}`,
    `(?:${H16})?::(?:${H16}:){4}${LS32}`,
    `(?:(?:${H16}:){0,1}${H16})?::(?:${H16}:){3}${LS32}`,
    `(?:(?:${H16}:){0,2}${H16})?::(?:${H16}:){2}${LS32}`,
    `(?:(?:${H16}:){0,3}${H16})?::${H16}:${LS32}`,
    `(?:(?:${H16}:){0,4}${H16})?::${LS32}`,
    `(?:(?:${H16}:){0,5}${H16})?::${H16}`,
    `(?:(?:${H16}:){0,6}${H16})?::`,
  ].join("|")})(?:%[0-9a-zA-Z.:-]+)?$`,
);

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
  if (IPV4.test(text)) return 4;
  return IPV6.test(text) ? 6 : 0;
}
