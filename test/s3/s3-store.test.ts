import { createHash, randomBytes } from "node:crypto";
import { createServer, Socket as NetSocket, type Server, type Socket } from "node:net";
import {
  GetBucketLifecycleConfigurationCommand,
  GetObjectTaggingCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithServices, requireServices } from "../../scripts/services/test-env.js";
import { s3Store } from "../../src/s3/s3-store.js";
import { codeOf, readAll } from "../../src/testing/index.js";
import { connection, objectKeys, pendingUploads, testClient } from "./s3-helpers.js";

const MiB = 1024 * 1024;
const prefix = (label: string) => `${label}-${randomBytes(6).toString("hex")}/`;
const scopeHash = (scope: string) => createHash("sha256").update(scope).digest("hex").slice(0, 32);
/** The folder (after the prefix) the store put a file in: its scope's keyed folder. */
const folderOf = async (p: string, id: string) =>
  ((await objectKeys(testClient(), p)).find((key) => key.endsWith(`/${id}`)) as string)
    .slice(p.length)
    .split("/")[0];

/** A TCP proxy in front of radosgw that can be cut (an S3 outage) and restored. */
async function cuttableProxy(
  target: number,
): Promise<{ port: number; cut(): void; restore(): void; close(): Promise<void> }> {
  let down = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    if (down) {
      socket.destroy();
      return;
    }
    const upstream = new NetSocket();
    upstream.connect(target, "127.0.0.1");
    sockets.add(socket);
    sockets.add(upstream);
    socket.pipe(upstream).pipe(socket);
    const drop = () => {
      socket.destroy();
      upstream.destroy();
      sockets.delete(socket);
      sockets.delete(upstream);
    };
    socket.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as { port: number }).port,
    cut() {
      down = true;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      down = false;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => r());
      }),
  };
}

