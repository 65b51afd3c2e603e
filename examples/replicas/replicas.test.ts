import { createHash, randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithServices, requireServices } from "../../scripts/services/test-env.js";
import { s3Store } from "../../src/s3/s3-store.js";
import { objectKeys, pendingUploads, testClient } from "../../test/s3/s3-helpers.js";
import { type Cluster, startCluster } from "./cluster.js";
import { userToken } from "./server.js";

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

interface Ticket {
  upload_url: string;
  field: string;
  handle: string;
}

describeWithServices("replicas example: 3 server processes, one S3, one Redis, HAProxy", () => {
  let cluster: Cluster;
  const clients: Client[] = [];
  beforeAll(async () => {
    cluster = await startCluster(requireServices(), 3);
  }, 60_000);
  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await cluster?.close();
  });

  const replica = (name: string) => cluster.replicas.find((r) => r.name === name)!.url;
  /** The same URL, sent to another origin (a replica, or the load balancer). */
  const via = (url: string, origin: string) => origin + new URL(url).pathname + new URL(url).search;

  async function connect(base: string, path = "/mcp", headers: Record<string, string> = {}): Promise<Client> {
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(path, base), { requestInit: { headers } }),
    );
    clients.push(client);
    return client;
  }

  async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
    const result = (await client.callTool({ name, arguments: args })) as {
      isError?: boolean;
      content: Array<{ type: string; text: string }>;
      structuredContent?: unknown;
    };
    return result;
  }

  async function ticket(client: Client): Promise<Ticket> {
    const result = await call(client, "get_upload_url");
    expect(result.isError).toBeFalsy();
    return result.structuredContent as Ticket;
  }

  function upload(url: string, field: string, name: string, bytes: Uint8Array): Promise<Response> {
    const form = new FormData();
    form.append(field, new Blob([new Uint8Array(bytes)]), name);
    return fetch(url, { method: "POST", body: form });
  }

  it("upload on A, resolve the handle in a tool call on B, download on C: exact bytes", async () => {
    const b = await connect(replica("b"));
    expect((await call(b, "whoami")).content[0]?.text).toBe("b");
    const t = await ticket(b);
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    const response = await upload(via(t.upload_url, replica("a")), t.field, "data.bin", bytes);
    expect(response.status).toBe(201);
    expect(response.headers.get("x-replica")).toBe("a");
    const { files } = (await response.json()) as { files: Array<{ id: string }> };
    const inspected = await call(b, "inspect_file", { file: t.handle });
    expect(JSON.parse(inspected.content[0]!.text)).toEqual({
      replica: "b",
      name: "data.bin",
      size: bytes.length,
      sha256: sha(bytes),
    });
    const link = (await call(b, "download_link", { id: files[0]!.id })).content[0]!.text;
    const download = await fetch(via(link, replica("c")));
    expect(download.status).toBe(200);
    expect(download.headers.get("x-replica")).toBe("c");
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it("a single-use ticket and a single-use download link, fired at all 3 replicas at once (20 requests), work exactly once", async () => {
    const session = await connect(cluster.url);
    const t = await ticket(session);
    const bytes = randomBytes(10_000);
    const uploads = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        upload(via(t.upload_url, cluster.replicas[i % 3]!.url), t.field, "once.bin", bytes),
      ),
    );
    const created = uploads.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    for (const r of uploads) if (r.status !== 201) expect(r.status).toBeGreaterThanOrEqual(400);
    const { files } = (await created[0]!.json()) as { files: Array<{ id: string }> };
    expect((await session.listResources()).resources).toHaveLength(1);

    const link = (await call(session, "download_link", { id: files[0]!.id })).content[0]!.text;
    const downloads = await Promise.all(
      Array.from({ length: 20 }, (_, i) => fetch(via(link, cluster.replicas[i % 3]!.url))),
    );
    const ok = downloads.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    expect(Buffer.from(await ok[0]!.arrayBuffer()).equals(bytes)).toBe(true);
    expect(downloads.filter((r) => r.status === 410)).toHaveLength(19);
  });

  it("100 concurrent uploads across 10 scopes through HAProxy: every file stored once, 0 cross-scope reads", async () => {
    const sessions = await Promise.all(Array.from({ length: 10 }, () => connect(cluster.url)));
    const tickets = await Promise.all(
      sessions.map((s) => Promise.all(Array.from({ length: 10 }, () => ticket(s)))),
    );
    const contents = tickets.map((row, i) =>
      row.map((_, j) => Buffer.from(`scope ${i} file ${j} ${randomBytes(8).toString("hex")}`)),
    );
    const replies = await Promise.all(
      tickets.flatMap((row, i) =>
        row.map((t, j) => upload(t.upload_url, t.field, `f${j}.txt`, contents[i]![j]!)),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(100).fill(201));
    // Round-robin, no stickiness: every replica took uploads.
    expect(new Set(replies.map((r) => r.headers.get("x-replica")))).toEqual(new Set(["a", "b", "c"]));
    let crossReads = 0;
    for (let i = 0; i < 10; i++) {
      const listed = (await sessions[i]!.listResources()).resources;
      expect(listed.map((r) => r.name).sort()).toEqual(
        Array.from({ length: 10 }, (_, j) => `f${j}.txt`).sort(),
      );
      for (let j = 0; j < 10; j++) {
        const own = await call(sessions[i]!, "inspect_file", { file: tickets[i]![j]!.handle });
        expect(JSON.parse(own.content[0]!.text).sha256).toBe(sha(contents[i]![j]!));
        const other = await call(sessions[i]!, "inspect_file", { file: tickets[(i + 1) % 10]![j]!.handle });
        if (!other.isError) crossReads++;
      }
    }
    expect(crossReads).toBe(0);
  });

  it("list_changed reaches a session on another replica", async () => {
    const b = await connect(replica("b"));
    expect((await b.listResources()).resources).toEqual([]);
    const changed = new Promise<void>((resolve) =>
      b.setNotificationHandler(ResourceListChangedNotificationSchema, () => resolve()),
    );
    const t = await ticket(b);
    const response = await upload(
      via(t.upload_url, replica("c")),
      t.field,
      "elsewhere.txt",
      Buffer.from("hi"),
    );
    expect(response.headers.get("x-replica")).toBe("c");
    await changed;
    expect((await b.listResources()).resources.map((r) => r.name)).toEqual(["elsewhere.txt"]);
  });

  it("stateless MCP goes round-robin; the user's scope holds across replicas", async () => {
    const token = userToken(cluster.secret, "alice");
    const headers = { authorization: `Bearer ${token}` };
    const alice = await connect(cluster.url, "/mcp-stateless", headers);
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) seen.add((await call(alice, "whoami")).content[0]!.text);
    expect(seen).toEqual(new Set(["a", "b", "c"]));
    const t = await ticket(alice);
    const bytes = randomBytes(5000);
    expect((await upload(t.upload_url, t.field, "a.bin", bytes)).status).toBe(201);
    const inspected = JSON.parse((await call(alice, "inspect_file", { file: t.handle })).content[0]!.text);
    expect(inspected.sha256).toBe(sha(bytes));
    const mallory = await connect(cluster.url, "/mcp-stateless", {
      authorization: `Bearer ${userToken(cluster.secret, "mallory")}`,
    });
    expect((await call(mallory, "inspect_file", { file: t.handle })).isError).toBe(true);
    const forged = await connect(cluster.url, "/mcp-stateless", { authorization: "Bearer alice.forged" });
    expect((await call(forged, "inspect_file", { file: t.handle })).isError).toBe(true);
  });

  it("killing a replica mid-upload loses nothing committed and leaves no partial object", async () => {
    const session = await connect(replica("b"));
    const kept = await ticket(session);
    const keptBytes = randomBytes(50_000);
    const keptReply = (await (
      await upload(via(kept.upload_url, replica("b")), kept.field, "kept.bin", keptBytes)
    ).json()) as {
      files: Array<{ id: string }>;
    };
    const t = await ticket(session);
    const victim = cluster.replicas.find((r) => r.name === "a")!;
    const boundary = `----mfb${randomBytes(8).toString("hex")}`;
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent === 0) {
          controller.enqueue(
            Buffer.from(
              `--${boundary}\r\ncontent-disposition: form-data; name="${t.field}"; filename="big.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`,
            ),
          );
        }
        controller.enqueue(randomBytes(1024 * 1024));
        sent++;
        if (sent === 24) victim.process.kill("SIGKILL"); // parts are in S3 by now
        await new Promise((r) => setTimeout(r, 20));
      },
    });
    const failed = await fetch(via(t.upload_url, victim.url), {
      method: "POST",
      headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
      body,
      duplex: "half",
    } as RequestInit).then(
      (r) => r.status,
      () => "connection lost",
    );
    expect(failed).toBe("connection lost");
    // The committed file is intact on the surviving replicas; the cut upload never became visible.
    const files = (await session.listResources()).resources.map((r) => r.name);
    expect(files).toEqual(["kept.bin"]);
    const link = (await call(session, "download_link", { id: keptReply.files[0]!.id })).content[0]!.text;
    expect(Buffer.from(await (await fetch(via(link, replica("c")))).arrayBuffer()).equals(keptBytes)).toBe(
      true,
    );
    const s3 = testClient();
    try {
      // No object beyond the committed files' data + metadata pairs.
      const keys = await objectKeys(s3, cluster.s3Prefix);
      const data = keys.filter((k) => !k.endsWith(".json"));
      for (const key of data) expect(keys).toContain(`${key}.json`);
      // The unfinished multipart upload is only an upload in progress, and the sweep aborts it.
      const { s3: endpoints } = requireServices();
      const sweeper = s3Store({
        bucket: endpoints.bucket,
        endpoint: endpoints.endpoint,
        forcePathStyle: true,
        prefix: cluster.s3Prefix,
        credentials: { accessKeyId: endpoints.accessKeyId, secretAccessKey: endpoints.secretAccessKey },
        staleAfter: 0,
        sweepInterval: 0,
      });
      // A part the killed replica was sending may still be landing in radosgw: sweep until clean.
      let pending: string[] = [];
      for (let attempt = 0; attempt < 30; attempt++) {
        await sweeper.sweep();
        pending = await pendingUploads(s3, cluster.s3Prefix);
        if (pending.length === 0) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      await sweeper.close?.();
      expect(pending).toEqual([]);
      expect(await objectKeys(s3, cluster.s3Prefix)).toEqual(keys);
    } finally {
      s3.destroy();
    }
  });
});
