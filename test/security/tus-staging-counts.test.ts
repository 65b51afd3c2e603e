/**
 * Attack (issue 40 item 5): tus staging no quota sees. One ticket capped at 256 KiB staged 10 MiB in
 * partial uploads (parallel-upload parts) under a 1 MiB scope quota, 300 empty partial creations were
 * accepted, and whole uploads of several tickets staged past the scope's quota. After the fix, the
 * partial uploads of one ticket are bounded in number (`TOO_MANY_FILES`) and, with its whole upload,
 * in bytes by the ticket's own cap (`FILE_TOO_LARGE`), also when their length
 * is deferred; and staged bytes count against the scope's quota (`QUOTA_EXCEEDED`) until they are
 * committed (then the store counts them), terminated or expired. fs staging here; S3 staging with two
 * replicas on redis in test/s3/tus-s3-staging-counts.test.ts.
 */
import { randomBytes } from "node:crypto";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fsStore } from "../../src/storage/fs-store.js";
import { startTus, type TusHarness } from "../uploads/tus/harness.js";

const KiB = 1024;
const MiB = 1024 * KiB;
const TUS = { "tus-resumable": "1.0.0" };
const OCTETS = { ...TUS, "content-type": "application/offset+octet-stream" };

let harness: TusHarness;
afterEach(async () => {
  await harness.close();
});

async function quotaHarness(maxBytesPerScope: number, clock?: () => number): Promise<TusHarness> {
  const { mkdtemp } = await import("node:fs/promises");
  const { tmpdir } = await import("node:os");
  const root = await mkdtemp(join(tmpdir(), "mfb-tus-quota-"));
  const store = fsStore(root, {
    sweepInterval: 0,
    quota: { maxBytesPerScope },
    ...(clock ? { now: clock } : {}),
  });
  return startTus({ store }, clock);
}

function create(endpoint: string, headers: Record<string, string>): Promise<Response> {
  return fetch(endpoint, { method: "POST", headers: { ...TUS, ...headers } });
}

function patch(
  url: string,
  offset: number,
  body: BodyInit,
  extra: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: "PATCH",
    headers: { ...OCTETS, "upload-offset": String(offset), ...extra },
    body,
  });
}

async function codeOf(response: Response): Promise<{ status: number; code: string }> {
  const body = (await response.json()) as { error: { code: string } };
  return { status: response.status, code: body.error.code };
}

async function stagedBytes(): Promise<number> {
  let total = 0;
  for (const path of await harness.stagingFiles()) {
    if (!path.endsWith(".expires")) total += (await stat(path)).size;
  }
  return total;
}

