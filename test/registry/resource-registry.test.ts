import { createHash } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { completable } from "@modelcontextprotocol/sdk/server/completable.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ReadResourceResult, Resource } from "@modelcontextprotocol/sdk/types.js";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { isFileBridgeError } from "../../src/errors/file-bridge-error.js";
import { ResourceRegistry, type ResourceRegistryOptions } from "../../src/registry/resource-registry.js";
import { defaultScope, scopeRef } from "../../src/scope/scope.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import type { FileStore } from "../../src/storage/types.js";
import { connectInMemory } from "../support/in-memory-client.js";
import { bytes, connect, errorCode, type Harness, recordNotifications, rpcError } from "./support.js";

const harnesses: Harness[] = [];

/** A default-template upload URI: `{scope}` carries the scope's reference, never the scope. */
function uploadUri(scope: string, path: string): string {
  return `file://uploads/${scopeRef(scope)}/${path}`;
}

/** A raw-scope uploads template, for scopes that are non-secret verified ids (authorize tests). */
const RAW_UPLOADS = {
  name: "uploads",
  uriTemplate: "file://uploads/{scope}/{+path}",
  scopeInUri: "raw",
} as const;

async function open(
  options: Partial<ResourceRegistryOptions> = {},
  setup?: Parameters<typeof connect>[1],
): Promise<Harness> {
  const harness = await connect(options, setup);
  harnesses.push(harness);
  return harness;
}

afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
});

function blobBytes(result: ReadResourceResult): Buffer {
  const content = result.contents[0] as { blob?: string };
  expect(typeof content.blob).toBe("string");
  return Buffer.from(content.blob as string, "base64");
}

function text(result: ReadResourceResult): string {
  const content = result.contents[0] as { text?: string };
  expect(typeof content.text).toBe("string");
  return content.text as string;
}

async function listAll(client: Client): Promise<Resource[]> {
  const all: Resource[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listResources(cursor === undefined ? {} : { cursor });
    all.push(...page.resources);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return all;
}

function optionCode(options: unknown): string | undefined {
  try {
    new ResourceRegistry(options as ResourceRegistryOptions);
  } catch (error) {
    return isFileBridgeError(error) ? error.code : "OTHER";
  }
  return undefined;
}

describe("options", () => {
  const store = memoryStore();
  it.each<[string, unknown]>([
    ["no options", undefined],
    ["no store", {}],
    ["store without methods", { store: {} }],
    ["empty templates", { store, templates: [] }],
    ["unsupported expression", { store, templates: [{ name: "a", uriTemplate: "x://{?q}" }] }],
    ["unmapped variable", { store, templates: [{ name: "a", uriTemplate: "x://{scope}/{other}/{id}" }] }],
    [
      "mapping to a missing variable",
      { store, templates: [{ name: "a", uriTemplate: "x://{id}", variables: { scope: "nope" } }] },
    ],
    ["no id or path", { store, templates: [{ name: "a", uriTemplate: "x://{scope}" }] }],
    [
      "one variable in two parts",
      { store, templates: [{ name: "a", uriTemplate: "x://{v}", variables: { id: "v", path: "v" } }] },
    ],
    [
      "duplicate names",
      {
        store,
        templates: [
          { name: "a", uriTemplate: "x://{id}" },
          { name: "a", uriTemplate: "y://{id}" },
        ],
      },
    ],
    ["bad kind", { store, templates: [{ name: "a", uriTemplate: "x://{id}", kind: "nope" }] }],
    [
      "bad template mimeType",
      { store, templates: [{ name: "a", uriTemplate: "x://{id}", mimeType: "nope" }] },
    ],
    ["scope not a function", { store, scope: "s" }],
    ["authorize not a function", { store, authorize: true }],
    ["bad listMode", { store, listMode: "some" }],
    ["pageSize 0", { store, pageSize: 0 }],
    ["pageSize 1.5", { store, pageSize: 1.5 }],
    ["pageSize too big", { store, pageSize: 5000 }],
    ["negative maxInlineBytes", { store, maxInlineBytes: -1 }],
    ["bad textTypes", { store, textTypes: ["not a type"] }],
    ["textTypes not an array", { store, textTypes: "text/x" }],
    ["minter without downloadUrl", { store, minter: {} }],
    ["negative notifyDelayMs", { store, notifyDelayMs: -1 }],
    ["now not a function", { store, now: 5 }],
  ])("%s → INVALID_OPTION", (_label, options) => {
    expect(optionCode(options)).toBe("INVALID_OPTION");
  });

  it.each<[string, unknown, string]>([
    ["store", { store: {} }, "store"],
    ["pageSize", { store, pageSize: 0 }, "pageSize"],
    [
      "a template's kind",
      { store, templates: [{ name: "a", uriTemplate: "x://{id}", kind: "nope" }] },
      "templates[0].kind",
    ],
    ["textTypes", { store, textTypes: ["not a type"] }, "textTypes"],
  ])("a bad %s names the option (message and data.option)", (_label, options, option) => {
    let caught: unknown;
    try {
      new ResourceRegistry(options as ResourceRegistryOptions);
    } catch (error) {
      caught = error;
    }
    expect(isFileBridgeError(caught) && caught.data?.option).toBe(option);
    expect(isFileBridgeError(caught) && caught.message).toMatch(
      new RegExp(`^ResourceRegistry: ${option.replace(/[[\]]/g, "\\$&")} `),
    );
  });

  it("accepts a Wire-style template by configuration alone", () => {
    expect(
      optionCode({
        store,
        templates: [
          {
            name: "wire",
            uriTemplate: "wire://container/{containerId}/file/{fileId}",
            variables: { scope: "containerId", id: "fileId" },
          },
        ],
      }),
    ).toBeUndefined();
  });
});

describe("resources/templates/list", () => {
  it("shows the default templates with title and description", async () => {
    const { client } = await open();
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      "file://uploads/{scope}/{+path}",
      "artifact://sessions/{scope}/{id}/{filename}",
    ]);
    for (const template of resourceTemplates) {
      expect(template.title).toEqual(expect.any(String));
      expect(template.description).toEqual(expect.any(String));
    }
  });

  it("shows a template's mimeType", async () => {
    const { client } = await open({
      templates: [{ name: "csv", uriTemplate: "csv://{scope}/{id}", mimeType: "text/csv", title: "CSV" }],
    });
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates).toEqual([
      { name: "csv", uriTemplate: "csv://{scope}/{id}", mimeType: "text/csv", title: "CSV" },
    ]);
  });
});

