import { createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { HmacSha256 } from "../../src/signing/hmac.js";

describe("HmacSha256", () => {
  it("gives createHmac's bytes for any key and any message, bytes or Latin-1 text", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 200 }),
        fc.array(
          fc.oneof(
            fc.uint8Array({ maxLength: 2000, size: "max" }),
            fc.string({ unit: "binary-ascii", maxLength: 2000, size: "max" }),
          ),
          {
            minLength: 1,
            maxLength: 6,
          },
        ),
        (key, messages) => {
          // One key for several messages in turn, longer and shorter: the buffer it reuses is written over.
          const hmac = new HmacSha256(key);
          for (const message of messages) {
            const expected =
              typeof message === "string"
                ? createHmac("sha256", key).update(message, "latin1").digest()
                : createHmac("sha256", key).update(message).digest();
            expect(hmac.digest(message).equals(expected)).toBe(true);
          }
        },
      ),
      // Shrinking arrays of long messages takes minutes; the cases below pin the edges instead.
      { endOnFailure: true },
    );
  });

  it("grows past its first 512 bytes of room and goes on right for shorter messages", () => {
    const key = Buffer.from("a key of forty bytes for the test 012345");
    const hmac = new HmacSha256(key);
    for (const length of [0, 1, 511, 512, 513, 1000, 64, 5000, 3, 100_000, 7]) {
      const message = Buffer.alloc(length, length % 251);
      expect(hmac.digest(message).equals(createHmac("sha256", key).update(message).digest())).toBe(true);
      const text = "x".repeat(length);
      expect(hmac.digest(text).equals(createHmac("sha256", key).update(text, "latin1").digest())).toBe(true);
    }
  });

  it("matches RFC 4231 test cases 1, 2 and 6 (a key longer than a block)", () => {
    const hex = (text: string) => Buffer.from(text, "hex");
    expect(new HmacSha256(hex("0b".repeat(20))).digest("Hi There").toString("hex")).toBe(
      "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
    );
    expect(new HmacSha256(Buffer.from("Jefe")).digest("what do ya want for nothing?").toString("hex")).toBe(
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    );
    expect(
      new HmacSha256(hex("aa".repeat(131)))
        .digest("Test Using Larger Than Block-Size Key - Hash Key First")
        .toString("hex"),
    ).toBe("60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  });

  it("keeps its own copy of the key", () => {
    const key = Buffer.from("k".repeat(40));
    const hmac = new HmacSha256(key);
    key.fill(0);
    expect(hmac.digest("m").equals(createHmac("sha256", "k".repeat(40)).update("m").digest())).toBe(true);
  });
});

describe("HmacSha256 on a Node without crypto.hash (before 20.12)", () => {
  it("falls back to createHmac, with the same bytes", async () => {
    vi.resetModules();
    let asked = 0;
    // node:crypto is loaded on first use through the package's loader: its `crypto.hash` is gone.
    vi.doMock("../../src/internal/node-builtins.js", async () => {
      const actual = await vi.importActual<typeof import("../../src/internal/node-builtins.js")>(
        "../../src/internal/node-builtins.js",
      );
      const oneShotHash = () => {
        asked++;
        return undefined;
      };
      return { ...actual, oneShotHash };
    });
    try {
      const { HmacSha256: Fallback } = await import("../../src/signing/hmac.js");
      const key = Buffer.from("a key of forty bytes for the test 012345");
      const hmac = new Fallback(key);
      for (const message of ["", "header.payload", "x".repeat(1000)]) {
        expect(
          hmac.digest(message).equals(createHmac("sha256", key).update(message, "latin1").digest()),
        ).toBe(true);
      }
      const bytes = Buffer.alloc(700, 9);
      expect(hmac.digest(bytes).equals(createHmac("sha256", key).update(bytes).digest())).toBe(true);
      expect(asked).toBeGreaterThan(0);
    } finally {
      vi.doUnmock("../../src/internal/node-builtins.js");
      vi.resetModules();
    }
  });
});
