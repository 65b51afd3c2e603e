/**
 * The tus protocol code loads on the first tus request (issue 39): a load that fails fails that
 * request, and the next request loads it again (as every other first-use module does,
 * `src/internal/first-use.ts`).
 */
import { describe, expect, it } from "vitest";
import { countLoads } from "../../support/first-use.js";

const TUS = { "tus-resumable": "1.0.0" };

describe("the tus endpoint, loaded on its first request", () => {
  it("a failed load fails that request and leaves no upload; the next request loads the handler and creates one", async () => {
    const { loads } = countLoads("src/uploads/tus/tus-handler.js", { failFirst: true });
    const { startTus } = await import("./harness.js");
    const tus = await startTus();
    try {
      const create = async () =>
        fetch(await tus.endpoint("s1"), { method: "POST", headers: { ...TUS, "upload-length": "5" } });
      const failed = await create();
      await failed.body?.cancel();
      expect(loads.attempts).toBe(1);
      expect(failed.status).toBeGreaterThanOrEqual(500);
      expect(await tus.stagingFiles()).toEqual([]);
      const created = await create();
      await created.body?.cancel();
      expect(loads.attempts).toBe(2);
      expect(created.status).toBe(201);
      expect(created.headers.get("location")).toBeTruthy();
    } finally {
      await tus.close();
    }
  });
});