describe("resources/list", () => {
  it("lists only the caller's scope, each entry with its own metadata", async () => {
    const now = Date.UTC(2025, 0, 2, 3, 4, 5);
    const store = memoryStore({ now: () => now });
    const { client, registry } = await open({ store });
    const mine = await registry.add(bytes("hello"), {
      scope: "default",
      name: "notes/hello.txt",
      kind: "upload",
    });
    await registry.add(bytes("secret"), { scope: "other", name: "secret.txt", kind: "upload" });
    const { resources, nextCursor } = await client.listResources();
    expect(nextCursor).toBeUndefined();
    expect(resources).toEqual([
      {
        uri: uploadUri("default", "notes/hello.txt"),
        name: "notes/hello.txt",
        title: "hello.txt",
        mimeType: mine.mimeType,
        size: 5,
        annotations: { lastModified: "2025-01-02T03:04:05.000Z" },
      },
    ]);
  });

  it("paginates 1,000 files: every file exactly once, in a stable order", async () => {
    const { client, registry } = await open();
    const ids = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const file = await registry.add(bytes(`file ${i}`), { scope: "default", name: `f${i}.txt` });
      ids.add(file.id);
    }
    const pages: number[] = [];
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listResources(cursor === undefined ? {} : { cursor });
      pages.push(page.resources.length);
      seen.push(...page.resources.map((r) => r.uri));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(pages.length).toBe(10);
    expect(pages.every((n) => n === 100)).toBe(true);
    expect(new Set(seen).size).toBe(1000);
    const seenIds = seen.map((uri) => registry.parseUri(uri)?.path);
    expect(seenIds.length).toBe(1000);
    expect(new Set(seenIds).size).toBe(1000);
    // The order is stable: a second walk gives the same sequence.
    expect((await listAll(client)).map((r) => r.uri)).toEqual(seen);
  });

  it("keeps cursors valid when files are removed between pages", async () => {
    let tick = 1_000_000;
    const { client, registry } = await open({
      pageSize: 2,
      store: memoryStore({ now: () => (tick += 1000) }),
    });
    const files = [];
    for (let i = 0; i < 5; i++)
      files.push(await registry.add(bytes(`${i}`), { scope: "default", name: `${i}.txt` }));
    const first = await client.listResources();
    await registry.remove("default", files[2]!.id);
    const rest = await listAll2(client, first.nextCursor as string);
    expect([...first.resources, ...rest].map((r) => r.name)).toEqual(["0.txt", "1.txt", "3.txt", "4.txt"]);
  });

  it("answers an invalid cursor with -32602 INVALID_CURSOR", async () => {
    const { client } = await open();
    const error = await rpcError(client.listResources({ cursor: "not-a-cursor" }));
    expect(error.code).toBe(-32602);
    expect(error.data.code).toBe("INVALID_CURSOR");
  });

  it('keeps the list empty with listMode "none", while reads still work', async () => {
    const { client, registry } = await open({ listMode: "none" });
    const file = await registry.add(bytes("hi"), { scope: "default", name: "a.txt" });
    expect((await client.listResources()).resources).toEqual([]);
    expect(text(await client.readResource({ uri: registry.uriFor(file) }))).toBe("hi");
  });

  it("hides expired files", async () => {
    let now = 1_000_000;
    const clock = () => now;
    const store = memoryStore({ now: clock, sweepInterval: 0 });
    const { client, registry } = await open({ store, now: clock });
    await registry.add(bytes("short"), { scope: "default", name: "short.txt", ttl: 10 });
    await registry.add(bytes("long"), { scope: "default", name: "long.txt" });
    expect((await client.listResources()).resources.map((r) => r.name)).toEqual(["short.txt", "long.txt"]);
    now += 11_000;
    expect((await client.listResources()).resources.map((r) => r.name)).toEqual(["long.txt"]);
  });
});

async function listAll2(client: Client, cursor: string): Promise<Resource[]> {
  const all: Resource[] = [];
  let next: string | undefined = cursor;
  while (next !== undefined) {
    const page = await client.listResources({ cursor: next });
    all.push(...page.resources);
    next = page.nextCursor;
  }
  return all;
}

