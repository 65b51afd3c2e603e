import { describe, expect, it } from "vitest";
import { classifyAddress, isPublicAddress, parseIPv6 } from "../../../src/bridge/sources/ip-address.js";

describe("classifyAddress", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["10.0.0.1", "private"],
    ["172.16.5.4", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "link-local"],
    ["100.64.0.1", "cgnat"],
    ["100.127.255.255", "cgnat"],
    ["0.0.0.0", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["240.0.0.1", "reserved"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["[::1]", "loopback"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["fc00::1", "unique-local"],
    ["fd12:3456::1", "unique-local"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:10.0.0.1", "private"],
    ["::ffff:169.254.169.254", "link-local"],
    ["::127.0.0.1", "loopback"],
    ["64:ff9b::a9fe:a9fe", "link-local"],
    ["2002:7f00:1::", "loopback"],
    ["2001:db8::1", "documentation"],
    ["not-an-ip", "invalid"],
    ["1.2.3", "invalid"],
  ])("%s is %s", (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])(
    "%s is public",
    (address) => {
      expect(classifyAddress(address)).toBeNull();
    },
  );

  it("parses IPv6 forms to eight groups", () => {
    expect(parseIPv6("::1")).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6("1::")).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIPv6("::ffff:1.2.3.4")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect(parseIPv6("1:2:3:4:5:6:7:8")).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(parseIPv6("1.2.3.4")).toBeNull();
  });
});

describe("classifyAddress where ipaddr.js differs", () => {
  it.each([
    ["3fff::1", "documentation"], // RFC 9637, taken from ipaddr.js's range list
    ["3fff:fff::1", "documentation"],
    ["::8.8.8.8", "reserved"], // IPv4-compatible: ipaddr.js rewrites it to ::ffff:8.8.8.8, a public address
    ["1::", "reserved"], // outside 2000::/3: ipaddr.js says unicast
    ["4000::1", "reserved"],
    ["127.1", "invalid"], // inet_aton shorthands ipaddr.js parses: refused before any lookup
    ["0x7f.0.0.1", "invalid"],
    ["2130706433", "invalid"],
  ])("%s is %s", (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it("keeps the rest of 3000::/4 public", () => {
    expect(classifyAddress("3fff:1000::1")).toBeNull();
    expect(classifyAddress("3ffe::1")).toBeNull();
  });
});
