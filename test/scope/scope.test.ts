import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import {
  assertScope,
  DEFAULT_SCOPE,
  defaultScope,
  isHttpRequest,
  NO_SCOPE_ADVICE,
  scopeRef,
  subjectOf,
} from "../../src/scope/scope.js";
import { codeOfSync } from "../support/helpers.js";

const http = { requestInfo: { headers: {} } };

describe("defaultScope (fails closed)", () => {
  it("uses the authenticated user before the session, never the client application id", () => {
    expect(
      defaultScope({ ...http, sessionId: "s1", authInfo: { clientId: "app", extra: { sub: "alice" } } }),
    ).toBe("alice");
    expect(defaultScope({ ...http, sessionId: "s1", authInfo: { clientId: "app" } })).toBe("s1");
    expect(defaultScope({ ...http, sessionId: "s1" })).toBe("s1");
  });

  it("refuses an HTTP request with neither a user nor a session (FORBIDDEN), and names the fix", () => {
    expect(codeOfSync(() => defaultScope(http))).toBe("FORBIDDEN");
    expect(codeOfSync(() => defaultScope({ transport: "http" }))).toBe("FORBIDDEN");
    expect(codeOfSync(() => defaultScope({ authInfo: { clientId: "app" } }))).toBe("FORBIDDEN");
    expect(
      codeOfSync(() => defaultScope({ ...http, authInfo: { clientId: "app", extra: { sub: "" } } })),
    ).toBe("FORBIDDEN");
    expect(() => defaultScope(http)).toThrow(
      /^files on this server belong to a signed-in user or to an MCP session/,
    );
  });

  it('gives single-connection transports (stdio, in-process) the one "default" scope', () => {
    expect(defaultScope({})).toBe(DEFAULT_SCOPE);
    expect(defaultScope({ transport: "local" })).toBe(DEFAULT_SCOPE);
  });

  it("reads the transport from the host when it says, else from requestInfo", () => {
    expect(isHttpRequest({ transport: "local", requestInfo: { headers: {} } })).toBe(false);
    expect(isHttpRequest({ requestInfo: {} })).toBe(true);
    expect(isHttpRequest({})).toBe(false);
    expect(subjectOf({ authInfo: { extra: { sub: 42 } } })).toBeUndefined();
  });

  it("logs the advice to the author once per process as a Node warning, never in the error", async () => {
    // Warnings from earlier tests are delivered first; then a fresh copy of the module starts unwarned.
    await new Promise((resolve) => setImmediate(resolve));
    vi.resetModules();
    const fresh = await import("../../src/scope/scope.js");
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      for (let i = 0; i < 3; i++) expect(() => fresh.defaultScope(http)).toThrow(/sign in/);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", onWarning);
    }
    const advice = warnings.filter((w) => (w as { code?: string }).code === "MCP_FILE_BRIDGE_NO_SCOPE");
    expect(advice.map((w) => w.message)).toEqual([fresh.NO_SCOPE_ADVICE]);
    expect(NO_SCOPE_ADVICE).toMatch(/sessionIdGenerator.*authInfo\.extra\.sub.*`scope` function/);
  });
});

describe("scopeRef", () => {
  it("is 22 base64url characters, stable, and never contains the scope", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 256 }), (scope) => {
        const ref = scopeRef(scope);
        expect(ref).toMatch(/^[A-Za-z0-9_-]{22}$/);
        expect(scopeRef(scope)).toBe(ref);
        if (scope.length >= 4) expect(ref.includes(scope)).toBe(false);
      }),
    );
  });

  it("differs between scopes", () => {
    const refs = new Set(Array.from({ length: 2000 }, (_, i) => scopeRef(`session-${i}`)));
    expect(refs.size).toBe(2000);
  });
});

describe("assertScope", () => {
  it("refuses lone surrogates, which would spell another scope in UTF-8", () => {
    // Why: hashed (and sealed) as UTF-8, a lone surrogate is U+FFFD, so these three are one scope.
    expect(scopeRef("user-\uD800")).toBe(scopeRef("user-\uFFFD"));
    expect(scopeRef("user-\uDBFF")).toBe(scopeRef("user-\uFFFD"));
    for (const scope of ["user-\uD800", "\uDC00user", "a\uDC00\uD800b", "\uD83D"]) {
      expect(codeOfSync(() => assertScope(scope))).toBe("INVALID_INPUT");
    }
    for (const scope of ["user-\uFFFD", "user-🙂", "\uD83D\uDE42", "chat é"]) {
      expect(codeOfSync(() => assertScope(scope))).toBe("OK");
    }
  });

  it("accepts exactly the well-formed strings of 1 to 256 characters without control characters", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", minLength: 1, maxLength: 256 }), (scope) => {
        fc.pre(![...scope].some((c) => (c.codePointAt(0) as number) < 0x20 || c === "\u007f"));
        expect(codeOfSync(() => assertScope(scope))).toBe("OK");
      }),
    );
  });
});

describe("defaultScope on a raw SDK v2 context (nobody normalized it)", () => {
  const signal = new AbortController().signal;
  const raw = (http?: object) => ({
    mcpReq: { id: 1, method: "tools/call", signal },
    ...(http ? { http } : {}),
  });

  it("reads the user from http.authInfo, refuses HTTP without one, and is the default locally", () => {
    expect(defaultScope(raw({ authInfo: { clientId: "app", extra: { sub: "alice" } } }) as never)).toBe(
      "alice",
    );
    expect(codeOfSync(() => defaultScope(raw({}) as never))).toBe("FORBIDDEN");
    expect(codeOfSync(() => defaultScope(raw({ authInfo: { clientId: "app" } }) as never))).toBe("FORBIDDEN");
    expect(defaultScope({ ...raw({}), sessionId: "s2" } as never)).toBe("s2");
    expect(defaultScope(raw() as never)).toBe(DEFAULT_SCOPE);
  });

  it("prefers the normalized fields when the context carries both", () => {
    const source = { ...raw({ authInfo: { extra: { sub: "raw" } } }), transport: "local" as const };
    expect(defaultScope(source)).toBe(DEFAULT_SCOPE);
    expect(isHttpRequest(source)).toBe(false);
  });
});
