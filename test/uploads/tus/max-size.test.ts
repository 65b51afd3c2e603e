/**
 * `Tus-Max-Size` is the ticket's own cap (issue 41 item 5): a 1 MiB ticket advertises 1 MiB and
 * accepts a creation of exactly that, one byte more is 413; a ticket above the routes' cap
 * advertises its own. Discovery without a valid ticket says nothing ticket-specific: `Tus-Version`
 * and `Tus-Extension` only (tus 1.0: the server SHOULD set `Tus-Max-Size` "if there is a known hard
 * limit" — without a ticket no upload is allowed at all, and the routes' cap is not the limit a
 * ticket gets).
 */
import { afterEach, describe, expect, it } from "vitest";
import { startTus, type TusHarness } from "./harness.js";

const TUS = { "tus-resumable": "1.0.0" };
const MiB = 1024 * 1024;

let harness: TusHarness;
afterEach(async () => {
  await harness.close();
});

async function create(endpoint: string, length: number): Promise<Response> {
  return fetch(endpoint, { method: "POST", headers: { ...TUS, "upload-length": String(length) } });
}

describe("tus Tus-Max-Size per ticket", () => {
  it("a 1 MiB ticket advertises 1 MiB; a creation at that size is accepted, one byte more is 413", async () => {
    harness = await startTus({ maxBytes: 100 * MiB });
    const endpoint = await harness.endpoint("scope-a", { maxBytes: MiB });
    const discovery = await fetch(endpoint, { method: "OPTIONS" });
    expect(discovery.status).toBe(204);
    expect(discovery.headers.get("tus-max-size")).toBe(String(MiB));
    const over = await create(endpoint, MiB + 1);
    expect(over.status).toBe(413);
    expect((await over.json()).error.code).toBe("FILE_TOO_LARGE");
    const exact = await create(endpoint, MiB);
    expect(exact.status).toBe(201);
    // The upload URL's discovery says the same.
    const onUpload = await fetch(exact.headers.get("location") as string, { method: "OPTIONS" });
    expect(onUpload.headers.get("tus-max-size")).toBe(String(MiB));
  });

  it("a 256 MiB ticket advertises 256 MiB (what it accepts), not the routes' 100 MiB", async () => {
    harness = await startTus({ maxBytes: 100 * MiB });
    const endpoint = await harness.endpoint("scope-a", { maxBytes: 256 * MiB });
    const discovery = await fetch(endpoint, { method: "OPTIONS" });
    expect(discovery.headers.get("tus-max-size")).toBe(String(256 * MiB));
    expect((await create(endpoint, 256 * MiB + 1)).status).toBe(413);
    expect((await create(endpoint, 256 * MiB)).status).toBe(201);
  });

  it("OPTIONS with a garbage, used or expired ticket: 204 with the version and extensions, no Tus-Max-Size", async () => {
    let now = Date.UTC(2030, 0, 1);
    harness = await startTus({ maxBytes: 100 * MiB }, () => now);
    const garbage = `${harness.origin}/files/tus/${"x".repeat(40)}.${"y".repeat(40)}.${"z".repeat(43)}`;
    const used = await harness.endpoint("scope-a", { maxBytes: MiB });
    const made = await create(used, 1);
    const patched = await fetch(made.headers.get("location") as string, {
      method: "PATCH",
      headers: { ...TUS, "content-type": "application/offset+octet-stream", "upload-offset": "0" },
      body: "a",
    });
    expect(patched.status).toBe(204);
    const expired = await harness.endpoint("scope-a", { maxBytes: MiB, ttl: "1m" });
    now += 2 * 60_000;
    for (const endpoint of [garbage, `${garbage}/${"i".repeat(22)}`, used, expired]) {
      const discovery = await fetch(endpoint, { method: "OPTIONS" });
      expect(discovery.status, endpoint).toBe(204);
      expect(discovery.headers.get("tus-version")).toBe("1.0.0");
      expect(discovery.headers.get("tus-extension")).toContain("creation");
      expect(discovery.headers.get("tus-max-size"), endpoint).toBeNull();
    }
  });
});
