/**
 * Attack (issue 40 item 5) on S3 staging, real radosgw + redis-server, two replicas (two route
 * instances sharing the bucket and redis): partial uploads of one ticket created through either
 * replica are bounded together in bytes by the ticket's cap (`FILE_TOO_LARGE`) and in number
 * (`TOO_MANY_FILES`), and staged bytes count against the scope's quota (`QUOTA_EXCEEDED`, a store
 * with a quota over a shared folder, S3 staging) until committed or terminated, whichever replica
 * staged them. Before the fix each replica (and each creation) saw none of it. fs staging:
 * test/security/tus-staging-counts.test.ts.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { S3Client } from "@aws-sdk/client-s3";
import { afterEach, beforeEach, expect, it } from "vitest";
import { describeWithServices, requireServices, uniquePrefix } from "../../scripts/services/test-env.js";
import { toNodeHandler } from "../../src/node/index.js";
import { redisState } from "../../src/redis/redis-state.js";
import { createFileRoutes } from "../../src/routes/create-file-routes.js";
import { s3TusStaging } from "../../src/s3/s3-staging.js";
import { type S3FileStore, s3Store } from "../../src/s3/s3-store.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { fsStore } from "../../src/storage/fs-store.js";
import type { FileStore, StateStore } from "../../src/storage/types.js";
import { close, listen } from "../http/server-helpers.js";
import { connection, objectKeys, pendingUploads, testClient } from "./s3-helpers.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const TUS = { "tus-resumable": "1.0.0" };
const OCTETS = { ...TUS, "content-type": "application/offset+octet-stream" };
const KiB = 1024;
const MiB = 1024 * KiB;

interface Replica {
  origin: string;
  server: Server;
  state: StateStore;
  s3: S3FileStore;
  minter: SignedUrlMinter;
}

let prefix: string;
let keyPrefix: string;
let dir: string;
let client: S3Client;
let replicas: Replica[] = [];

/** A route instance on the shared bucket and redis; `quota`: a store with that scope quota (shared folder), S3 staging. */
async function replica(quota?: number): Promise<Replica> {
  const state = redisState({ url: requireServices().redis.url, keyPrefix });
  const s3 = s3Store({ ...connection(), prefix, sweepInterval: 0 });
  const store: FileStore =
    quota === undefined
      ? s3
      : fsStore(join(dir, "store"), { sweepInterval: 0, quota: { maxBytesPerScope: quota } });
  let routes: ((request: Request) => Promise<Response | undefined>) | undefined;
  const server = createServer(toNodeHandler((request) => (routes as NonNullable<typeof routes>)(request)));
  const origin = await listen(server);
  const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: origin, state });
  routes = createFileRoutes({
    store,
    minter,
    state,
    maxBytes: 64 * MiB,
    tus: quota === undefined ? {} : { staging: s3TusStaging(s3, state) },
  });
  return { origin, server, state, s3, minter };
}

const stagingPrefix = () => `${prefix.slice(0, -1)}-tus/`;