describeWithServices("s3Store specifics on a real radosgw", () => {
  let client: S3Client;
  beforeAll(() => {
    client = testClient();
  });
  afterAll(() => client.destroy());

  it("validates its options with INVALID_OPTION", () => {
    const base = connection();
    for (const bad of [
      null,
      { ...base, bucket: "" },
      { ...base, bucket: "Bad_Bucket" },
      { ...base, partSize: 1024 },
      { ...base, partSize: 5 * 1024 * 1024 * 1024 },
      { ...base, queueSize: 0 },
      { ...base, prefix: "/abs" },
      { ...base, client: {} },
      { ...base, catalog: {} },
      { ...base, now: 1 },
      { ...base, staleAfter: "soon" },
      { ...base, presign: { expiresIn: "later" } },
    ]) {
      expect(() => s3Store(bad as never)).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
    }
  });

  it("keys hold a keyed scope folder and the random id only: no scope, no scope hash, no user file name", async () => {
    const p = prefix("keys");
    const store = s3Store({ ...connection(), prefix: p, sweepInterval: 0 });
    const scope = "session-secret-123";
    const file = await store.put(Buffer.from("hello"), { scope, name: "../../etc/secret name.txt" });
    const keys = await objectKeys(client, p);
    const folder = await folderOf(p, file.id);
    expect(folder).toMatch(/^k[0-9a-f]{32}$/);
    expect(folder).not.toContain(scopeHash(scope));
    expect(keys).toEqual([`${p}${folder}/${file.id}`, `${p}${folder}/${file.id}.json`]);
    for (const key of keys) {
      expect(key).not.toContain("secret");
      expect(key).not.toContain("session");
    }
    await store.close?.();
  });

  it("a multipart put over the cap is FILE_TOO_LARGE, aborts the multipart upload, leaves nothing", async () => {
    const p = prefix("cap");
    const store = s3Store({ ...connection(), prefix: p, partSize: 5 * MiB, sweepInterval: 0 });
    let sent = 0;
    const source = (async function* () {
      for (;;) {
        sent += MiB;
        yield Buffer.alloc(MiB, 1);
      }
    })();
    expect(await codeOf(store.put(source, { scope: "s", name: "big.bin", maxBytes: 17 * MiB }))).toBe(
      "FILE_TOO_LARGE",
    );
    expect(sent).toBeGreaterThan(17 * MiB); // parts were really uploaded before the cap hit
    expect(sent).toBeLessThan(40 * MiB); // and the source was cut off right there
    expect(await objectKeys(client, p)).toEqual([]);
    expect(await pendingUploads(client, p)).toEqual([]);
    await store.close?.();
  });

  it("aborting a large put mid-stream leaves no object and no multipart upload", async () => {
    const p = prefix("abort");
    const store = s3Store({ ...connection(), prefix: p, partSize: 5 * MiB, sweepInterval: 0 });
    const controller = new AbortController();
    let sawPending = false;
    const source = (async function* () {
      for (let i = 0; i < 16; i++) yield Buffer.alloc(MiB, i);
      for (let i = 0; i < 50 && !sawPending; i++) {
        sawPending = (await pendingUploads(client, p)).length > 0;
        await new Promise((r) => setTimeout(r, 50));
      }
      controller.abort();
      await new Promise(() => {});
    })();
    expect(await codeOf(store.put(source, { scope: "s", name: "big.bin", signal: controller.signal }))).toBe(
      "ABORTED",
    );
    expect(sawPending).toBe(true);
    expect(await objectKeys(client, p)).toEqual([]);
    expect(await pendingUploads(client, p)).toEqual([]);
    await store.close?.();
  });

  it("round-trips a 24 MiB multipart file with its sha256, and range reads across part boundaries", async () => {
    const p = prefix("big");
    const store = s3Store({ ...connection(), prefix: p, partSize: 5 * MiB, sweepInterval: 0 });
    const bytes = randomBytes(24 * MiB);
    const file = await store.put(
      (async function* () {
        for (let i = 0; i < bytes.length; i += 3 * MiB) yield bytes.subarray(i, i + 3 * MiB);
      })(),
      { scope: "s", name: "big.bin" },
    );
    expect(file.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
    expect((await readAll(await store.read("s", file.id))).equals(bytes)).toBe(true);
    const start = 5 * MiB - 10;
    const got = await readAll(await store.read("s", file.id, { start, end: start + 20 }));
    expect(got.equals(bytes.subarray(start, start + 21))).toBe(true);
    await store.close?.();
  });

  it("sweep removes stale leftovers: bytes without metadata and unfinished multipart uploads", async () => {
    const p = prefix("leftover");
    let time = Date.now();
    const store = s3Store({
      ...connection(),
      prefix: p,
      partSize: 5 * MiB,
      sweepInterval: 0,
      staleAfter: "1h",
      now: () => time,
    });
    const kept = await store.put(Buffer.from("kept"), { scope: "s", name: "kept.txt" });
    const folder = await folderOf(p, kept.id);
    // A staged file never committed (its replica died before commit).
    const staged = await store.stage(Buffer.from("orphan"), { scope: "s", name: "orphan.txt" });
    // A multipart upload its replica never finished.
    const { CreateMultipartUploadCommand } = await import("@aws-sdk/client-s3");
    await client.send(
      new CreateMultipartUploadCommand({
        Bucket: requireServices().s3.bucket,
        Key: `${p}${folder}/01jc0000000000000000000000`,
      }),
    );
    expect(await store.sweep()).toBe(0); // fresh: another replica may still be working on them
    expect((await objectKeys(client, p)).length).toBe(3);
    time += 3_600_000 + 5_000;
    expect(await store.sweep()).toBe(2);
    expect(await objectKeys(client, p)).toEqual([
      `${p}${folder}/${kept.id}`,
      `${p}${folder}/${kept.id}.json`,
    ]);
    expect(await pendingUploads(client, p)).toEqual([]);
    expect(await store.head("s", staged.file.id)).toBeNull();
    expect((await readAll(await store.read("s", kept.id))).toString()).toBe("kept");
    await store.close?.();
  });

  it("lifecycle: merges its rules into the bucket's configuration and tags files with a TTL", async () => {
    const p = prefix("lifecycle");
    const store = s3Store({ ...connection(), prefix: p, lifecycle: true, sweepInterval: 0 });
    const file = await store.put(Buffer.from("x"), { scope: "s", name: "a.txt", ttl: "36h" });
    const forever = await store.put(Buffer.from("y"), { scope: "s", name: "b.txt" });
    const rules =
      (await client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: requireServices().s3.bucket })))
        .Rules ?? [];
    const ours = rules.filter((rule) => rule.ID?.endsWith(p));
    expect(ours.map((rule) => rule.ID?.slice(0, rule.ID.length - p.length)).sort()).toEqual(
      [
        "mcp-file-bridge-abort-incomplete-",
        ...[1, 2, 7, 30, 90, 365].map((d) => `mcp-file-bridge-expire-${d}d-`),
      ].sort(),
    );
    expect(
      ours.find((rule) => rule.ID?.includes("abort"))?.AbortIncompleteMultipartUpload?.DaysAfterInitiation,
    ).toBe(1);
    const folder = await folderOf(p, file.id);
    const key = (id: string) => `${p}${folder}/${id}`;
    const tags = await client.send(
      new GetObjectTaggingCommand({ Bucket: requireServices().s3.bucket, Key: key(file.id) }),
    );
    expect(tags.TagSet).toEqual([{ Key: "mfb-expire-days", Value: "2" }]);
    const none = await client.send(
      new GetObjectTaggingCommand({ Bucket: requireServices().s3.bucket, Key: key(forever.id) }),
    );
    expect(none.TagSet ?? []).toEqual([]);
    // A second store on another prefix keeps the first one's rules.
    const q = prefix("lifecycle");
    const second = s3Store({ ...connection(), prefix: q, lifecycle: true, sweepInterval: 0 });
    await second.put(Buffer.from("z"), { scope: "s", name: "c.txt" });
    const after =
      (await client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: requireServices().s3.bucket })))
        .Rules ?? [];
    expect(after.filter((rule) => rule.ID?.endsWith(p))).toHaveLength(7);
    expect(after.filter((rule) => rule.ID?.endsWith(q))).toHaveLength(7);
    await store.close?.();
    await second.close?.();
  });

  it("presign: off by default; when on, a presigned GET downloads the bytes with name and type", async () => {
    const p = prefix("presign");
    const off = s3Store({ ...connection(), prefix: p, sweepInterval: 0 });
    const file = await off.put(Buffer.from("%PDF-1.7 fake"), { scope: "s", name: "résumé 1.pdf" });
    expect(await off.presignedUrl("s", file.id)).toBeNull();
    const on = s3Store({ ...connection(), prefix: p, sweepInterval: 0, presign: { expiresIn: "1m" } });
    expect(await on.presignedUrl("other-scope", file.id)).toBeNull();
    const url = await on.presignedUrl("s", file.id);
    expect(url).toMatch(/X-Amz-Signature=/);
    const response = await fetch(url as string);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/pdf");
    expect(response.headers.get("content-disposition")).toContain("attachment");
    expect(Buffer.from(await response.arrayBuffer()).toString()).toBe("%PDF-1.7 fake");
    // Tampering with the signature is refused by the server (real SigV4 checks).
    const tampered = (url as string).replace(
      /X-Amz-Signature=([0-9a-f])/,
      (_, c) => `X-Amz-Signature=${c === "0" ? "1" : "0"}`,
    );
    expect((await fetch(tampered)).status).toBe(403);
    await off.close?.();
    await on.close?.();
  });

  it("wrong credentials are a STORAGE_ERROR (the server checks signatures)", async () => {
    const store = s3Store({
      ...connection(),
      credentials: { accessKeyId: "testkey", secretAccessKey: "wrong" },
      prefix: prefix("auth"),
      sweepInterval: 0,
    });
    expect(await codeOf(store.put(Buffer.from("x"), { scope: "s", name: "a" }))).toBe("STORAGE_ERROR");
    await store.close?.();
  });

  it("S3 outage during calls: a clear STORAGE_ERROR, nothing partial, and recovery when it is back", async () => {
    const rgwPort = Number(new URL(requireServices().s3.endpoint).port);
    const proxy = await cuttableProxy(rgwPort);
    const p = prefix("outage");
    const store = s3Store({
      ...connection(`http://127.0.0.1:${proxy.port}`),
      prefix: p,
      partSize: 5 * MiB,
      sweepInterval: 0,
    });
    const before = await store.put(Buffer.from("before"), { scope: "s", name: "before.txt" });
    // Cut while a multipart put is streaming.
    const source = (async function* () {
      for (let i = 0; i < 12; i++) yield Buffer.alloc(MiB, i);
      proxy.cut();
      for (let i = 0; i < 12; i++) yield Buffer.alloc(MiB, i);
    })();
    const started = Date.now();
    const failure = await codeOf(store.put(source, { scope: "s", name: "during.bin" }));
    expect(failure).toBe("STORAGE_ERROR");
    expect(await codeOf(store.head("s", before.id))).toBe("STORAGE_ERROR");
    expect(await codeOf(store.list("s"))).toBe("STORAGE_ERROR");
    expect(Date.now() - started).toBeLessThan(30_000);
    proxy.restore();
    // Back: the committed file is intact, the failed one is not visible, new puts work.
    expect((await readAll(await store.read("s", before.id))).toString()).toBe("before");
    expect((await store.list("s")).files.map((f) => f.id)).toEqual([before.id]);
    const after = await store.put(Buffer.from("after"), { scope: "s", name: "after.txt" });
    expect((await readAll(await store.read("s", after.id))).toString()).toBe("after");
    // What the cut multipart upload left is only an unfinished upload, which the sweep aborts.
    const keys = await objectKeys(client, p);
    expect(keys.filter((key) => !key.includes(before.id) && !key.includes(after.id))).toEqual([]);
    const sweeper = s3Store({ ...connection(), prefix: p, sweepInterval: 0, staleAfter: 0 });
    await sweeper.sweep();
    expect(await pendingUploads(client, p)).toEqual([]);
    await Promise.all([store.close?.(), sweeper.close?.(), proxy.close()]);
  });
});
