import { Buffer } from "node:buffer";
import { createHmac } from "node:crypto";
import {
  decodeJwt,
  decodeProtectedHeader,
  exportSPKI,
  generateKeyPair,
  jwtVerify,
  SignJWT,
  UnsecuredJWT,
} from "jose";
import { afterEach, describe, expect, it } from "vitest";
import { isFileBridgeError } from "../../src/errors/file-bridge-error.js";
import { ScopeSeal } from "../../src/signing/scope-seal.js";
import { SIGNED_URL_TOKEN_TYPE, SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import type { SignedUrlMinterOptions } from "../../src/signing/types.js";
import { memoryState } from "../../src/storage/memory-state.js";
import type { StateStore } from "../../src/storage/types.js";
import { codeOf } from "../support/helpers.js";

const SECRET = "s3cret-s3cret-s3cret-s3cret-s3cret!"; // 35 bytes
/** Scope "A" sealed as the minter seals it, for hand-made tokens. */
const SEALED_A = new ScopeSeal(new TextEncoder().encode(SECRET)).seal("A");
const OTHER_SECRET = "another-secret-another-secret-another";
const BASE = "http://127.0.0.1:3000";
const T0 = Date.UTC(2030, 0, 1, 12, 0, 0); // a whole second
const FILE = "01jabcdefghjkmnpqrstvwxyz0";
const OTHER_FILE = "01jabcdefghjkmnpqrstvwxyz1";

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

function parts(token: string): [string, string, string] {
  return token.split(".") as [string, string, string];
}

let clock = T0;
const states: StateStore[] = [];

function makeState(): StateStore {
  const state = memoryState({ now: () => clock, sweepInterval: 0 });
  states.push(state);
  return state;
}

function makeMinter(options: Partial<SignedUrlMinterOptions> = {}): SignedUrlMinter {
  const base: SignedUrlMinterOptions = { baseUrl: BASE, now: () => clock };
  if (options.keys === undefined) base.secret = SECRET;
  return new SignedUrlMinter({ ...base, ...options });
}

afterEach(async () => {
  clock = T0;
  for (const state of states.splice(0)) await state.close?.();
});

describe("SignedUrlMinter options", () => {
  it("refuses secrets shorter than 32 bytes", async () => {
    const short = "x".repeat(31);
    expect(await codeOf(() => makeMinter({ secret: short }))).toBe("INVALID_OPTION");
    expect(await codeOf(() => makeMinter({ secret: new Uint8Array(31) }))).toBe("INVALID_OPTION");
    expect(await codeOf(() => makeMinter({ keys: [{ kid: "a", secret: short }] }))).toBe("INVALID_OPTION");
    // 11 three-byte characters = 33 bytes although only 11 code units
    expect(await codeOf(() => makeMinter({ secret: "€".repeat(11) }))).toBe("OK");
    expect(await codeOf(() => makeMinter({ secret: new Uint8Array(32) }))).toBe("OK");
  });

  it("names the bad option in the error data", () => {
    try {
      makeMinter({ secret: "short" });
      expect.unreachable();
    } catch (error) {
      expect(isFileBridgeError(error, "INVALID_OPTION")).toBe(true);
      expect((error as { data?: { option?: string } }).data?.option).toBe("secret");
    }
  });

  it.each([
    "",
    "127.0.0.1:3000/files",
    "/files",
    "ftp://127.0.0.1/",
    "javascript:alert(1)",
    "file:///tmp",
    "http://user:pass@127.0.0.1:3000",
    "http://127.0.0.1:3000/?a=1",
    "http://127.0.0.1:3000/?",
    "http://127.0.0.1:3000/#x",
    "not a url",
  ])("refuses baseUrl %j", async (baseUrl) => {
    expect(await codeOf(() => makeMinter({ baseUrl }))).toBe("INVALID_OPTION");
  });

  it("refuses a baseUrl that is not a string", async () => {
    expect(await codeOf(() => makeMinter({ baseUrl: 42 as unknown as string }))).toBe("INVALID_OPTION");
  });

  it("accepts a baseUrl function, called and validated at mint time (a server on port 0)", async () => {
    let origin: unknown = "not yet listening";
    let calls = 0;
    const minter = makeMinter({
      baseUrl: () => {
        calls++;
        return origin as string;
      },
    });
    expect(calls).toBe(0); // not called while constructing
    const early = await codeOf(minter.mint({ scope: "s", fileId: FILE, action: "download" }));
    expect(early).toBe("INVALID_OPTION");
    origin = "http://127.0.0.1:41234/";
    const { url, token } = await minter.mint({ scope: "s", fileId: FILE, action: "download" });
    expect(url).toBe(`http://127.0.0.1:41234/files/download/${token}`);
    expect(minter.baseUrl).toBe("http://127.0.0.1:41234");
    origin = "https://files.example.com/api";
    expect(
      (await minter.downloadUrl({ scope: "s", id: FILE })).url.startsWith(
        "https://files.example.com/api/files/download/",
      ),
    ).toBe(true);
    for (const bad of ["ftp://x/", "http://h/?q", 42, undefined]) {
      origin = bad;
      try {
        await minter.mint({ scope: "s", fileId: FILE, action: "download" });
        expect.unreachable();
      } catch (error) {
        expect(isFileBridgeError(error, "INVALID_OPTION")).toBe(true);
        expect((error as { data?: { option?: string } }).data?.option).toBe("baseUrl");
      }
    }
    const throwing = makeMinter({
      baseUrl: () => {
        throw new Error("boom");
      },
    });
    expect(await codeOf(throwing.mint({ scope: "s", fileId: FILE, action: "upload" }))).toBe(
      "INVALID_OPTION",
    );
    // Verifying never needs the URL.
    expect((await throwing.verify(token, { action: "download" })).fileId).toBe(FILE);
  });

  it("normalizes baseUrl and basePath", () => {
    const minter = makeMinter({ baseUrl: "https://Files.Example.com/api/", basePath: "/dl/" });
    expect(minter.baseUrl).toBe("https://files.example.com/api");
    expect(minter.basePath).toBe("/dl");
    expect(makeMinter({ basePath: "/" }).basePath).toBe("");
    expect(makeMinter().basePath).toBe("/files");
  });

  it.each(["files", "//files", "/a//b", "/a/../b", "/./a", "/a?b", "/a#b", "/a b", ""])(
    "refuses basePath %j",
    async (basePath) => {
      expect(await codeOf(() => makeMinter({ basePath }))).toBe("INVALID_OPTION");
    },
  );

  it("refuses bad ttl, clockTolerance, issuer, state and now", async () => {
    for (const ttl of [0, -5, "0s", "500ms", "5 minutes", Number.NaN]) {
      expect(await codeOf(() => makeMinter({ ttl: ttl as never }))).toBe("INVALID_OPTION");
    }
    expect(await codeOf(() => makeMinter({ clockTolerance: -1 }))).toBe("INVALID_OPTION");
    expect(await codeOf(() => makeMinter({ issuer: "" }))).toBe("INVALID_OPTION");
    expect(await codeOf(() => makeMinter({ state: {} as StateStore }))).toBe("INVALID_OPTION");
    expect(await codeOf(() => makeMinter({ now: 5 as unknown as () => number }))).toBe("INVALID_OPTION");
  });

  it("requires exactly one of secret or keys, with valid unique kids", async () => {
    expect(await codeOf(() => new SignedUrlMinter({ baseUrl: BASE }))).toBe("INVALID_OPTION");
    expect(
      await codeOf(() => makeMinter({ secret: SECRET, keys: [{ kid: "a", secret: OTHER_SECRET }] })),
    ).toBe("INVALID_OPTION");
    expect(await codeOf(() => makeMinter({ keys: [] }))).toBe("INVALID_OPTION");
    expect(await codeOf(() => makeMinter({ keys: [{ kid: "", secret: SECRET }] }))).toBe("INVALID_OPTION");
    expect(await codeOf(() => makeMinter({ keys: [{ kid: "a/b", secret: SECRET }] }))).toBe("INVALID_OPTION");
    expect(
      await codeOf(() =>
        makeMinter({
          keys: [
            { kid: "a", secret: SECRET },
            { kid: "a", secret: OTHER_SECRET },
          ],
        }),
      ),
    ).toBe("INVALID_OPTION");
  });
});

describe("SignedUrlMinter mint and verify", () => {
  it("round-trips a download token bound to scope, file and action", async () => {
    const minter = makeMinter();
    const minted = await minter.mint({ scope: "chat-1", fileId: FILE, action: "download" });
    expect(minted.url).toBe(`${BASE}/files/download/${minted.token}`);
    expect(minted.expiresAt).toBe(T0 + 5 * 60_000);

    const header = decodeProtectedHeader(minted.token);
    expect(header).toEqual({ alg: "HS256", typ: SIGNED_URL_TOKEN_TYPE, kid: "default" });
    const payload = decodeJwt(minted.token);
    expect(payload).toMatchObject({ fid: FILE, act: "download", iss: "mcp-file-bridge" });
    // The scope is sealed: nothing readable in the URL names it.
    expect(typeof payload.scs).toBe("string");
    expect(payload.scp).toBeUndefined();
    expect(JSON.stringify(payload)).not.toContain("chat-1");
    expect(payload.one).toBeUndefined();
    expect(payload.jti).toBe(minted.jti);

    const claims = await minter.verify(minted.token, { action: "download", scope: "chat-1", fileId: FILE });
    expect(claims).toEqual({
      scope: "chat-1",
      fileId: FILE,
      action: "download",
      jti: minted.jti,
      kid: "default",
      iat: T0,
      exp: T0 + 5 * 60_000,
      singleUse: false,
      claims: {},
    });
    // The binding is optional: a route reads it from the result.
    expect((await minter.verify(minted.token, { action: "download" })).scope).toBe("chat-1");
  });

  it("carries extra claims and a per-mint ttl, and uses a fresh jti per mint", async () => {
    const minter = makeMinter({ basePath: "/" });
    const a = await minter.mint({
      scope: "s",
      fileId: "ticket-1",
      action: "upload",
      ttl: "10m",
      claims: { maxBytes: 1048576, note: "hi", inline: false },
    });
    const b = await minter.mint({ scope: "s", fileId: "ticket-1", action: "upload" });
    expect(a.url).toBe(`${BASE}/upload/${a.token}`);
    expect(a.expiresAt).toBe(T0 + 600_000);
    expect(a.jti).not.toBe(b.jti);
    expect(a.token).not.toBe(b.token);
    const claims = await minter.verify(a.token, { action: "upload", fileId: "ticket-1" });
    expect(claims.claims).toEqual({ maxBytes: 1048576, note: "hi", inline: false });
  });

  it("seals one scope the same in every token and on every replica, another scope otherwise", async () => {
    const minter = makeMinter();
    const replica = makeMinter();
    const scope = "mcp-session-7f1c2e9a";
    const tokens = [
      await minter.mint({ scope, fileId: FILE, action: "download" }),
      await minter.mint({ scope, fileId: OTHER_FILE, action: "upload" }),
      await replica.mint({ scope, fileId: FILE, action: "download" }),
    ].map(({ token }) => token);
    const sealed = tokens.map((token) => decodeJwt(token).scs);
    expect(new Set(sealed).size).toBe(1);
    for (const token of tokens) expect(JSON.stringify(decodeJwt(token))).not.toContain(scope);
    const other = await minter.mint({ scope: "mcp-session-7f1c2e9b", fileId: FILE, action: "download" });
    expect(decodeJwt(other.token).scs).not.toBe(sealed[0]);
    // Each minter opens the other's seals, remembered or not.
    expect(
      (await replica.verify(tokens[0] as string, { action: "download", scope, fileId: FILE })).scope,
    ).toBe(scope);
    expect(
      (await minter.verify(tokens[2] as string, { action: "download", scope, fileId: FILE })).scope,
    ).toBe(scope);
    expect((await replica.verify(other.token, { action: "download" })).scope).toBe("mcp-session-7f1c2e9b");
    expect(
      await codeOf(makeMinter({ secret: OTHER_SECRET }).verify(tokens[0] as string, { action: "download" })),
    ).toBe("INVALID_TOKEN");
  });

  it("downloadUrl mints a download token for a stored file", async () => {
    const minter = makeMinter();
    const file = { id: FILE, scope: "chat-9" };
    const { url, token } = await minter.downloadUrl(file, { ttl: 30 });
    expect(url).toBe(`${BASE}/files/download/${token}`);
    const claims = await minter.verify(token, { action: "download", scope: "chat-9", fileId: FILE });
    expect(claims.exp).toBe(T0 + 30_000);
    expect(await codeOf(minter.verify(token, { action: "upload" }))).toBe("NOT_FOUND");
  });

  it("refuses bad mint input with INVALID_INPUT / INVALID_OPTION", async () => {
    const minter = makeMinter();
    const ok = { scope: "s", fileId: FILE, action: "download" as const };
    expect(await codeOf(minter.mint({ ...ok, scope: "" }))).toBe("INVALID_INPUT");
    expect(await codeOf(minter.mint({ ...ok, scope: "a\nb" }))).toBe("INVALID_INPUT");
    expect(await codeOf(minter.mint({ ...ok, fileId: "" }))).toBe("INVALID_INPUT");
    expect(await codeOf(minter.mint({ ...ok, fileId: "x".repeat(257) }))).toBe("INVALID_INPUT");
    expect(await codeOf(minter.mint({ ...ok, action: "delete" as never }))).toBe("INVALID_INPUT");
    expect(await codeOf(minter.mint({ ...ok, claims: { "bad key": 1 } }))).toBe("INVALID_INPUT");
    expect(await codeOf(minter.mint({ ...ok, claims: { n: Number.POSITIVE_INFINITY } }))).toBe(
      "INVALID_INPUT",
    );
    expect(await codeOf(minter.mint({ ...ok, claims: { o: {} as never } }))).toBe("INVALID_INPUT");
    expect(await codeOf(minter.mint({ ...ok, claims: [] as never }))).toBe("INVALID_INPUT");
    expect(await codeOf(minter.mint({ ...ok, ttl: "0s" }))).toBe("INVALID_OPTION");
    expect(await codeOf(minter.mint({ ...ok, ttl: "1m", notBefore: "2m" }))).toBe("INVALID_OPTION");
  });
});

describe("SignedUrlMinter refuses forged and misused tokens", () => {
  it("refuses malformed tokens", async () => {
    const minter = makeMinter();
    for (const token of ["", "abc", "a.b", "a.b.c.d", "a.b.", "é.b.c", `${"a".repeat(9000)}.b.c`]) {
      expect(await codeOf(minter.verify(token, { action: "download" }))).toBe("INVALID_TOKEN");
    }
    expect(await codeOf(minter.verify(42 as unknown as string, { action: "download" }))).toBe(
      "INVALID_TOKEN",
    );
  });

  it("refuses a tampered payload", async () => {
    const minter = makeMinter();
    const { token } = await minter.mint({ scope: "A", fileId: FILE, action: "download" });
    const [header, payload, signature] = parts(token);
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    for (const change of [
      { fid: OTHER_FILE },
      { scs: new ScopeSeal(new TextEncoder().encode(SECRET)).seal("B") },
      { act: "upload" },
      { exp: claims.exp + 3600 },
    ]) {
      const forged = `${header}.${b64({ ...claims, ...change })}.${signature}`;
      expect(await codeOf(minter.verify(forged, { action: "download" }))).toBe("INVALID_TOKEN");
    }
    // the original still works
    expect(await codeOf(minter.verify(token, { action: "download" }))).toBe("OK");
  });

  it("refuses a tampered signature", async () => {
    const minter = makeMinter();
    const { token } = await minter.mint({ scope: "A", fileId: FILE, action: "download" });
    const other = await minter.mint({ scope: "A", fileId: OTHER_FILE, action: "download" });
    const [header, payload, signature] = parts(token);
    const flipped = (signature[0] === "A" ? "B" : "A") + signature.slice(1);
    expect(await codeOf(minter.verify(`${header}.${payload}.${flipped}`, { action: "download" }))).toBe(
      "INVALID_TOKEN",
    );
    expect(
      await codeOf(minter.verify(`${header}.${payload}.${parts(other.token)[2]}`, { action: "download" })),
    ).toBe("INVALID_TOKEN");
    // a token signed by another secret
    const stranger = makeMinter({ secret: OTHER_SECRET });
    const foreign = await stranger.mint({ scope: "A", fileId: FILE, action: "download" });
    expect(await codeOf(minter.verify(foreign.token, { action: "download" }))).toBe("INVALID_TOKEN");
  });

  it("refuses a non-canonical spelling of a valid signature", async () => {
    const minter = makeMinter();
    const { token } = await minter.mint({ scope: "A", fileId: FILE, action: "download" });
    const [header, payload, signature] = parts(token);
    // 32 bytes = 43 base64url characters: the last one carries 2 unused bits
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet.indexOf(signature.at(-1) as string);
    const respelled = signature.slice(0, -1) + alphabet[last ^ 1];
    expect(Buffer.from(respelled, "base64url")).toEqual(Buffer.from(signature, "base64url"));
    expect(await codeOf(minter.verify(`${header}.${payload}.${respelled}`, { action: "download" }))).toBe(
      "INVALID_TOKEN",
    );
  });

  it("refuses alg: none", async () => {
    const minter = makeMinter();
    const unsecured = new UnsecuredJWT({ scs: SEALED_A, fid: FILE, act: "download" })
      .setIssuer("mcp-file-bridge")
      .setJti("x")
      .setIssuedAt(T0 / 1000)
      .setExpirationTime(T0 / 1000 + 300)
      .encode();
    expect(await codeOf(minter.verify(unsecured, { action: "download" }))).toBe("INVALID_TOKEN");
    const claims = decodeJwt(unsecured);
    const header = b64({ alg: "none", typ: SIGNED_URL_TOKEN_TYPE, kid: "default" });
    for (const signature of [
      "AAAA",
      parts((await minter.mint({ scope: "A", fileId: FILE, action: "download" })).token)[2],
    ]) {
      const forged = `${header}.${b64(claims)}.${signature}`;
      expect(await codeOf(minter.verify(forged, { action: "download" }))).toBe("INVALID_TOKEN");
    }
  });

  async function forge(alg: string, key: CryptoKey | Uint8Array, overrides: Record<string, unknown> = {}) {
    return new SignJWT({ scs: SEALED_A, fid: FILE, act: "download", ...overrides })
      .setProtectedHeader({ alg, typ: SIGNED_URL_TOKEN_TYPE, kid: "default" })
      .setIssuer("mcp-file-bridge")
      .setJti("forged")
      .setIssuedAt(T0 / 1000)
      .setExpirationTime(T0 / 1000 + 300)
      .sign(key);
  }

  it("accepts a hand-made HS256 token with the same secret (control for the forgery tests)", async () => {
    const minter = makeMinter();
    const token = await forge("HS256", new TextEncoder().encode(SECRET));
    expect(await codeOf(minter.verify(token, { action: "download" }))).toBe("OK");
  });

  it("refuses HS384 and HS512 tokens signed with the same secret", async () => {
    const minter = makeMinter();
    for (const alg of ["HS384", "HS512"]) {
      const token = await forge(alg, new TextEncoder().encode(SECRET));
      expect(await codeOf(minter.verify(token, { action: "download" }))).toBe("INVALID_TOKEN");
    }
  });

  it("refuses RS256 and ES256 tokens and the HS256-with-public-key confusion attack", async () => {
    const minter = makeMinter();
    const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
    const rs = await forge("RS256", privateKey);
    expect(await codeOf(minter.verify(rs, { action: "download" }))).toBe("INVALID_TOKEN");
    const ec = await generateKeyPair("ES256");
    const es = await forge("ES256", ec.privateKey);
    expect(await codeOf(minter.verify(es, { action: "download" }))).toBe("INVALID_TOKEN");

    const pem = await exportSPKI(publicKey);
    const confused = await forge("HS256", new TextEncoder().encode(pem));
    expect(await codeOf(minter.verify(confused, { action: "download" }))).toBe("INVALID_TOKEN");
  });

  it("refuses another token type and another issuer signed with the same secret", async () => {
    const minter = makeMinter();
    const key = new TextEncoder().encode(SECRET);
    const plainJwt = await new SignJWT({ scs: SEALED_A, fid: FILE, act: "download" })
      .setProtectedHeader({ alg: "HS256", typ: "JWT", kid: "default" })
      .setIssuer("mcp-file-bridge")
      .setJti("j")
      .setIssuedAt(T0 / 1000)
      .setExpirationTime(T0 / 1000 + 300)
      .sign(key);
    expect(await codeOf(minter.verify(plainJwt, { action: "download" }))).toBe("INVALID_TOKEN");

    const otherIssuer = makeMinter({ issuer: "other-app" });
    const { token } = await otherIssuer.mint({ scope: "A", fileId: FILE, action: "download" });
    expect(await codeOf(minter.verify(token, { action: "download" }))).toBe("INVALID_TOKEN");
    expect(await codeOf(otherIssuer.verify(token, { action: "download" }))).toBe("OK");
  });

  it("mints tokens jose's jwtVerify accepts with the same secret", async () => {
    const minter = makeMinter();
    const { token, jti } = await minter.mint({
      scope: "A",
      fileId: FILE,
      action: "download",
      notBefore: "1s",
    });
    const { payload, protectedHeader } = await jwtVerify(token, new TextEncoder().encode(SECRET), {
      algorithms: ["HS256"],
      typ: SIGNED_URL_TOKEN_TYPE,
      issuer: "mcp-file-bridge",
      currentDate: new Date(T0 + 1_000),
    });
    expect(protectedHeader).toEqual({ alg: "HS256", typ: SIGNED_URL_TOKEN_TYPE, kid: "default" });
    expect(payload).toMatchObject({ fid: FILE, act: "download", jti, iat: T0 / 1000, nbf: T0 / 1000 + 1 });
  });

  it("checks the header and registered claims itself as jose does (crit, b64, typ spelling, missing or non-numeric dates)", async () => {
    const minter = makeMinter();
    const key = new TextEncoder().encode(SECRET);
    const header = { alg: "HS256", typ: SIGNED_URL_TOKEN_TYPE, kid: "default" };
    const claims = { scs: SEALED_A, fid: FILE, act: "download", iss: "mcp-file-bridge", jti: "forged" };
    const times = { iat: T0 / 1000, exp: T0 / 1000 + 300 };
    const sign = (h: Record<string, unknown>, p: Record<string, unknown>) => {
      const input = `${b64(h)}.${b64(p)}`;
      return `${input}.${createHmac("sha256", key).update(input).digest("base64url")}`;
    };
    const verify = (token: string) => codeOf(minter.verify(token, { action: "download" }));
    expect(await verify(sign(header, { ...claims, ...times }))).toBe("OK");
    // The `application/` prefix and the case of `typ` do not matter (RFC 7515, as jose compares).
    expect(
      await verify(
        sign(
          { ...header, typ: `application/${SIGNED_URL_TOKEN_TYPE.toUpperCase()}` },
          { ...claims, ...times },
        ),
      ),
    ).toBe("OK");
    expect(await verify(sign({ ...header, crit: ["exp"] }, { ...claims, ...times }))).toBe("INVALID_TOKEN");
    expect(await verify(sign({ ...header, b64: false }, { ...claims, ...times }))).toBe("INVALID_TOKEN");
    expect(await verify(sign({ alg: "HS256", kid: "default" }, { ...claims, ...times }))).toBe(
      "INVALID_TOKEN",
    );
    for (const missing of ["iat", "exp", "jti", "iss"]) {
      const payload: Record<string, unknown> = { ...claims, ...times };
      delete payload[missing];
      expect(await verify(sign(header, payload))).toBe("INVALID_TOKEN");
    }
    expect(await verify(sign(header, { ...claims, ...times, nbf: String(T0 / 1000) }))).toBe("INVALID_TOKEN");
    expect(await verify(sign(header, { ...claims, ...times, exp: String(T0 / 1000 + 300) }))).toBe(
      "INVALID_TOKEN",
    );
    expect(await verify(sign(header, { ...claims, iat: T0 / 1000 - 600, exp: T0 / 1000 - 300 }))).toBe(
      "TOKEN_EXPIRED",
    );
    // Another issuer is reported before expiry, as jose orders its checks.
    expect(
      await verify(sign(header, { ...claims, iss: "x", iat: T0 / 1000 - 600, exp: T0 / 1000 - 300 })),
    ).toBe("INVALID_TOKEN");
    expect(await verify(`${b64(header)}.${Buffer.from("[1]").toString("base64url")}.${"A".repeat(43)}`)).toBe(
      "INVALID_TOKEN",
    );
  });

  it("refuses signed tokens whose private claims are malformed", async () => {
    const minter = makeMinter();
    const key = new TextEncoder().encode(SECRET);
    for (const bad of [
      { scs: 5 },
      { scs: "bm90LXNlYWxlZA" },
      {
        scs: new ScopeSeal(new TextEncoder().encode("another-secret-that-is-long-enough-0123456789")).seal(
          "A",
        ),
      },
      { fid: null },
      { act: "delete" },
      { one: "yes" },
      { ext: [1] },
      { ext: { k: { nested: 1 } } },
    ]) {
      const token = await forge("HS256", key, bad);
      expect(await codeOf(minter.verify(token, { action: "download" }))).toBe("INVALID_TOKEN");
    }
    const noJti = await new SignJWT({ scs: SEALED_A, fid: FILE, act: "download" })
      .setProtectedHeader({ alg: "HS256", typ: SIGNED_URL_TOKEN_TYPE, kid: "default" })
      .setIssuer("mcp-file-bridge")
      .setIssuedAt(T0 / 1000)
      .setExpirationTime(T0 / 1000 + 300)
      .sign(key);
    expect(await codeOf(minter.verify(noJti, { action: "download" }))).toBe("INVALID_TOKEN");
  });

  it("refuses expired tokens (injected clock), exactly at exp and after", async () => {
    const minter = makeMinter({ ttl: "5m" });
    const { token, expiresAt } = await minter.mint({ scope: "A", fileId: FILE, action: "download" });
    clock = expiresAt - 1;
    expect(await codeOf(minter.verify(token, { action: "download" }))).toBe("OK");
    clock = expiresAt;
    expect(await codeOf(minter.verify(token, { action: "download" }))).toBe("TOKEN_EXPIRED");
    clock = expiresAt + 2_000; // inside the clock tolerance: still expired
    expect(await codeOf(minter.verify(token, { action: "download" }))).toBe("TOKEN_EXPIRED");
    clock = expiresAt + 3_600_000;
    expect(await codeOf(minter.verify(token, { action: "download" }))).toBe("TOKEN_EXPIRED");
  });

  it("reports a tampered expired token as INVALID_TOKEN, not TOKEN_EXPIRED", async () => {
    const minter = makeMinter();
    const { token, expiresAt } = await minter.mint({ scope: "A", fileId: FILE, action: "download" });
    const [header, payload, signature] = parts(token);
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    clock = expiresAt + 60_000;
    const forged = `${header}.${b64({ ...claims, fid: OTHER_FILE })}.${signature}`;
    expect(await codeOf(minter.verify(forged, { action: "download" }))).toBe("INVALID_TOKEN");
  });

  it("refuses tokens that are not valid yet beyond the clock tolerance", async () => {
    const minter = makeMinter();
    // iat in the future: minted by a machine whose clock is 60 s ahead
    clock = T0 + 60_000;
    const ahead = await minter.mint({ scope: "A", fileId: FILE, action: "download" });
    clock = T0;
    expect(await codeOf(minter.verify(ahead.token, { action: "download" }))).toBe("INVALID_TOKEN");
    // 3 s ahead is inside the default 5 s tolerance
    clock = T0 + 3_000;
    const slightlyAhead = await minter.mint({ scope: "A", fileId: FILE, action: "download" });
    clock = T0;
    expect(await codeOf(minter.verify(slightlyAhead.token, { action: "download" }))).toBe("OK");

    // nbf in the future
    const delayed = await minter.mint({ scope: "A", fileId: FILE, action: "download", notBefore: "30s" });
    expect(decodeJwt(delayed.token).nbf).toBe(T0 / 1000 + 30);
    expect(await codeOf(minter.verify(delayed.token, { action: "download" }))).toBe("INVALID_TOKEN");
    clock = T0 + 30_000;
    expect(await codeOf(minter.verify(delayed.token, { action: "download" }))).toBe("OK");

    // with zero tolerance, one second ahead is refused
    const strict = makeMinter({ clockTolerance: 0 });
    clock = T0 + 1_000;
    const oneAhead = await strict.mint({ scope: "A", fileId: FILE, action: "download" });
    clock = T0;
    expect(await codeOf(strict.verify(oneAhead.token, { action: "download" }))).toBe("INVALID_TOKEN");
  });

  it("answers NOT_FOUND for another scope, another file or another action", async () => {
    const minter = makeMinter();
    const { token } = await minter.mint({ scope: "A", fileId: FILE, action: "download" });
    expect(await codeOf(minter.verify(token, { action: "download", scope: "B" }))).toBe("NOT_FOUND");
    expect(await codeOf(minter.verify(token, { action: "download", scope: "A", fileId: OTHER_FILE }))).toBe(
      "NOT_FOUND",
    );
    expect(await codeOf(minter.verify(token, { action: "upload", scope: "A", fileId: FILE }))).toBe(
      "NOT_FOUND",
    );
    expect(await codeOf(minter.verify(token, { action: "download", scope: "A", fileId: FILE }))).toBe("OK");
  });

  it("refuses an upload token used for download", async () => {
    const minter = makeMinter();
    const { token } = await minter.mint({ scope: "A", fileId: "ticket-7", action: "upload" });
    expect(await codeOf(minter.verify(token, { action: "download" }))).toBe("NOT_FOUND");
    expect(await codeOf(minter.verify(token, { action: "download", scope: "A", fileId: "ticket-7" }))).toBe(
      "NOT_FOUND",
    );
    expect(await codeOf(minter.verify(token, { action: "upload" }))).toBe("OK");
  });

  it("refuses bad verify options with INVALID_INPUT", async () => {
    const minter = makeMinter();
    const { token } = await minter.mint({ scope: "A", fileId: FILE, action: "download" });
    expect(await codeOf(minter.verify(token, { action: "get" as never }))).toBe("INVALID_INPUT");
    expect(await codeOf(minter.verify(token, { action: "download", scope: "" }))).toBe("INVALID_INPUT");
    expect(await codeOf(minter.verify(token, undefined as never))).toBe("INVALID_INPUT");
  });
});

describe("SignedUrlMinter single-use tokens", () => {
  it("needs state to mint single-use tokens", async () => {
    const minter = makeMinter();
    expect(await codeOf(minter.mint({ scope: "A", fileId: FILE, action: "upload", singleUse: true }))).toBe(
      "INVALID_OPTION",
    );
  });

  it("refuses to verify a single-use token without state (fails closed)", async () => {
    const withState = makeMinter({ state: makeState() });
    const without = makeMinter();
    const { token } = await withState.mint({ scope: "A", fileId: FILE, action: "upload", singleUse: true });
    expect(await codeOf(without.verify(token, { action: "upload" }))).toBe("INVALID_OPTION");
  });

  it("works once; the replay is TOKEN_ALREADY_USED", async () => {
    const state = makeState();
    const minter = makeMinter({ state });
    const { token, jti } = await minter.mint({ scope: "A", fileId: FILE, action: "upload", singleUse: true });
    expect(decodeJwt(token).one).toBe(true);
    const first = await minter.verify(token, { action: "upload", scope: "A", fileId: FILE });
    expect(first.singleUse).toBe(true);
    expect(await state.get(`jti:${jti}`)).toBe(1);
    expect(await codeOf(minter.verify(token, { action: "upload", scope: "A", fileId: FILE }))).toBe(
      "TOKEN_ALREADY_USED",
    );
    // a second minter sharing the state and secret sees the same claim
    const sibling = makeMinter({ state });
    expect(await codeOf(sibling.verify(token, { action: "upload" }))).toBe("TOKEN_ALREADY_USED");
  });

  it("claims the jti only after every other check passes", async () => {
    const state = makeState();
    const minter = makeMinter({ state });
    const { token, jti } = await minter.mint({ scope: "A", fileId: FILE, action: "upload", singleUse: true });
    expect(await codeOf(minter.verify(token, { action: "upload", scope: "B" }))).toBe("NOT_FOUND");
    expect(await codeOf(minter.verify(token, { action: "download" }))).toBe("NOT_FOUND");
    expect(await state.get(`jti:${jti}`)).toBeNull();
    expect(await codeOf(minter.verify(token, { action: "upload", scope: "A" }))).toBe("OK");
  });

  it("with consume: false checks but does not use the token; consume() uses it once", async () => {
    const state = makeState();
    const minter = makeMinter({ state });
    const { token, jti } = await minter.mint({ scope: "A", fileId: FILE, action: "upload", singleUse: true });
    const peek = await minter.verify(token, { action: "upload", consume: false });
    expect(await minter.verify(token, { action: "upload", consume: false })).toMatchObject({ jti });
    expect(await state.get(`jti:${jti}`)).toBeNull();
    const racers = await Promise.all(Array.from({ length: 20 }, () => codeOf(minter.consume(peek))));
    expect(racers.filter((code) => code === "OK")).toHaveLength(1);
    expect(racers.filter((code) => code === "TOKEN_ALREADY_USED")).toHaveLength(19);
    expect(await codeOf(minter.verify(token, { action: "upload", consume: false }))).toBe(
      "TOKEN_ALREADY_USED",
    );
    expect(await codeOf(minter.verify(token, { action: "upload" }))).toBe("TOKEN_ALREADY_USED");
  });

  it("consume() is a no-op for tokens that are not single-use", async () => {
    const state = makeState();
    const minter = makeMinter({ state });
    const { token } = await minter.mint({ scope: "A", fileId: FILE, action: "download" });
    const verified = await minter.verify(token, { action: "download" });
    await minter.consume(verified);
    await minter.consume(verified);
    expect(await codeOf(minter.verify(token, { action: "download" }))).toBe("OK");
  });

  it("lets exactly one of 50 concurrent verifies succeed", async () => {
    const minter = makeMinter({ state: makeState() });
    const { token } = await minter.mint({ scope: "A", fileId: FILE, action: "upload", singleUse: true });
    const codes = await Promise.all(
      Array.from({ length: 50 }, () => codeOf(minter.verify(token, { action: "upload" }))),
    );
    expect(codes.filter((code) => code === "OK")).toHaveLength(1);
    expect(codes.filter((code) => code === "TOKEN_ALREADY_USED")).toHaveLength(49);
  });

  it("keeps the claimed jti until the token can no longer be accepted", async () => {
    const state = makeState();
    const minter = makeMinter({ state, ttl: 60 });
    const { token, jti, expiresAt } = await minter.mint({
      scope: "A",
      fileId: FILE,
      action: "upload",
      singleUse: true,
    });
    await minter.verify(token, { action: "upload" });
    clock = expiresAt - 1;
    expect(await codeOf(minter.verify(token, { action: "upload" }))).toBe("TOKEN_ALREADY_USED");
    expect(await state.get(`jti:${jti}`)).toBe(1);
    clock = expiresAt + 10_000; // past exp and the tolerance: the nonce may go, the token is dead anyway
    expect(await state.get(`jti:${jti}`)).toBeNull();
    expect(await codeOf(minter.verify(token, { action: "upload" }))).toBe("TOKEN_EXPIRED");
  });

  it("reports a failing state store as STORAGE_ERROR", async () => {
    const broken: StateStore = {
      driver: "broken",
      get: async () => null,
      set: async () => {},
      setIfAbsent: async () => {
        throw new Error("connection refused");
      },
      delete: async () => false,
    };
    const minter = makeMinter({ state: broken });
    const { token } = await minter.mint({ scope: "A", fileId: FILE, action: "upload", singleUse: true });
    expect(await codeOf(minter.verify(token, { action: "upload" }))).toBe("STORAGE_ERROR");
  });
});

describe("SignedUrlMinter keys and rotation", () => {
  it("refuses a token with an unknown or missing kid", async () => {
    const minter = makeMinter();
    const sameSecretOtherKid = makeMinter({ keys: [{ kid: "k2", secret: SECRET }] });
    const { token } = await sameSecretOtherKid.mint({ scope: "A", fileId: FILE, action: "download" });
    expect(decodeProtectedHeader(token).kid).toBe("k2");
    expect(await codeOf(minter.verify(token, { action: "download" }))).toBe("INVALID_TOKEN");

    const noKid = await new SignJWT({ scs: SEALED_A, fid: FILE, act: "download" })
      .setProtectedHeader({ alg: "HS256", typ: SIGNED_URL_TOKEN_TYPE })
      .setIssuer("mcp-file-bridge")
      .setJti("j")
      .setIssuedAt(T0 / 1000)
      .setExpirationTime(T0 / 1000 + 300)
      .sign(new TextEncoder().encode(SECRET));
    expect(await codeOf(minter.verify(noKid, { action: "download" }))).toBe("INVALID_TOKEN");
  });

  it("rotates: mints with the first key, verifies with any listed key, not after removal", async () => {
    const oldKey = { kid: "2024", secret: SECRET };
    const newKey = { kid: "2025", secret: OTHER_SECRET };
    const before = makeMinter({ keys: [oldKey] });
    const during = makeMinter({ keys: [newKey, oldKey] });
    const after = makeMinter({ keys: [newKey] });

    const oldToken = (await before.mint({ scope: "A", fileId: FILE, action: "download" })).token;
    const newToken = (await during.mint({ scope: "A", fileId: FILE, action: "download" })).token;
    expect(decodeProtectedHeader(oldToken).kid).toBe("2024");
    expect(decodeProtectedHeader(newToken).kid).toBe("2025");

    expect((await during.verify(oldToken, { action: "download" })).kid).toBe("2024");
    expect((await during.verify(newToken, { action: "download" })).kid).toBe("2025");
    expect(await codeOf(after.verify(oldToken, { action: "download" }))).toBe("INVALID_TOKEN");
    expect(await codeOf(after.verify(newToken, { action: "download" }))).toBe("OK");
    expect(await codeOf(before.verify(newToken, { action: "download" }))).toBe("INVALID_TOKEN");
  });

  it("refuses a token whose kid names a listed key but was signed by another one", async () => {
    const a = { kid: "a", secret: SECRET };
    const b = { kid: "b", secret: OTHER_SECRET };
    const minter = makeMinter({ keys: [a, b] });
    const { token } = await minter.mint({ scope: "A", fileId: FILE, action: "download" });
    const [, payload, signature] = parts(token);
    const relabeled = `${b64({ alg: "HS256", typ: SIGNED_URL_TOKEN_TYPE, kid: "b" })}.${payload}.${signature}`;
    expect(await codeOf(minter.verify(relabeled, { action: "download" }))).toBe("INVALID_TOKEN");
  });

  it("copies the secret bytes, so later mutation of the caller's array changes nothing", async () => {
    const bytes = new Uint8Array(32).fill(7);
    const minter = makeMinter({ secret: bytes });
    bytes.fill(0);
    const { token } = await minter.mint({ scope: "A", fileId: FILE, action: "download" });
    const check = makeMinter({ secret: new Uint8Array(32).fill(7) });
    expect(await codeOf(check.verify(token, { action: "download" }))).toBe("OK");
  });
});
