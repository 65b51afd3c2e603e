import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assertCanonicalToken } from "../../src/signing/claims.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import type { SignedClaimValue } from "../../src/signing/types.js";
import { codeOf } from "../support/helpers.js";

const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);
const minter = new SignedUrlMinter({
  secret: "property-test-secret-property-test-secret",
  baseUrl: "https://files.example.com",
  now: () => T0,
});
const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

// Scopes and ids as users give them: any string without control characters.
const text = (maxLength: number) =>
  fc
    .string({ unit: "binary", minLength: 1, maxLength })
    // biome-ignore lint/suspicious/noControlCharactersInRegex: excluding control characters is the point
    .filter((value) => !/[\u0000-\u001f\u007f]/.test(value));

const claimValue: fc.Arbitrary<SignedClaimValue> = fc.oneof(
  fc.boolean(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.string({ unit: "binary", maxLength: 64 }),
);
const claimKey = fc.stringMatching(/^[A-Za-z0-9._-]{1,16}$/);

describe("SignedUrlMinter properties", () => {
  it("round-trips any scope, file id, action and extra claims", async () => {
    await fc.assert(
      fc.asyncProperty(
        text(256),
        text(256),
        fc.constantFrom("download" as const, "upload" as const),
        fc.dictionary(claimKey, claimValue, { maxKeys: 8 }),
        async (scope, fileId, action, claims) => {
          const { token, url } = await minter.mint({ scope, fileId, action, claims });
          expect(url.endsWith(`/files/${action}/${token}`)).toBe(true);
          const verified = await minter.verify(token, { action, scope, fileId });
          expect(verified.scope).toBe(scope);
          expect(verified.fileId).toBe(fileId);
          expect(verified.action).toBe(action);
          // JSON turns -0 into 0; everything else comes back as given
          expect(verified.claims).toEqual(
            Object.fromEntries(
              Object.entries(claims).map(([k, v]) => [k, typeof v === "number" && v === 0 ? 0 : v]),
            ),
          );
        },
      ),
      { numRuns: 150 },
    );
  });

  it("answers INVALID_TOKEN (never another error) for arbitrary strings", async () => {
    const dotted = fc
      .array(fc.stringMatching(/^[A-Za-z0-9_-]{0,60}$/), { minLength: 1, maxLength: 5 })
      .map((segments) => segments.join("."));
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ unit: "binary" }), dotted), async (token) => {
        expect(await codeOf(minter.verify(token, { action: "download" }))).toBe("INVALID_TOKEN");
      }),
      { numRuns: 300 },
    );
  });

  it("refuses every single-character change of a valid token", async () => {
    const { token } = await minter.mint({ scope: "A", fileId: "file-1", action: "download" });
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: token.length - 1 }),
        fc.constantFrom(...B64URL.split("")),
        async (index, replacement) => {
          fc.pre(token[index] !== "." && token[index] !== replacement);
          const changed = token.slice(0, index) + replacement + token.slice(index + 1);
          expect(await codeOf(minter.verify(changed, { action: "download" }))).toBe("INVALID_TOKEN");
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("assertCanonicalToken", () => {
  it("accepts a three-segment token exactly when every segment is the base64url its bytes encode to", () => {
    const segment = fc
      .array(fc.constantFrom(...B64URL), { minLength: 1, maxLength: 11 })
      .map((chars) => chars.join(""));
    fc.assert(
      fc.property(fc.tuple(segment, segment, segment), (segments) => {
        const canonical = segments.every(
          (part) => Buffer.from(part, "base64url").toString("base64url") === part,
        );
        let accepted = true;
        try {
          assertCanonicalToken(segments.join("."));
        } catch {
          accepted = false;
        }
        expect(accepted).toBe(canonical);
      }),
      { numRuns: 5000 },
    );
  });
});
