/**
 * The replicas example on SDK v2: three `server.ts --sdk v2` processes on one S3 bucket and one
 * Redis, behind a real HAProxy doing plain round-robin for everything (no stickiness). Clients: the
 * SDK v2 `Client` pinned to 2026-07-28, and one SDK v1 `Client` (the 2025 era, served statelessly).
 */
import { createHash, randomBytes } from "node:crypto";
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithServices, requireServices } from "../../scripts/services/test-env.js";
import { type Cluster, haproxyConfig, startCluster } from "./cluster.js";
import { userToken } from "./server.js";

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

interface Ticket {
  upload_url: string;
  field: string;
  handle: string;
}
type ToolResult = {
  isError?: boolean;
  content: Array<{ type: string; text: string }>;
  structuredContent?: unknown;
};
/** What the tests need of a client, the same for both generations. */
interface AnyClient {
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
  listResources(): Promise<{ resources: Array<{ uri: string; name: string }> }>;
  readResource(params: { uri: string }): Promise<{ contents: Array<Record<string, unknown>> }>;
  close(): Promise<void>;
}

/** `promise`, or a failure naming what did not arrive within `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describeWithServices(
  "replicas example on SDK v2: 3 stateless processes, one S3, one Redis, HAProxy round-robin",
  () => {
    let cluster: Cluster;
    const clients: AnyClient[] = [];
    beforeAll(async () => {
      cluster = await startCluster(requireServices(), 3, { sdk: "v2" });
    }, 60_000);
    afterAll(async () => {
      await Promise.allSettled(clients.map((c) => c.close()));
      await cluster?.close();
    });

    const replica = (name: string) => cluster.replicas.find((r) => r.name === name)!.url;
    /** The same URL, sent to another origin (a replica, or the load balancer). */
    const via = (url: string, origin: string) => origin + new URL(url).pathname + new URL(url).search;
    const bearer = (user: string) => ({ authorization: `Bearer ${userToken(cluster.secret, user)}` });

    /** A 2026-07-28 client (SDK v2), on the load balancer unless `base` names a replica. */
    async function modern(user: string | undefined, base = cluster.url): Promise<V2Client> {
      const client = new V2Client(
        { name: "replicas-test", version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      const headers = user === undefined ? {} : bearer(user);
      await client.connect(new V2Transport(new URL("/mcp", base), { requestInit: { headers } }));
      clients.push(client as unknown as AnyClient);
      return client;
    }

    async function call(client: AnyClient, name: string, args: Record<string, unknown> = {}) {
      return (await client.callTool({ name, arguments: args })) as ToolResult;
    }

    async function ticket(client: AnyClient): Promise<Ticket> {
      const result = await call(client, "get_upload_url");
      expect(result.isError).toBeFalsy();
      return result.structuredContent as Ticket;
    }

    function upload(url: string, field: string, name: string, bytes: Uint8Array): Promise<Response> {
      const form = new FormData();
      form.append(field, new Blob([new Uint8Array(bytes)]), name);
      return fetch(url, { method: "POST", body: form });
    }

    /**
     * The whole flow through the load balancer: ticket, upload, the handle in a tool call on another
     * replica than the upload, a download on a third. Round-robin decides where each request lands;
     * a step is repeated (each repetition checked too) until it lands where the proof needs it.
     */
    async function fullFlow(client: AnyClient): Promise<{ upload: string; tool: string; download: string }> {
      const t = await ticket(client);
      expect(new URL(t.upload_url).origin).toBe(cluster.url);
      const bytes = randomBytes(1024 * 1024 + 5);
      const response = await upload(t.upload_url, t.field, "flow.bin", bytes);
      expect(response.status).toBe(201);
      const uploadedOn = response.headers.get("x-replica") as string;
      const { files } = (await response.json()) as { files: Array<{ id: string; uri: string }> };

      let toolOn = uploadedOn;
      for (let attempt = 0; attempt < 6 && toolOn === uploadedOn; attempt++) {
        const inspected = JSON.parse(
          (await call(client, "inspect_file", { file: t.handle })).content[0]!.text,
        );
        expect(inspected).toMatchObject({ name: "flow.bin", size: bytes.length, sha256: sha(bytes) });
        toolOn = inspected.replica;
      }
      expect(toolOn).not.toBe(uploadedOn);

      let downloadedOn = uploadedOn;
      for (let attempt = 0; attempt < 6 && [uploadedOn, toolOn].includes(downloadedOn); attempt++) {
        const link = await call(client, "download_link", { id: files[0]!.id });
        expect(link.isError).toBeFalsy();
        expect(new URL(link.content[0]!.text).origin).toBe(cluster.url);
        const download = await fetch(link.content[0]!.text);
        expect(download.status).toBe(200);
        expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
        downloadedOn = download.headers.get("x-replica") as string;
      }
      expect(new Set([uploadedOn, toolOn, downloadedOn]).size).toBe(3);

      const listed = (await client.listResources()).resources;
      const uri = files[0]!.uri;
      expect(listed.map((r) => r.uri)).toContain(uri);
      const read = await client.readResource({ uri });
      expect(read.contents[0]?.uri).toBe(uri);
      return { upload: uploadedOn, tool: toolOn, download: downloadedOn };
    }

    it("HAProxy has no stickiness for v2: one round-robin backend, no stick table", () => {
      const config = cluster.haproxyConfig;
      expect(config).toBe(
        haproxyConfig(Number(new URL(cluster.url).port), cluster.replicas, { sticky: false }),
      );
      expect(config).not.toMatch(/stick|cookie|balance source|hash/);
      expect(config.match(/^backend /gm)).toEqual(["backend "]);
      expect(config).toMatch(/default_backend round_robin/);
    });

    it("2026-07-28 client through the load balancer: upload on one replica, tool call on another, download on a third", async () => {
      const alice = await modern("alice");
      expect(alice.getProtocolEra()).toBe("modern");
      const seen = new Set<string>();
      for (let i = 0; i < 6; i++) seen.add((await call(alice, "whoami")).content[0]!.text);
      expect(seen).toEqual(new Set(["a", "b", "c"])); // no session pins the client anywhere
      await fullFlow(alice as unknown as AnyClient);
    });

    it("two users do not see each other's files on any replica", async () => {
      const alice = await modern("alice2");
      const bob = await modern("bob2");
      const t = await ticket(alice);
      const response = await upload(t.upload_url, t.field, "secret.txt", Buffer.from("alice only"));
      expect(response.status).toBe(201);
      const { files } = (await response.json()) as { files: Array<{ uri: string }> };
      const uri = files[0]!.uri;
      for (let i = 0; i < 3; i++) {
        // Three rounds through the round-robin: every replica answers each question once.
        expect((await alice.listResources()).resources.map((r) => r.uri)).toEqual([uri]);
        expect((await bob.listResources()).resources).toEqual([]);
        const refused = await bob.readResource({ uri }).then(
          () => undefined,
          (error: { code?: number }) => error.code,
        );
        expect(refused).toBe(-32602);
        expect((await call(bob, "inspect_file", { file: t.handle })).isError).toBe(true);
      }
      expect((await alice.readResource({ uri })).contents[0]).toMatchObject({ uri, text: "alice only" });
    });

    it("refuses requests without a valid token (401), on the load balancer and on each replica", async () => {
      // The client's first request (server/discover) is already refused.
      await expect(modern(undefined)).rejects.toThrow(/401/);
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "get_upload_url",
          arguments: {},
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": { name: "fetch", version: "1.0.0" },
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        },
      });
      const post = (base: string, authorization: string | undefined) =>
        fetch(new URL("/mcp", base), {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-method": "tools/call",
            "mcp-name": "get_upload_url",
            "mcp-protocol-version": "2026-07-28",
            ...(authorization ? { authorization } : {}),
          },
          body,
        });
      for (const base of [cluster.url, replica("a"), replica("b"), replica("c")]) {
        // The same request with a valid token is served: only the credentials differ.
        const served = await post(base, bearer("erin").authorization);
        expect(served.status).toBe(200);
        expect(JSON.stringify(await served.json())).toContain("upload_url");
        for (const authorization of [
          undefined,
          "Bearer erin.forged",
          `Bearer ${userToken("x".repeat(43), "erin")}`,
        ]) {
          const refused = await post(base, authorization);
          expect(refused.status).toBe(401);
          expect(await refused.json()).toMatchObject({ error: { code: -32001 } });
        }
      }
    });

    it("a subscriptions/listen stream on replica B hears list_changed for a file stored through replica C", async () => {
      const onB = await modern("carol", replica("b"));
      const onA = await modern("carol", replica("a"));
      const heard: string[] = [];
      let resolveHeard: () => void;
      const changed = new Promise<void>((resolve) => {
        resolveHeard = resolve;
      });
      onB.setNotificationHandler("notifications/resources/list_changed", async () => {
        heard.push("list_changed");
        resolveHeard();
      });
      const stream = await onB.listen({ resourcesListChanged: true });
      expect(stream.honoredFilter).toMatchObject({ resourcesListChanged: true });
      expect((await onB.listResources()).resources).toEqual([]);

      const t = await ticket(onA as unknown as AnyClient);
      const response = await upload(
        via(t.upload_url, replica("c")),
        t.field,
        "elsewhere.txt",
        Buffer.from("hi"),
      );
      expect(response.status).toBe(201);
      expect(response.headers.get("x-replica")).toBe("c");
      await within(changed, 10_000, "list_changed on replica B");
      expect(heard).toEqual(["list_changed"]);
      expect((await onB.listResources()).resources.map((r) => r.name)).toEqual(["elsewhere.txt"]);
      await stream.close();
    });

    it("a 2025-era client (SDK v1) against the v2 cluster: no session, any replica, the full flow", async () => {
      const client = new V1Client({ name: "v1-client", version: "1.0.0" });
      const transport = new V1Transport(new URL("/mcp", cluster.url), {
        requestInit: { headers: bearer("dave") },
      });
      await client.connect(transport);
      clients.push(client as unknown as AnyClient);
      expect(transport.sessionId).toBeUndefined(); // served statelessly: nothing to pin
      const seen = new Set<string>();
      for (let i = 0; i < 6; i++)
        seen.add((await call(client as unknown as AnyClient, "whoami")).content[0]!.text);
      expect(seen).toEqual(new Set(["a", "b", "c"]));
      await fullFlow(client as unknown as AnyClient);
    });
  },
);
