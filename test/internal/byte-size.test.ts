import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatAgainst, formatBytes, formatLimit, unitsOf } from "../../src/internal/byte-size.js";
import { messageFor } from "../../src/ui/client/uploader.js";
import { expiryText, limitsText, utcText } from "../../src/ui/page-text.js";

const MiB = 1024 * 1024;

describe("sizes in the units of their limit", () => {
  it("reads a limit in the units it is round in", () => {
    expect(unitsOf(50 * MiB)).toBe("binary");
    expect(unitsOf(10_000_000)).toBe("decimal");
    expect(formatLimit(100 * MiB)).toBe("100 MiB");
    expect(formatLimit(64 * MiB)).toBe("64 MiB");
    expect(formatLimit(10_000_000)).toBe("10 MB");
    expect(formatLimit(1536)).toBe("1.5 KiB");
    expect(formatLimit(1)).toBe("1 byte");
    // No unit divides it: the exact count follows, so the limit never reads larger or smaller.
    expect(formatLimit(1_234_567)).toBe("1.2 MiB (1234567 bytes)");
  });

  it("never shows a size over the limit as equal to the limit", () => {
    expect(formatAgainst(2.5 * MiB, 2 * MiB)).toBe("2.5 MiB");
    expect(formatAgainst(100 * MiB + 20_000, 100 * MiB)).toBe("100.02 MiB");
    expect(formatAgainst(100 * MiB + 1, 100 * MiB)).toBe("104857601 bytes");
    expect(formatAgainst(5_000_001, 5_000_000)).toBe("5000001 bytes");
    // Found by the property below: two decimals round 310.995 GiB up to the limit's "311 GiB".
    expect(formatAgainst(333927646929 + 691626, 333927646929)).toBe("333928338555 bytes");
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 40 }),
        fc.integer({ min: 1, max: 2 ** 20 }),
        (limit, over) => {
          expect(formatAgainst(limit + over, limit)).not.toBe(formatBytes(limit, unitsOf(limit)));
        },
      ),
    );
  });

  it("is the one formatter of the page, the widget and their error texts", () => {
    expect(limitsText(3, 2 * MiB)).toBe("Up to 3 files, at most 2 MiB each.");
    expect(limitsText(1, 10_000_000)).toBe("One file, at most 10 MB.");
    expect(messageFor("FILE_TOO_LARGE", 413, 50 * MiB)).toBe(
      "A file is larger than the limit of 50 MiB. Nothing was uploaded.",
    );
  });

  it("says an expiry as a date, time and zone, then in UTC", () => {
    const date = new Date("2026-11-24T17:52:30Z");
    expect(utcText(date)).toBe("2026-11-24 17:52 UTC");
    expect(expiryText(date, { zone: "UTC" })).toBe("2026-11-24 17:52 UTC");
    const text = expiryText(date, { zone: "Europe/Berlin", locale: "en-GB" });
    expect(text).toMatch(/24 November 2026/);
    expect(text).toMatch(/18:52/);
    expect(text).toMatch(/Central European Standard Time \(Europe\/Berlin\), 2026-11-24 17:52 UTC$/);
  });
});
