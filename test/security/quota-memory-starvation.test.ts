import { describe, expect, it } from "vitest";
import { memoryStore } from "../../src/storage/memory-store.js";
import type { FileStore, StagedFile } from "../../src/storage/types.js";
import { codeOf } from "../support/helpers.js";

// Attack: memoryStore({ maxTotalBytes }) is one shared budget. Before, one scope (one client) could
// fill all of it — with stored files, with staged files it never commits, or with endless uploads
// held in flight — and every other scope's put failed. Each scope may now hold at most a share of
// the total (default 0.25), counting stored, staged and in-flight bytes alike.

const KiB = 1024;
const MiB = 1024 * KiB;
const TOTAL = 8 * MiB;

/** An endless upload that never finishes on its own: only a cap enforced while streaming stops it. */
async function* endless(): AsyncGenerator<Uint8Array> {
  const chunk = new Uint8Array(64 * KiB).fill(1);
  for (;;) {
    await new Promise((resolve) => setImmediate(resolve));
    yield chunk;
  }
}

/** Scope A throws everything it has at the store; returns what it managed to keep. */
async function flood(store: FileStore, scope: string): Promise<{ stored: number; staged: StagedFile[] }> {
  // 1. Endless uploads, all at once.
  const endlessResults = await Promise.allSettled(
    Array.from({ length: 20 }, (_, i) => store.put(endless(), { scope, name: `endless-${i}` })),
  );
  expect(endlessResults.every((result) => result.status === "rejected")).toBe(true);
  // 2. Staged files it never commits.
  const staged: StagedFile[] = [];
  for (let i = 0; i < 100; i++) {
    try {
      staged.push(await store.stage(new Uint8Array(256 * KiB), { scope, name: `staged-${i}` }));
    } catch {
      break;
    }
  }
  // 3. Stored files.
  let stored = 0;
  for (let i = 0; i < 100; i++) {
    try {
      await store.put(new Uint8Array(256 * KiB), { scope, name: `stored-${i}` });
      stored++;
    } catch {
      break;
    }
  }
  return { stored, staged };
}

describe("attack: one scope floods a memoryStore to starve the others", () => {
  it("control: with no share (maxScopeShare: 1) scope A's flood starves scope B", async () => {
    const store = memoryStore({ maxTotalBytes: TOTAL, maxScopeShare: 1, sweepInterval: 0 });
    await flood(store, "attacker");
    expect(await codeOf(store.put(new Uint8Array(MiB), { scope: "victim", name: "mine.bin" }))).toBe(
      "FILE_TOO_LARGE",
    );
    await store.close?.();
  });

  it("by default scope A gets at most a quarter of the store, and scope B still stores its share", async () => {
    const store = memoryStore({ maxTotalBytes: TOTAL, sweepInterval: 0 });
    // Every refusal A meets is about its own share, never the store's total.
    const refusal = await codeOf(store.put(endless(), { scope: "attacker", name: "probe" }));
    expect(refusal).toBe("QUOTA_EXCEEDED");
    const { staged } = await flood(store, "attacker");
    expect(staged.length).toBeGreaterThan(0);
    // B stores a whole share's worth while A still holds its staged and stored bytes.
    const mine = await store.put(new Uint8Array(TOTAL / 4), { scope: "victim", name: "mine.bin" });
    expect(mine.size).toBe(TOTAL / 4);
    // ... and so does a third scope, with a streamed upload.
    async function* chunks() {
      for (let i = 0; i < 32; i++) yield new Uint8Array(64 * KiB).fill(i);
    }
    const theirs = await store.put(chunks(), { scope: "bystander", name: "theirs.bin" });
    expect(theirs.size).toBe(2 * MiB);
    // A's refusals name its share as the limit.
    try {
      await store.put(new Uint8Array(1), { scope: "attacker", name: "one more" });
      expect.unreachable("the attacker's scope is full");
    } catch (error) {
      expect(error).toMatchObject({ code: "QUOTA_EXCEEDED", data: { quota: "bytes", limit: TOTAL / 4 } });
    }
    // A's staged bytes count until it lets them go; then A can store again.
    await Promise.all(staged.map((file) => file.abort()));
    expect((await store.put(new Uint8Array(256 * KiB), { scope: "attacker", name: "after" })).size).toBe(
      256 * KiB,
    );
    await store.close?.();
  });

  it("expired files of the attacker do not keep holding its share", async () => {
    let now = Date.UTC(2030, 0, 1);
    const store = memoryStore({ maxTotalBytes: TOTAL, sweepInterval: 0, now: () => now });
    await store.put(new Uint8Array(TOTAL / 4), { scope: "attacker", name: "short", ttl: 60 });
    expect(await codeOf(store.put(new Uint8Array(1), { scope: "attacker", name: "x" }))).toBe(
      "QUOTA_EXCEEDED",
    );
    now += 61_000; // expired, not swept (the background sweep is off)
    expect((await store.put(new Uint8Array(TOTAL / 4), { scope: "attacker", name: "again" })).size).toBe(
      TOTAL / 4,
    );
    await store.close?.();
  });

  it("residual risk, bounded: it takes 1 / maxScopeShare scopes to fill the store", async () => {
    // An attacker who can open scopes at will (e.g. anonymous sessions) can still fill the store with
    // four of them at the default share. Tie scopes to verified identity and rate-limit sessions.
    const store = memoryStore({ maxTotalBytes: TOTAL, sweepInterval: 0 });
    for (let i = 0; i < 3; i++)
      await store.put(new Uint8Array(TOTAL / 4), { scope: `sybil-${i}`, name: "x" });
    expect((await store.put(new Uint8Array(MiB), { scope: "victim", name: "fits" })).size).toBe(MiB);
    await store.put(new Uint8Array(TOTAL / 4 - MiB), { scope: "sybil-3", name: "x" });
    expect(await codeOf(store.put(new Uint8Array(MiB), { scope: "late", name: "no room" }))).toBe(
      "FILE_TOO_LARGE",
    );
    await store.close?.();
  });
});