describe("tus staging counts (attack: staging no quota sees)", () => {
  it("one 256 KiB ticket cannot stage 10 MiB in partial uploads: the second 256 KiB part is 413 FILE_TOO_LARGE", async () => {
    harness = await quotaHarness(MiB);
    const endpoint = await harness.endpoint("scope-a", { maxBytes: 256 * KiB });
    const accepted: string[] = [];
    let refused: { status: number; code: string } | undefined;
    for (let part = 0; part < 40; part++) {
      const made = await create(endpoint, { "upload-concat": "partial", "upload-length": String(256 * KiB) });
      if (made.status !== 201) {
        refused = await codeOf(made);
        break;
      }
      const url = made.headers.get("location") as string;
      expect((await patch(url, 0, randomBytes(256 * KiB))).status).toBe(204);
      accepted.push(url);
    }
    expect(accepted).toHaveLength(1);
    expect(refused).toMatchObject({ status: 413, code: "FILE_TOO_LARGE" });
    expect(await stagedBytes()).toBeLessThanOrEqual(256 * KiB);
    // Terminating the part frees its share: a new one fits again.
    expect((await fetch(accepted[0] as string, { method: "DELETE", headers: TUS })).status).toBe(204);
    const again = await create(endpoint, { "upload-concat": "partial", "upload-length": String(256 * KiB) });
    expect(again.status).toBe(201);
  });

  it("partial uploads of deferred length cannot grow past the ticket's cap together", async () => {
    harness = await quotaHarness(MiB);
    const endpoint = await harness.endpoint("scope-a", { maxBytes: 256 * KiB });
    const urls: string[] = [];
    for (let part = 0; part < 4; part++) {
      const made = await create(endpoint, { "upload-concat": "partial", "upload-defer-length": "1" });
      expect(made.status).toBe(201);
      urls.push(made.headers.get("location") as string);
    }
    const statuses: number[] = [];
    for (const url of urls) statuses.push((await patch(url, 0, randomBytes(128 * KiB))).status);
    expect(statuses.filter((status) => status === 204)).toHaveLength(2);
    expect(statuses.filter((status) => status === 413)).toHaveLength(2);
    expect(await stagedBytes()).toBeLessThanOrEqual(256 * KiB);
  });

  it("300 empty partial creations are not accepted: past the limit they are 413 TOO_MANY_FILES", async () => {
    harness = await quotaHarness(MiB);
    const endpoint = await harness.endpoint("scope-a", { maxBytes: 256 * KiB });
    const statuses = new Map<number, number>();
    let code: string | undefined;
    for (let part = 0; part < 300; part++) {
      const made = await create(endpoint, { "upload-concat": "partial", "upload-length": "0" });
      statuses.set(made.status, (statuses.get(made.status) ?? 0) + 1);
      if (made.status !== 201) code ??= (await codeOf(made)).code;
      else await made.body?.cancel();
    }
    expect(statuses.get(201)).toBe(64);
    expect(statuses.get(413)).toBe(236);
    expect(code).toBe("TOO_MANY_FILES");
    expect((await harness.stagingFiles()).filter((path) => !path.endsWith(".expires"))).toHaveLength(64);
  });

  it("staged bytes count against the scope's quota until committed, terminated or expired", async () => {
    let now = Date.UTC(2030, 0, 1);
    harness = await quotaHarness(MiB, () => now);
    const tickets = await Promise.all(
      [0, 1, 2, 3].map(() => harness.endpoint("scope-a", { maxBytes: 512 * KiB, ttl: "10m" })),
    );
    const [t0, t1, t2, t3] = tickets as [string, string, string, string];
    const u0 = await create(t0, { "upload-length": String(512 * KiB) });
    const u1 = await create(t1, { "upload-length": String(512 * KiB) });
    expect([u0.status, u1.status]).toEqual([201, 201]);
    // 1 MiB staged: a third upload in the scope does not fit, even empty of bytes so far.
    const over = await create(t2, { "upload-length": String(512 * KiB) });
    expect(await codeOf(over)).toMatchObject({ status: 413, code: "QUOTA_EXCEEDED" });
    // Another scope is not affected.
    const other = await harness.endpoint("scope-b", { maxBytes: 512 * KiB });
    expect((await create(other, { "upload-length": String(512 * KiB) })).status).toBe(201);
    // Terminated: its share is free again.
    expect(
      (await fetch(u0.headers.get("location") as string, { method: "DELETE", headers: TUS })).status,
    ).toBe(204);
    const u2 = await create(t2, { "upload-length": String(512 * KiB) });
    expect(u2.status).toBe(201);
    // Committed: the store counts it now (not twice): 512 KiB stored + 512 KiB staged = the quota.
    const url1 = u1.headers.get("location") as string;
    expect((await patch(url1, 0, randomBytes(512 * KiB))).status).toBe(204);
    expect(harness.stored).toHaveLength(1);
    const full = await create(t3, { "upload-length": "1" });
    expect(await codeOf(full)).toMatchObject({ status: 413, code: "QUOTA_EXCEEDED" });
    // Expired: the staged upload's share is gone with it.
    now += 11 * 60_000;
    const later = await harness.endpoint("scope-a", { maxBytes: 512 * KiB, ttl: "10m" });
    const fresh = await create(later, { "upload-length": String(256 * KiB) });
    expect(fresh.status).toBe(201);
  });

  it("a deferred-length upload gets no more room than the scope's quota leaves: QUOTA_EXCEEDED", async () => {
    harness = await quotaHarness(MiB);
    const big = await harness.endpoint("scope-a", { maxBytes: 768 * KiB });
    expect((await create(big, { "upload-length": String(768 * KiB) })).status).toBe(201);
    const deferred = await harness.endpoint("scope-a", { maxBytes: 768 * KiB });
    const made = await create(deferred, { "upload-defer-length": "1" });
    expect(made.status).toBe(201);
    const url = made.headers.get("location") as string;
    const refused = await patch(url, 0, randomBytes(512 * KiB));
    expect(await codeOf(refused)).toMatchObject({ status: 413, code: "QUOTA_EXCEEDED" });
    expect(await stagedBytes()).toBeLessThanOrEqual(MiB);
    // What fits is taken.
    expect(
      (
        await patch(
          url,
          Number((await fetch(url, { method: "HEAD", headers: TUS })).headers.get("upload-offset")),
          randomBytes(1024),
        )
      ).status,
    ).toBe(204);
  });
});