describe("resources/read", () => {
  it("reads text as text, utf-8 by default", async () => {
    const { client, registry } = await open();
    const file = await registry.add(bytes("héllo wörld ✓"), { scope: "default", name: "a.txt" });
    const result = await client.readResource({ uri: registry.uriFor(file) });
    expect(result.contents[0]?.uri).toBe(registry.uriFor(file));
    expect(result.contents[0]?.mimeType).toBe(file.mimeType);
    expect(text(result)).toBe("héllo wörld ✓");
  });

  it("honours the charset parameter", async () => {
    const { client, registry } = await open();
    const latin1 = Buffer.from("café", "latin1");
    const file = await registry.add(latin1, {
      scope: "default",
      name: "a.txt",
      mimeType: "text/plain; charset=ISO-8859-1",
    });
    expect(text(await client.readResource({ uri: registry.uriFor(file) }))).toBe("café");
  });

  it("reads json, csv, yaml and author-listed types as text", async () => {
    const { client, registry } = await open({ textTypes: ["application/x-custom", "model/*"] });
    for (const [name, mimeType] of [
      ["a.json", "application/json"],
      ["a.csv", "text/csv"],
      ["a.yaml", "application/yaml"],
      ["a.sh", "application/x-sh"],
      ["a.cus", "application/x-custom"],
      ["a.gltf", "model/gltf+json"],
      ["a.obj", "model/obj"],
    ] as const) {
      const file = await registry.add(bytes(`content of ${name}`), { scope: "default", name, mimeType });
      expect(text(await client.readResource({ uri: registry.uriFor(file) }))).toBe(`content of ${name}`);
    }
  });

  it("reads binary as a base64 blob with the exact bytes", async () => {
    const { client, registry } = await open();
    const data = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 31) % 256));
    const file = await registry.add(data, { scope: "default", name: "a.bin" });
    expect(blobBytes(await client.readResource({ uri: registry.uriFor(file) })).equals(data)).toBe(true);
  });

  it("sends text that is not valid in its charset as a blob, bytes untouched", async () => {
    const { client, registry } = await open();
    const data = Buffer.from([0x68, 0x69, 0xff, 0xfe, 0x00]);
    const file = await registry.add(data, { scope: "default", name: "a.txt", mimeType: "text/plain" });
    expect(blobBytes(await client.readResource({ uri: registry.uriFor(file) })).equals(data)).toBe(true);
  });

  it("answers an unknown URI with -32602 and data.uri", async () => {
    const { client } = await open();
    for (const uri of [
      uploadUri("default", "missing.txt"),
      `artifact://sessions/${scopeRef("default")}/01jabcdefghjkmnpqrstvwxyz0/x.txt`,
      "https://example.com/x",
      uploadUri("default", "../etc/passwd"),
      uploadUri("default", "a/%2e%2e/b"),
    ]) {
      const error = await rpcError(client.readResource({ uri }));
      expect(error.code).toBe(-32602);
      expect(error.data).toMatchObject({ uri, code: "NOT_FOUND" });
    }
  });

  it("treats another scope's file exactly as not found", async () => {
    const { client, registry } = await open();
    const theirs = await registry.add(bytes("x"), { scope: "other", name: "a.txt", kind: "artifact" });
    const uri = registry.uriFor(theirs);
    const error = await rpcError(client.readResource({ uri }));
    const missing = await rpcError(
      client.readResource({ uri: uri.replace(theirs.id, "01jabcdefghjkmnpqrstvwxyz0") }),
    );
    expect(error.code).toBe(-32602);
    expect(error.data.code).toBe("NOT_FOUND");
    expect(Object.keys(error.data).sort()).toEqual(Object.keys(missing.data).sort());
  });

  it("lets authorize open a scope named in the URI of a raw-scope template", async () => {
    const { client, registry } = await open({
      templates: [RAW_UPLOADS],
      authorize: (scope, request) => scope === "chat-7" && request.callerScope === "default",
    });
    const allowed = await registry.add(bytes("ok"), { scope: "chat-7", name: "a.txt" });
    const denied = await registry.add(bytes("no"), { scope: "chat-8", name: "a.txt" });
    expect(text(await client.readResource({ uri: registry.uriFor(allowed) }))).toBe("ok");
    expect((await rpcError(client.readResource({ uri: registry.uriFor(denied) }))).data.code).toBe(
      "NOT_FOUND",
    );
  });

  it("refuses files over maxInlineBytes without a minter: -32602 TOO_LARGE_TO_INLINE naming the limit", async () => {
    const { client, registry } = await open({ maxInlineBytes: 10 });
    const file = await registry.add(bytes("01234567890"), { scope: "default", name: "big.txt" });
    const error = await rpcError(client.readResource({ uri: registry.uriFor(file) }));
    expect(error.code).toBe(-32602);
    expect(error.data).toMatchObject({ code: "TOO_LARGE_TO_INLINE", limit: 10, uri: registry.uriFor(file) });
    // exactly at the limit still inlines
    const edge = await registry.add(bytes("0123456789"), { scope: "default", name: "edge.txt" });
    expect(text(await client.readResource({ uri: registry.uriFor(edge) }))).toBe("0123456789");
  });

  it("reads files over maxInlineBytes as a text/uri-list with a signed URL when a minter is set", async () => {
    const minter = new SignedUrlMinter({ secret: "s".repeat(32), baseUrl: "http://127.0.0.1:9" });
    const { client, registry } = await open({ maxInlineBytes: 4, minter });
    const file = await registry.add(bytes("too big"), { scope: "default", name: "big.txt" });
    const result = await client.readResource({ uri: registry.uriFor(file) });
    expect(result.contents[0]?.mimeType).toBe("text/uri-list");
    const url = text(result).trim();
    expect(url.startsWith("http://127.0.0.1:9/files/download/")).toBe(true);
    const claims = await minter.verify(url.slice(url.lastIndexOf("/") + 1), { action: "download" });
    expect(claims).toMatchObject({ scope: "default", fileId: file.id });
  });

  it("signs downloadClaims into the URLs it mints for reads and links", async () => {
    const minter = new SignedUrlMinter({ secret: "s".repeat(32), baseUrl: "http://127.0.0.1:9" });
    const seen: Array<[string, unknown]> = [];
    const { client, registry } = await open({
      maxInlineBytes: 4,
      minter,
      downloadClaims: (file, extra): Record<string, string | number> | undefined => {
        seen.push([file.id, extra]);
        const tag = (extra as { tag?: string } | undefined)?.tag;
        return tag === undefined ? (extra ? { via: "read" } : undefined) : { via: tag, n: 7 };
      },
    });
    const file = await registry.add(bytes("too big"), { scope: "default", name: "big.txt" });
    const tokenOf = (url: string) => url.slice(url.lastIndexOf("/") + 1);

    const read = text(await client.readResource({ uri: registry.uriFor(file) })).trim();
    expect((await minter.verify(tokenOf(read), { action: "download" })).claims).toEqual({ via: "read" });
    expect(seen[0]?.[0]).toBe(file.id);
    expect((seen[0]?.[1] as { signal?: unknown } | undefined)?.signal).toBeInstanceOf(AbortSignal); // the request's extra

    const linked = await registry.link(file, { extra: { tag: "tool" } as never });
    const url = linked.structuredContent.downloadUrl as string;
    expect((await minter.verify(tokenOf(url), { action: "download" })).claims).toEqual({ via: "tool", n: 7 });
    const plain = await registry.link(file);
    const token = tokenOf(plain.structuredContent.downloadUrl as string);
    expect((await minter.verify(token, { action: "download" })).claims).toEqual({});
    expect(seen.at(-1)).toEqual([file.id, undefined]);
  });

  it("refuses a downloadClaims that is not a function", () => {
    expect(optionCode({ store: memoryStore(), downloadClaims: { key: "x" } })).toBe("INVALID_OPTION");
  });
});