beforeEach(async () => {
  prefix = `${uniquePrefix("tuscount").slice(0, -1)}/`;
  keyPrefix = uniquePrefix("tuscount");
  dir = await mkdtemp(join(tmpdir(), "mfb-tus-counts-"));
  client = testClient();
});
afterEach(async () => {
  for (const { server, state, s3 } of replicas) {
    await close(server).catch(() => undefined);
    await s3.close?.();
    await state.close?.();
  }
  replicas = [];
  client.destroy();
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

async function ticket(
  minter: SignedUrlMinter,
  scope: string,
  fileId: string,
  maxBytes: number,
): Promise<string> {
  const { token } = await minter.mint({
    scope,
    fileId,
    action: "upload",
    ttl: "1h",
    claims: { max_bytes: maxBytes },
  });
  return token;
}

function create(origin: string, token: string, headers: Record<string, string>): Promise<Response> {
  return fetch(`${origin}/files/tus/${token}`, { method: "POST", headers: { ...TUS, ...headers } });
}

/** The URL of an upload as another replica serves it. */
const via = (url: string, replica: Replica) => replica.origin + new URL(url).pathname;

async function code(response: Response): Promise<string> {
  return ((await response.json()) as { error: { code: string } }).error.code;
}

describeWithServices("tus staging counts on S3 staging, two replicas (attack)", () => {
  it("partial uploads of one 256 KiB ticket through either replica stage at most 256 KiB; more parts than the limit are refused", async () => {
    replicas = [await replica(), await replica()];
    const [a, b] = replicas as [Replica, Replica];
    const token = await ticket(a.minter, "scope-a", "t-parts", 256 * KiB);
    const statuses: number[] = [];
    const codes: string[] = [];
    for (let part = 0; part < 8; part++) {
      const at = part % 2 === 0 ? a : b;
      const made = await create(at.origin, token, {
        "upload-concat": "partial",
        "upload-length": String(128 * KiB),
      });
      statuses.push(made.status);
      if (made.status !== 201) {
        codes.push(await code(made));
        continue;
      }
      const url = made.headers.get("location") as string;
      const written = await fetch(via(url, part % 2 === 0 ? b : a), {
        method: "PATCH",
        headers: { ...OCTETS, "upload-offset": "0" },
        body: randomBytes(128 * KiB),
      });
      expect(written.status).toBe(204);
    }
    expect(statuses).toEqual([201, 201, 413, 413, 413, 413, 413, 413]);
    expect(new Set(codes)).toEqual(new Set(["FILE_TOO_LARGE"]));
    // Empty parts: at most 64 uploads per ticket, counted across both replicas.
    const empty = await ticket(a.minter, "scope-a", "t-empty", 256 * KiB);
    const counted = new Map<number, number>();
    let tooMany: string | undefined;
    for (let part = 0; part < 70; part++) {
      const made = await create((part % 2 === 0 ? a : b).origin, empty, {
        "upload-concat": "partial",
        "upload-length": "0",
      });
      counted.set(made.status, (counted.get(made.status) ?? 0) + 1);
      if (made.status !== 201) tooMany ??= await code(made);
    }
    expect(counted.get(201)).toBe(64);
    expect(counted.get(413)).toBe(6);
    expect(tooMany).toBe("TOO_MANY_FILES");
  }, 120_000);

  it("staged bytes on S3 count against the scope's quota across replicas until committed or terminated", async () => {
    replicas = [await replica(MiB), await replica(MiB)];
    const [a, b] = replicas as [Replica, Replica];
    const tokens = await Promise.all(
      [0, 1, 2, 3].map((n) => ticket(a.minter, "scope-q", `t-q${n}`, 512 * KiB)),
    );
    const [t0, t1, t2, t3] = tokens as [string, string, string, string];
    const u0 = await create(a.origin, t0, { "upload-length": String(512 * KiB) });
    const u1 = await create(b.origin, t1, { "upload-length": String(512 * KiB) });
    expect([u0.status, u1.status]).toEqual([201, 201]);
    const over = await create(a.origin, t2, { "upload-length": String(512 * KiB) });
    expect([over.status, await code(over)]).toEqual([413, "QUOTA_EXCEEDED"]);
    const overB = await create(b.origin, t2, { "upload-length": "1" });
    expect([overB.status, await code(overB)]).toEqual([413, "QUOTA_EXCEEDED"]);
    // Terminated through B what A created: its share is free for either replica.
    const url0 = u0.headers.get("location") as string;
    expect((await fetch(via(url0, b), { method: "DELETE", headers: TUS })).status).toBe(204);
    const u2 = await create(a.origin, t2, { "upload-length": String(512 * KiB) });
    expect(u2.status).toBe(201);
    // Committed through A what B created: the store counts it, the staging share is gone.
    const url1 = u1.headers.get("location") as string;
    const committed = await fetch(via(url1, a), {
      method: "PATCH",
      headers: { ...OCTETS, "upload-offset": "0" },
      body: randomBytes(512 * KiB),
    });
    expect(committed.status).toBe(204);
    expect(committed.headers.get("upload-handle")).not.toBeNull();
    const full = await create(b.origin, t3, { "upload-length": "1" });
    expect([full.status, await code(full)]).toEqual([413, "QUOTA_EXCEEDED"]);
    // Nothing of the committed upload is left in the bucket's staging.
    const left = [
      ...(await objectKeys(client, stagingPrefix())),
      ...(await pendingUploads(client, stagingPrefix())),
    ];
    expect(left.filter((key) => key.includes(new URL(url1).pathname.split("/").pop() as string))).toEqual([]);
  }, 120_000);
});
