/**
 * The own `isIP` (issue 39: the root no longer loads `node:net`) answers what `net.isIP` answers:
 * on generated IPv4 and IPv6 addresses (every `::` position, embedded dotted quads, mixed case),
 * zones, near misses and garbage.
 */
import * as net from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isIP } from "../../../src/bridge/sources/ip-literal.js";

const octet = fc.oneof(
  fc.integer({ min: 0, max: 255 }).map(String),
  fc.integer({ min: 0, max: 999 }).map(String), // out of range
  fc.integer({ min: 0, max: 99 }).map((n) => `0${n}`), // leading zero
);
const v4 = fc.array(octet, { minLength: 3, maxLength: 5 }).map((parts) => parts.join("."));
const hexGroup = fc.stringMatching(/^[0-9a-fA-F]{1,5}$/);
/** 0–9 groups, one of them optionally a dotted quad at the end, with `::` anywhere (or twice). */
const v6 = fc
  .record({
    groups: fc.array(hexGroup, { minLength: 0, maxLength: 9 }),
    tail: fc.option(v4, { nil: undefined }),
    gaps: fc.array(fc.nat(9), { maxLength: 2 }),
  })
  .map(({ groups, tail, gaps }) => {
    const parts: string[] = [...groups];
    for (const gap of gaps) parts.splice(Math.min(gap, parts.length), 0, "");
    if (tail !== undefined) parts.push(tail);
    let text = parts.join(":");
    if (text.startsWith(":") && !text.startsWith("::")) text = `:${text}`;
    if (text.endsWith(":") && !text.endsWith("::")) text = `${text}:`;
    return text;
  });
const zone = fc.stringMatching(/^%[0-9a-zA-Z.:_%\- ]{0,6}$/);
const candidate = fc.oneof(
  v4,
  v6,
  fc.tuple(v6, zone).map(([address, suffix]) => address + suffix),
  fc.tuple(v4, zone).map(([address, suffix]) => address + suffix),
  fc.string({ maxLength: 20 }),
  fc.stringMatching(/^[0-9a-fA-F:.%[\] ]{0,24}$/),
);

describe("isIP (own, no node:net)", () => {
  it("answers what net.isIP answers", () => {
    fc.assert(
      fc.property(candidate, (text) => {
        expect(isIP(text)).toBe(net.isIP(text));
      }),
      { numRuns: 20_000 },
    );
  });

  it.each([
    "127.0.0.1",
    "0.0.0.0",
    "255.255.255.255",
    "256.0.0.1",
    "01.2.3.4",
    "1.2.3",
    "::",
    "::1",
    "1::",
    "1:2:3:4:5:6:7:8",
    "1:2:3:4:5:6:7::",
    "::2:3:4:5:6:7:8",
    "1:2:3:4:5:6:7:8:9",
    "::ffff:127.0.0.1",
    "::127.0.0.1",
    "64:ff9b::a9fe:a9fe",
    "2002:7f00:1::",
    "fe80::1%eth0",
    "fe80::1%",
    "[::1]",
    "a::b::c",
    ":::",
    "12345::",
    "example.com",
    "*.example.com",
    "https://example.com/",
    "user@host",
    "host:8080",
    "",
  ])("%j as net.isIP", (text) => {
    expect(isIP(text)).toBe(net.isIP(text));
  });
});