describe("URIs", () => {
  it("round-trips names with spaces, unicode, %, #, ? and folders", async () => {
    const { registry, client } = await open();
    const file = await registry.add(bytes("x"), {
      scope: "s 1",
      name: "dir/50% #1? ünï 🎉.txt",
      kind: "upload",
    });
    const uri = registry.uriFor(file);
    expect(uri).not.toMatch(/[ #?]/);
    expect(registry.parseUri(uri)).toEqual({
      template: "uploads",
      scopeRef: scopeRef("s 1"),
      path: file.name,
    });
    expect(client).toBeDefined();
  });

  it("expresses a Wire-style template by configuration alone", async () => {
    const { registry, client } = await open({
      templates: [
        {
          name: "wire",
          uriTemplate: "wire://container/{containerId}/file/{fileId}",
          variables: { scope: "containerId", id: "fileId" },
          scopeInUri: "raw",
        },
      ],
      listMode: "none",
      authorize: (scope) => scope === "container-42",
    });
    const file = await registry.add(bytes("wire bytes"), { scope: "container-42", name: "w.txt" });
    const uri = registry.uriFor(file);
    expect(uri).toBe(`wire://container/container-42/file/${file.id}`);
    expect(registry.parseUri(uri)).toEqual({ template: "wire", scope: "container-42", id: file.id });
    expect(text(await client.readResource({ uri }))).toBe("wire bytes");
    expect(registry.parseUri("wire://container/c/file/not-an-id")).toBeNull();
  });

  it("uses the artifact template for artifacts and requires the right file name", async () => {
    const { registry, client } = await open();
    const file = await registry.add(bytes("a"), { scope: "default", name: "out.csv", kind: "artifact" });
    const uri = registry.uriFor(file);
    expect(uri).toBe(`artifact://sessions/${scopeRef("default")}/${file.id}/out.csv`);
    expect(text(await client.readResource({ uri }))).toBe("a");
    const wrongName = uri.replace("out.csv", "other.csv");
    expect((await rpcError(client.readResource({ uri: wrongName }))).data.code).toBe("NOT_FOUND");
    // An artifact is not reachable through the uploads template either.
    const asUpload = uploadUri("default", "out.csv");
    expect((await rpcError(client.readResource({ uri: asUpload }))).data.code).toBe("NOT_FOUND");
  });

  it("resolves a path URI to the newest file of that name", async () => {
    const { registry, client } = await open();
    await registry.add(bytes("old"), { scope: "default", name: "same.txt" });
    const newer = await registry.add(bytes("new"), { scope: "default", name: "same.txt" });
    expect(text(await client.readResource({ uri: registry.uriFor(newer) }))).toBe("new");
    await registry.remove("default", newer.id);
    expect(text(await client.readResource({ uri: registry.uriFor(newer) }))).toBe("old");
  });

  it("round-trips any file name through link → URI → read (property)", async () => {
    const { registry, client } = await open();
    const name = fc
      .string({ unit: fc.constantFrom(..." %#?/&+=;:@!'()*[]ü中🎉.\\abc-_~"), minLength: 1, maxLength: 40 })
      .filter((n) => n.trim().length > 0);
    await fc.assert(
      fc.asyncProperty(
        name,
        fc.constantFrom("upload", "artifact") as fc.Arbitrary<"upload" | "artifact">,
        fc.uint8Array({ maxLength: 64 }),
        async (n, kind, data) => {
          const file = await registry.add(data, { scope: "default", name: n, kind });
          const link = await registry.link(file);
          const uri = link.content[0].uri;
          expect(link.content[1].text).toContain(uri);
          expect(registry.parseUri(uri)?.[kind === "upload" ? "path" : "id"]).toBe(
            kind === "upload" ? file.name : file.id,
          );
          const result = await client.readResource({ uri });
          const content = result.contents[0] as { text?: string; blob?: string };
          const got =
            content.blob !== undefined
              ? Buffer.from(content.blob, "base64")
              : Buffer.from(content.text ?? "", "utf8");
          expect(got.equals(Buffer.from(data))).toBe(true);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe("link()", () => {
  it("returns a resource_link, a text fallback with the URI, and structured content", async () => {
    const { registry } = await open();
    const file = await registry.add(bytes("abc"), { scope: "default", name: "r.md", kind: "artifact" });
    const { content, structuredContent } = await registry.link(file);
    const uri = registry.uriFor(file);
    expect(content[0]).toMatchObject({
      type: "resource_link",
      uri,
      name: "r.md",
      mimeType: file.mimeType,
      size: 3,
      annotations: { lastModified: new Date(file.createdAt).toISOString() },
    });
    expect(content[1].type).toBe("text");
    expect(content[1].text).toContain(uri);
    expect(structuredContent).toMatchObject({
      uri,
      name: "r.md",
      size: 3,
      sha256: createHash("sha256").update("abc").digest("hex"),
    });
    expect(structuredContent.downloadUrl).toBeUndefined();
  });

  it("adds a download URL when a minter is set", async () => {
    const minter = new SignedUrlMinter({ secret: "k".repeat(32), baseUrl: "http://127.0.0.1:9" });
    const { registry } = await open({ minter });
    const file = await registry.add(bytes("abc"), { scope: "default", name: "r.md" });
    const { content, structuredContent } = await registry.link(file);
    expect(structuredContent.downloadUrl).toMatch(/^http:\/\/127\.0\.0\.1:9\/files\/download\//);
    expect(content[1].text).toContain(structuredContent.downloadUrl as string);
  });

  it("is NOT_FOUND for another scope, or a removed file", async () => {
    const { registry } = await open();
    const file = await registry.add(bytes("abc"), { scope: "a", name: "r.md" });
    await expect(registry.link(file, { scope: "b" })).rejects.toSatisfy((e) => errorCode(e) === "NOT_FOUND");
    await registry.remove("a", file.id);
    await expect(registry.link(file)).rejects.toSatisfy((e) => errorCode(e) === "NOT_FOUND");
  });

  it("works as a tool result, and the client can read the linked file", async () => {
    const { client } = await open({}, (server, registry) => {
      server.registerTool("make", { description: "makes a file" }, async (extra) => {
        const file = await registry.add(bytes("made by a tool"), {
          scope: defaultScope(extra),
          name: "made.txt",
          kind: "artifact",
        });
        return registry.link(file);
      });
    });
    const result = await client.callTool({ name: "make", arguments: {} });
    const blocks = result.content as Array<{ type: string; uri?: string; text?: string }>;
    expect(blocks.map((b) => b.type)).toEqual(["resource_link", "text"]);
    const uri = blocks[0]?.uri as string;
    expect(text(await client.readResource({ uri }))).toBe("made by a tool");
    expect(result.structuredContent).toMatchObject({ uri, name: "made.txt" });
  });
});

describe("notifications", () => {
  it("sends list_changed when files are added and removed", async () => {
    const { client, registry } = await open();
    const log = recordNotifications(client);
    const file = await registry.add(bytes("a"), { scope: "default", name: "a.txt" });
    await log.until((l) => l.listChanged >= 1);
    await registry.remove("default", file.id);
    await log.until((l) => l.listChanged >= 2);
    expect(log.listChanged).toBe(2);
  });

  it("coalesces a burst of adds into fewer notifications", async () => {
    const { client, registry } = await open({ notifyDelayMs: 50 });
    const log = recordNotifications(client);
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        registry.add(bytes(`${i}`), { scope: "default", name: `${i}.txt` }),
      ),
    );
    await log.until((l) => l.listChanged >= 1);
    await client.ping();
    expect(log.listChanged).toBeLessThan(40);
  });

  it("does not notify a session about another scope", async () => {
    const { client, registry } = await open();
    const log = recordNotifications(client);
    await registry.add(bytes("a"), { scope: "someone-else", name: "a.txt" });
    await registry.add(bytes("b"), { scope: "default", name: "b.txt" });
    await log.until((l) => l.listChanged >= 1);
    await client.ping();
    expect(log.listChanged).toBe(1);
  });

  it("sends resources/updated to subscribers, and stops after unsubscribe", async () => {
    const { client, registry } = await open();
    const log = recordNotifications(client);
    const first = await registry.add(bytes("v1"), { scope: "default", name: "live.txt" });
    const uri = registry.uriFor(first);
    await client.subscribeResource({ uri });
    const second = await registry.add(bytes("v2"), { scope: "default", name: "live.txt" });
    await log.until((l) => l.updated.length >= 1);
    expect(log.updated).toEqual([uri]);
    expect(text(await client.readResource({ uri }))).toBe("v2");
    await client.unsubscribeResource({ uri });
    const before = log.listChanged;
    await registry.remove("default", second.id);
    await log.until((l) => l.listChanged > before);
    expect(log.updated).toEqual([uri]);
  });

  it("refuses to subscribe to a URI the caller cannot see", async () => {
    const { client, registry } = await open();
    const theirs = await registry.add(bytes("x"), { scope: "other", name: "a.txt" });
    const error = await rpcError(client.subscribeResource({ uri: registry.uriFor(theirs) }));
    expect(error.code).toBe(-32602);
    expect(error.data.code).toBe("NOT_FOUND");
  });
});

describe("first use", () => {
  it("gives calls that start the registry's async work at once one shared index", async () => {
    const registry = new ResourceRegistry({ store: memoryStore() });
    // Both adds ask for the work before it has loaded (registry-work.ts): they share the one load,
    // and index into one scope index.
    const [first] = await Promise.all([
      registry.add(bytes("a"), { scope: "default", name: "a.txt" }),
      registry.add(bytes("b"), { scope: "default", name: "b.txt" }),
    ]);
    // A second index would have held one file, or none: the sync would find files "added".
    expect(await registry.sync("default")).toEqual({ added: 0, removed: 0 });
    expect(await registry.remove("default", first.id)).toBe(true);
    expect(await registry.sync("default")).toEqual({ added: 0, removed: 0 });
    await registry.close();
  });
});

describe("sync()", () => {
  it("picks up files written to and deleted from the store directly", async () => {
    const store = memoryStore();
    const before = await store.put(bytes("early"), { scope: "default", name: "early.txt" });
    const { client, registry } = await open({ store });
    const log = recordNotifications(client);
    // A scope is loaded from the store on first use.
    expect((await client.listResources()).resources.map((r) => r.name)).toEqual(["early.txt"]);
    const late = await store.put(bytes("late"), { scope: "default", name: "late.txt" });
    expect((await client.listResources()).resources.map((r) => r.name)).toEqual(["early.txt"]);
    await store.delete("default", before.id);
    expect(await registry.sync("default")).toEqual({ added: 1, removed: 1 });
    await log.until((l) => l.listChanged >= 1);
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual([registry.uriFor(late)]);
    expect(await registry.sync("default")).toEqual({ added: 0, removed: 0 });
  });

  it("register() indexes a file already in the store", async () => {
    const { client, registry, store } = await open();
    const file = await store.put(bytes("uploaded"), { scope: "default", name: "up.txt", kind: "upload" });
    await client.listResources(); // loads the scope
    await registry.register(file);
    expect((await client.listResources()).resources.map((r) => r.name)).toEqual(["up.txt"]);
    await expect(registry.register({ scope: "default", id: "01jabcdefghjkmnpqrstvwxyz0" })).rejects.toSatisfy(
      (e) => errorCode(e) === "NOT_FOUND",
    );
  });

  it("never shows a half-registered file under concurrent adds, removes, syncs and lists", async () => {
    const { client, registry } = await open({ pageSize: 7 });
    const kept = new Set<string>();
    const work: Promise<unknown>[] = [];
    const listed: Resource[][] = [];
    for (let i = 0; i < 60; i++) {
      work.push(
        registry.add(bytes(`${i}`), { scope: "default", name: `${i}.txt` }).then(async (file) => {
          if (i % 3 === 0) await registry.remove("default", file.id);
          else kept.add(registry.uriFor(file));
        }),
      );
      if (i % 10 === 0) work.push(registry.sync("default"));
      if (i % 5 === 0) work.push(listAll(client).then((all) => listed.push(all)));
    }
    await Promise.all(work);
    for (const snapshot of listed) {
      const uris = snapshot.map((r) => r.uri);
      expect(new Set(uris).size).toBe(uris.length);
    }
    const final = (await listAll(client)).map((r) => r.uri);
    expect(new Set(final)).toEqual(kept);
    for (const uri of final.slice(0, 5))
      expect((await client.readResource({ uri })).contents).toHaveLength(1);
  });
});

describe("completion/complete", () => {
  it("completes file names in the caller's scope only", async () => {
    const { client, registry } = await open();
    await registry.add(bytes("1"), { scope: "default", name: "report-2024.pdf", kind: "upload" });
    await registry.add(bytes("2"), { scope: "default", name: "report-2025.pdf", kind: "upload" });
    await registry.add(bytes("3"), { scope: "default", name: "notes.txt", kind: "upload" });
    await registry.add(bytes("4"), { scope: "other", name: "report-secret.pdf", kind: "upload" });
    const result = await client.complete({
      ref: { type: "ref/resource", uri: "file://uploads/{scope}/{+path}" },
      argument: { name: "path", value: "rep" },
    });
    expect(result.completion.values).toEqual(["report-2024.pdf", "report-2025.pdf"]);
    expect(result.completion.total).toBe(2);
    const scopes = await client.complete({
      ref: { type: "ref/resource", uri: "file://uploads/{scope}/{+path}" },
      argument: { name: "scope", value: "" },
    });
    expect(scopes.completion.values).toEqual([scopeRef("default")]);
    const other = await client.complete({
      ref: { type: "ref/resource", uri: "file://uploads/{scope}/{+path}" },
      argument: { name: "path", value: "rep" },
      context: { arguments: { scope: "other" } },
    });
    expect(other.completion.values).toEqual(["report-2024.pdf", "report-2025.pdf"]);
  });

  it("keeps an McpServer's prompt completions working", async () => {
    const { client } = await open({}, (server) => {
      server.registerPrompt(
        "greet",
        {
          argsSchema: {
            who: completable(z.string(), (value) => ["alice", "bob"].filter((n) => n.startsWith(value))),
          },
        },
        ({ who }) => ({ messages: [{ role: "user", content: { type: "text", text: `hi ${who}` } }] }),
      );
    });
    const result = await client.complete({
      ref: { type: "ref/prompt", name: "greet" },
      argument: { name: "who", value: "a" },
    });
    expect(result.completion.values).toEqual(["alice"]);
  });
});

describe("attach() and completions registered first", () => {
  it("keeps prompt completions an McpServer set up before attach()", async () => {
    const server = new McpServer({ name: "p", version: "1.0.0" });
    server.registerPrompt(
      "pick",
      {
        argsSchema: {
          color: completable(z.string(), (value) => ["red", "green"].filter((c) => c.startsWith(value))),
        },
      },
      ({ color }) => ({ messages: [{ role: "user", content: { type: "text", text: color } }] }),
    );
    const registry = new ResourceRegistry({ store: memoryStore() });
    registry.attach(server);
    await registry.add(bytes("x"), { scope: "default", name: "green.txt" });
    const { client, close } = await connectInMemory(server, { name: "c", version: "1.0.0" });
    try {
      const prompt = await client.complete({
        ref: { type: "ref/prompt", name: "pick" },
        argument: { name: "color", value: "g" },
      });
      expect(prompt.completion.values).toEqual(["green"]);
      const file = await client.complete({
        ref: { type: "ref/resource", uri: "file://uploads/{scope}/{+path}" },
        argument: { name: "path", value: "g" },
      });
      expect(file.completion.values).toEqual(["green.txt"]);
    } finally {
      await close();
      await registry.close();
    }
  });
});

describe("attach()", () => {
  it("works with a low-level Server", async () => {
    let tick = 1_000_000;
    const store = memoryStore({ now: () => (tick += 1000) });
    const registry = new ResourceRegistry({ store, pageSize: 1 });
    const server = new Server({ name: "low", version: "1.0.0" }, { capabilities: {} });
    registry.attach(server);
    const { client, close } = await connectInMemory(server, { name: "c", version: "1.0.0" });
    try {
      await registry.add(bytes("one"), { scope: "default", name: "1.txt" });
      await registry.add(bytes("two"), { scope: "default", name: "2.txt" });
      const all = await listAll(client);
      expect(all.map((r) => r.name)).toEqual(["1.txt", "2.txt"]);
      expect(text(await client.readResource({ uri: all[1]!.uri }))).toBe("two");
      expect(client.getServerCapabilities()?.resources).toEqual({ subscribe: true, listChanged: true });
    } finally {
      await close();
      await registry.close();
    }
  });

  it("refuses a connected server, and a server that already serves resources", async () => {
    const { registry, server } = await open();
    const other = new ResourceRegistry({ store: memoryStore() });
    expect(() => other.attach(server)).toThrowError(expect.objectContaining({ code: "INVALID_OPTION" }));
    const fresh = new McpServer({ name: "x", version: "1" });
    fresh.registerResource("static", "static://x", {}, () => ({ contents: [] }));
    expect(() => registry.attach(fresh)).toThrowError(expect.objectContaining({ code: "INVALID_OPTION" }));
  });
});

describe("resolver()", () => {
  it("matches the registry's URIs and resolves them, scope-checked", async () => {
    const { registry } = await open();
    const file = await registry.add(bytes("resolved"), { scope: "s1", name: "doc.txt" });
    const resolver = registry.resolver();
    const uri = registry.uriFor(file);
    expect(resolver.matches(uri)).toBe(true);
    expect(resolver.matches("https://example.com/doc.txt")).toBe(false);
    expect(resolver.matches("file:///etc/passwd")).toBe(false);
    expect(await resolver.resolve(uri, { scope: "s2" })).toBeNull();
    const result = await resolver.resolve(uri, { scope: "s1" });
    expect(result).toMatchObject({ name: "doc.txt", size: 8, sha256: file.sha256 });
    const chunks: Buffer[] = [];
    for await (const chunk of await result!.open()) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe("resolved");
  });
});

/** A store that records every call (method and scope) it gets. */
function spyStore(inner: FileStore = memoryStore({ sweepInterval: 0 })): {
  store: FileStore;
  calls: Array<[string, unknown]>;
} {
  const calls: Array<[string, unknown]> = [];
  const store = new Proxy(inner, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls.push([String(key), args[0]]);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, calls };
}

describe("URIs with dot segments", () => {
  it("never reach the store: no lookup, no index load", async () => {
    const { store, calls } = spyStore();
    const { client } = await open({ store });
    for (const uri of [
      uploadUri("default", "../etc/passwd"),
      uploadUri("default", "a/%2e%2e/b"),
      uploadUri("default", "a/%2E%2E%2Fb"),
      uploadUri("default", "./a"),
      uploadUri("default", "a//b"),
      `artifact://sessions/${scopeRef("default")}/01jabcdefghjkmnpqrstvwxyz0/..`,
    ]) {
      const error = await rpcError(client.readResource({ uri }));
      expect(error.data).toMatchObject({ uri, code: "NOT_FOUND" });
    }
    expect(calls).toEqual([]);
  });
});

describe("indexIdleTimeout", () => {
  it.each<[string, unknown]>([
    ["negative", -1],
    ["not a duration", "soon"],
    ["true", true],
  ])("refuses %s with INVALID_OPTION", (_label, value) => {
    expect(optionCode({ store: memoryStore(), indexIdleTimeout: value })).toBe("INVALID_OPTION");
  });

  it("drops an idle scope's index and reloads it from the store on next use", async () => {
    let now = 1_000_000;
    const clock = () => now;
    const { store, calls } = spyStore(memoryStore({ now: clock, sweepInterval: 0 }));
    const registry = new ResourceRegistry({ store, now: clock, indexIdleTimeout: "1m" });
    const resolver = registry.resolver();
    const loads = (scope: string) => calls.filter(([m, s]) => m === "list" && s === scope).length;

    await registry.add(bytes("one"), { scope: "a", name: "one.txt" });
    expect(loads("a")).toBe(1);
    // Written behind the registry's back: invisible while the index is cached.
    await store.put(bytes("late"), { scope: "a", name: "late.txt" });
    expect(await resolver.resolve(uploadUri("a", "late.txt"), { scope: "a" })).toBeNull();
    now += 59_000;
    const b = await registry.add(bytes("b"), { scope: "b", name: "b.txt" }); // a sweep: "a" is not idle yet
    expect(await resolver.resolve(uploadUri("a", "late.txt"), { scope: "a" })).toBeNull();
    expect(loads("a")).toBe(1);

    now += 61_000;
    await registry.add(bytes("c"), { scope: "c", name: "c.txt" }); // a sweep drops "a" and "b"
    const late = await resolver.resolve(uploadUri("a", "late.txt"), { scope: "a" });
    expect(late).toMatchObject({ name: "late.txt", size: 4 });
    expect(loads("a")).toBe(2);
    expect(loads("b")).toBe(1);
    expect(await registry.remove("b", b.id)).toBe(true);
    expect(loads("b")).toBe(2);
  });

  it("keeps the index of a scope a connected session belongs to", async () => {
    let now = 1_000_000;
    const clock = () => now;
    const { store, calls } = spyStore(memoryStore({ now: clock, sweepInterval: 0 }));
    const { client, registry } = await open({ store, now: clock, indexIdleTimeout: 60 });
    await registry.add(bytes("x"), { scope: "default", name: "x.txt" });
    expect((await client.listResources()).resources).toHaveLength(1);
    await store.put(bytes("hidden"), { scope: "default", name: "hidden.txt" });
    now += 3_600_000;
    await registry.add(bytes("o"), { scope: "other", name: "o.txt" }); // sweeps
    now += 3_600_000;
    await registry.add(bytes("o"), { scope: "other2", name: "o.txt" }); // sweeps again
    expect((await client.listResources()).resources.map((r) => r.name)).toEqual(["x.txt"]);
    expect(calls.filter(([m, s]) => m === "list" && s === "default")).toHaveLength(1);
    // Once the session is gone, the scope ages out like any other.
    await client.close();
    now += 3_600_000;
    await registry.add(bytes("o"), { scope: "other3", name: "o.txt" });
    const found = await registry.resolver().resolve(uploadUri("default", "hidden.txt"), { scope: "default" });
    expect(found).toMatchObject({ name: "hidden.txt" });
  });

  it("keeps every index with indexIdleTimeout: false", async () => {
    let now = 1_000_000;
    const clock = () => now;
    const { store, calls } = spyStore(memoryStore({ now: clock, sweepInterval: 0 }));
    const registry = new ResourceRegistry({ store, now: clock, indexIdleTimeout: false });
    await registry.add(bytes("1"), { scope: "a", name: "1.txt" });
    now += 365 * 86_400_000;
    await registry.add(bytes("2"), { scope: "b", name: "2.txt" });
    await registry.resolver().resolve(uploadUri("a", "1.txt"), { scope: "a" });
    expect(calls.filter(([m, s]) => m === "list" && s === "a")).toHaveLength(1);
  });

  it("never drops a scope while an operation holds it", async () => {
    let now = 1_000_000;
    const clock = () => now;
    const inner = memoryStore({ now: clock, sweepInterval: 0 });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let stall = false;
    let tStored!: () => void;
    const tIsStored = new Promise<void>((resolve) => {
      tStored = resolve;
    });
    const store: FileStore = {
      ...inner,
      put: async (source, options) => {
        const file = await inner.put(source, options);
        if (options.name === "t.txt") queueMicrotask(tStored);
        return file;
      },
      stage: (source, options) => inner.stage(source, options),
      head: (scope, id) => inner.head(scope, id),
      read: (scope, id, range) => inner.read(scope, id, range),
      delete: (scope, id) => inner.delete(scope, id),
      sweep: () => inner.sweep(),
      list: async (scope, options) => {
        const page = await inner.list(scope, options);
        if (stall && scope === "slow") {
          stall = false;
          await gate; // answers with a snapshot taken before the stall
        }
        return page;
      },
    };
    const registry = new ResourceRegistry({ store, now: clock, indexIdleTimeout: "5s" });
    await registry.add(bytes("s"), { scope: "slow", name: "s.txt" });
    stall = true;
    // sync() holds the "slow" mutex while its list() (a snapshot without t.txt) is stalled.
    const syncing = registry.sync("slow");
    now += 10_000;
    await registry.add(bytes("f"), { scope: "fast", name: "f.txt" }); // sweeps; "slow" looks idle
    const adding = registry.add(bytes("t"), { scope: "slow", name: "t.txt" }); // must wait for sync
    await tIsStored;
    // The in-memory store does no I/O: one macrotask lets add() either finish (mutex dropped) or
    // park on the held mutex.
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await syncing;
    await adding;
    // Had the sweep dropped the held mutex, add() would have run beside sync(), and sync's stale
    // snapshot would have overwritten the index without t.txt.
    const names: string[] = [];
    for (const name of ["s.txt", "t.txt"]) {
      const found = await registry.resolver().resolve(uploadUri("slow", name), { scope: "slow" });
      if (found) names.push(found.name);
    }
    expect(names).toEqual(["s.txt", "t.txt"]);
  });
});

describe("notifications, more", () => {
  it("coalesces a burst into exactly one list_changed per session", async () => {
    const { client, registry } = await open({ notifyDelayMs: 60_000 });
    const log = recordNotifications(client);
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        registry.add(bytes(`${i}`), { scope: "default", name: `${i}.txt` }),
      ),
    );
    await registry.close(); // flushes what is pending now
    await log.until((l) => l.listChanged >= 1);
    await client.ping();
    expect(log.listChanged).toBe(1);
  });

  it("sends one list_changed when several of a session's scopes change together", async () => {
    const { client, registry, server } = await open({ notifyDelayMs: 60_000 });
    registry.attach(server, { scope: "second" }); // attaching again adds a scope
    const log = recordNotifications(client);
    await registry.add(bytes("1"), { scope: "default", name: "1.txt" });
    await registry.add(bytes("2"), { scope: "second", name: "2.txt" });
    await registry.add(bytes("3"), { scope: "unrelated", name: "3.txt" });
    await registry.close();
    await log.until((l) => l.listChanged >= 1);
    await client.ping();
    expect(log.listChanged).toBe(1);
  });

  it('sends no list_changed with listMode "none", but still resources/updated', async () => {
    const { client, registry } = await open({ listMode: "none" });
    const log = recordNotifications(client);
    const first = await registry.add(bytes("v1"), { scope: "default", name: "n.txt" });
    const uri = registry.uriFor(first);
    await client.subscribeResource({ uri });
    await registry.add(bytes("v2"), { scope: "default", name: "n.txt" });
    await log.until((l) => l.updated.length >= 1);
    await client.ping();
    expect(log.listChanged).toBe(0);
    expect(log.updated).toEqual([uri]);
  });

  it("matches a subscription made with the client's own spelling of the URI", async () => {
    const { client, registry } = await open();
    const log = recordNotifications(client);
    await registry.add(bytes("v1"), { scope: "default", name: "my notes.txt" });
    const spelled = uploadUri("default", "my notes.txt"); // raw space, as a client may expand it
    await client.subscribeResource({ uri: spelled });
    await registry.add(bytes("v2"), { scope: "default", name: "my notes.txt" });
    await log.until((l) => l.updated.length >= 1);
    expect(log.updated).toEqual([spelled]);
    await client.unsubscribeResource({ uri: uploadUri("default", "my%20notes.txt") });
    const before = log.listChanged;
    await registry.add(bytes("v3"), { scope: "default", name: "my notes.txt" });
    await log.until((l) => l.listChanged > before);
    await client.ping();
    expect(log.updated).toEqual([spelled]);
  });
});

describe("authorize, more", () => {
  it("treats an authorize hook that throws as a refusal", async () => {
    const { client, registry } = await open({
      templates: [RAW_UPLOADS],
      authorize: () => {
        throw new Error("auth backend down");
      },
    });
    const theirs = await registry.add(bytes("x"), { scope: "chat-9", name: "a.txt" });
    const error = await rpcError(client.readResource({ uri: registry.uriFor(theirs) }));
    expect(error.code).toBe(-32602);
    expect(error.data.code).toBe("NOT_FOUND");
    expect(await registry.resolver().resolve(registry.uriFor(theirs), { scope: "default" })).toBeNull();
  });
});

describe("concurrency on a slow store", () => {
  it("loses no file when adds, removes and lists race on a scope's first use", async () => {
    const inner = memoryStore({ sweepInterval: 0 });
    const turns = (n: number) =>
      Array.from({ length: n }).reduce<Promise<unknown>>(
        (p) => p.then(() => new Promise((resolve) => setImmediate(resolve))),
        Promise.resolve(),
      );
    // put() finishes after a varying number of event-loop turns and list() answers with a
    // snapshot taken before it yields, so loads and adds interleave: a lost or half-registered
    // file shows up in the lists.
    let puts = 0;
    let lists = 0;
    const store: FileStore = {
      ...inner,
      put: async (source, options) => {
        const file = await inner.put(source, options);
        await turns(puts++ % 5);
        return file;
      },
      stage: (source, options) => inner.stage(source, options),
      head: (scope, id) => inner.head(scope, id),
      read: (scope, id, range) => inner.read(scope, id, range),
      delete: (scope, id) => inner.delete(scope, id),
      sweep: () => inner.sweep(),
      list: async (scope, options) => {
        const page = await inner.list(scope, options);
        await turns(8 - 4 * (lists++ % 3));
        return page;
      },
    };
    const { client, registry } = await open({ store, pageSize: 5 });
    const kept = new Set<string>();
    const work: Promise<unknown>[] = [];
    const snapshots: string[][] = [];
    for (let i = 0; i < 40; i++) {
      work.push(
        registry.add(bytes(`${i}`), { scope: "default", name: `${i}.txt` }).then(async (file) => {
          if (i % 4 === 0) await registry.remove("default", file.id);
          else kept.add(registry.uriFor(file));
        }),
      );
      if (i % 5 === 0) work.push(listAll(client).then((all) => snapshots.push(all.map((r) => r.uri))));
    }
    await Promise.all(work);
    for (const uris of snapshots) expect(new Set(uris).size).toBe(uris.length);
    expect(new Set((await listAll(client)).map((r) => r.uri))).toEqual(kept);
  });
});
