/**
 * The file routes load what a request of theirs runs (CORS, the dispatch, the error answers) at
 * their first such request (issue 39): their options are checked synchronously when they are made, a
 * request for another path answers `undefined` without the load, two first requests share one load,
 * and a load that fails fails that request while the next one loads again.
 */
import { describe, expect, it } from "vitest";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import { countLoads } from "../support/first-use.js";
import { codeOfSync } from "../support/helpers.js";

const BASE = "http://127.0.0.1:9";

/** `createFileRoutes` from a fresh module graph whose work module counts (and may fail) its loads. */
async function countingRoutes(failFirst = false) {
  const { loads, failure } = countLoads("src/routes/file-routes-work.js", { failFirst });
  const { createFileRoutes } = await import("../../src/routes/create-file-routes.js");
  const minter = new SignedUrlMinter({
    secret: "a-test-secret-that-is-long-enough-0123456789",
    baseUrl: BASE,
  });
  return { createFileRoutes, minter, loads, failure };
}

describe("the file routes' work, loaded on first use", () => {
  it("checks options synchronously, and answers another path's request without the load", async () => {
    const { createFileRoutes, minter, loads } = await countingRoutes();
    const store = memoryStore();
    expect(codeOfSync(() => createFileRoutes({ store, minter, maxBytes: 0 }))).toBe("INVALID_OPTION");
    expect(
      codeOfSync(() => createFileRoutes({ store, minter, allowedOrigins: ["https://a.example/"] })),
    ).toBe("INVALID_OPTION");
    expect(codeOfSync(() => createFileRoutes({ store, minter, tus: { lockTtl: 0 } }))).toBe("INVALID_OPTION");
    const routes = createFileRoutes({ store, minter });
    expect(await routes(new Request(`${BASE}/other/path`))).toBeUndefined();
    expect(await routes(new Request(`${BASE}/files/nothing/here`))).toBeUndefined();
    expect(loads.attempts).toBe(0);
  });

  it("two first requests at once share one load; each is answered", async () => {
    const { createFileRoutes, minter, loads } = await countingRoutes();
    const routes = createFileRoutes({ store: memoryStore(), minter });
    const [a, b] = await Promise.all([
      routes(new Request(`${BASE}/files/download/abc`, { method: "DELETE" })),
      routes(new Request(`${BASE}/files/upload/abc`, { method: "PATCH" })),
    ]);
    expect(loads.attempts).toBe(1);
    expect([a?.status, b?.status]).toEqual([405, 405]);
    expect([a?.headers.get("allow"), b?.headers.get("allow")]).toEqual(["GET, HEAD", "POST, PUT"]);
  });

  it("a failed load fails the request that asked for it; the next request loads again", async () => {
    const { createFileRoutes, minter, loads, failure } = await countingRoutes(true);
    const routes = createFileRoutes({ store: memoryStore(), minter });
    const error = await routes(new Request(`${BASE}/files/download/abc`, { method: "DELETE" })).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(loads.attempts).toBe(1);
    // Under vitest a mocked module's failure arrives wrapped, with the load's error as its cause.
    expect(error === failure || (error as Error | undefined)?.cause === failure).toBe(true);
    const answer = await routes(new Request(`${BASE}/files/download/abc`, { method: "DELETE" }));
    expect(loads.attempts).toBe(2);
    expect(answer?.status).toBe(405);
  });
});
