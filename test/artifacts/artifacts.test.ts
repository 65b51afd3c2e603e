import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Artifacts, defaultArtifactUri } from "../../src/artifacts/artifacts.js";
import { ResourceRegistry } from "../../src/registry/resource-registry.js";
import { createFileRoutes } from "../../src/routes/create-file-routes.js";
import { scopeRef } from "../../src/scope/scope.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { fsStore } from "../../src/storage/fs-store.js";
import { memoryState } from "../../src/storage/memory-state.js";
import type { FileStore } from "../../src/storage/types.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const BASE = "http://127.0.0.1:9";

let dir: string;
let clock: number;
let store: FileStore;
let minter: SignedUrlMinter;
let artifacts: Artifacts;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-artifacts-"));
  clock = Date.UTC(2030, 0, 1);
  store = fsStore(join(dir, "store"), { sweepInterval: 0, now: () => clock });
  minter = new SignedUrlMinter({ secret: SECRET, baseUrl: BASE, state: memoryState(), now: () => clock });
  artifacts = new Artifacts({
    store,
    minter,
    ttl: "2h",
    maxBytes: 10_000,
    tmpDir: join(dir, "tmp"),
    scope: () => "s1",
  });
});

afterEach(async () => {
  await store.close?.();
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

describe("Artifacts.capture", () => {
  it("validates its options with INVALID_OPTION", () => {
    for (const options of [
      { store: undefined },
      { store, ttl: "forever" },
      { store, maxBytes: 0 },
      { store, minter: {} },
      { store, registry: { add: () => undefined } },
      { store, scope: "s1" },
    ]) {
      expect(() => new Artifacts(options as never)).toThrowError(
        expect.objectContaining({ code: "INVALID_OPTION" }),
      );
    }
  });

  it("stores bytes as an artifact with its own TTL, links and a working signed download URL", async () => {
    const bytes = randomBytes(2000);
    const captured = await artifacts.capture({ scope: "s 1", bytes, name: "chart.png" });
    expect(captured.file).toMatchObject({
      kind: "artifact",
      name: "chart.png",
      mimeType: "image/png",
      size: 2000,
    });
    expect(captured.file.expiresAt).toBe(clock + 2 * 3_600_000);
    // The scope's reference, never the scope (security change: scopes are often session ids).
    expect(captured.uri).toBe(`artifact://sessions/${scopeRef("s 1", minter)}/${captured.file.id}/chart.png`);
    expect(captured.uri).toBe(defaultArtifactUri(captured.file, minter.scopeRefs));
    const [link, text] = captured.content;
    expect(link).toMatchObject({ type: "resource_link", uri: captured.uri, name: "chart.png", size: 2000 });
    expect(text.text).toContain(captured.uri);
    expect(text.text).toContain(captured._meta.download_url as string);
    expect(captured._meta.artifact_uri).toBe(captured.uri);
    const routes = createFileRoutes({ store, minter });
    const response = (await routes(new Request(captured._meta.download_url as string))) as Response;
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it("stores a file the tool wrote, and embedded text and blob resources", async () => {
    const path = join(dir, "report.csv");
    await writeFile(path, "a,b\n1,2\n");
    const fromPath = await artifacts.capture({ scope: "s1", path });
    expect(fromPath.file).toMatchObject({ name: "report.csv", size: 8 });
    const text = await artifacts.capture({
      scope: "s1",
      resource: {
        type: "resource",
        resource: { uri: "file:///out/notes%20v2.md", mimeType: "text/markdown", text: "# hi" },
      },
    });
    expect(text.file).toMatchObject({ name: "notes v2.md", mimeType: "text/markdown", size: 4 });
    const blob = await artifacts.capture({
      scope: "s1",
      resource: { uri: "mem://x/data.bin", blob: Buffer.from([1, 2, 3]).toString("base64") },
      name: "renamed.bin",
    });
    expect(blob.file).toMatchObject({ name: "renamed.bin", size: 3 });
    const stream = await store.read("s1", blob.file.id);
    const chunks: Buffer[] = [];
    for await (const chunk of stream ?? []) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks)).toEqual(Buffer.from([1, 2, 3]));
  });

  it("refuses bad input with specific codes and stores nothing", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ scope: "s1" }, "INVALID_INPUT"],
      [{ scope: "s1", bytes: new Uint8Array(1), path: "/etc/hosts" }, "INVALID_INPUT"],
      [{ scope: "s1", path: dir }, "INVALID_INPUT"],
      [{ scope: "s1", path: join(dir, "missing") }, "INVALID_INPUT"],
      [{ scope: "s1", resource: { uri: "x:/a", blob: "not base64!" } }, "INVALID_BASE64"],
      [{ scope: "s1", resource: { uri: "x:/a", text: "a", blob: "YQ==" } }, "INVALID_INPUT"],
      [{ scope: "s1", bytes: new Uint8Array(10_001) }, "FILE_TOO_LARGE"],
      [{ scope: "", bytes: new Uint8Array(1) }, "INVALID_INPUT"],
    ];
    for (const [input, code] of cases) {
      await expect(artifacts.capture(input as never)).rejects.toMatchObject({ code });
    }
    expect((await store.list("s1")).files).toEqual([]);
  });

  it("signs downloadClaims into the download URL; withArtifacts hands them the call's extra", async () => {
    const seen: unknown[] = [];
    const charged = new Artifacts({
      store,
      minter,
      tmpDir: join(dir, "tmp"),
      scope: () => "s1",
      downloadClaims: (file, extra) => {
        seen.push(extra);
        return {
          key: String((extra as { authInfo?: { clientId?: string } })?.authInfo?.clientId),
          size: file.size,
        };
      },
    });
    const downloads: Array<Record<string, unknown>> = [];
    const routes = createFileRoutes({
      store,
      minter,
      onDownload: (event) => void downloads.push(event.claims),
    });
    const extra = { authInfo: { clientId: "key-7", token: "t", scopes: [] } };
    const direct = await charged.capture({ scope: "s1", bytes: Buffer.from("abc"), name: "a.txt", extra });
    const handler = charged.withArtifacts(
      async (args: { out?: string }) => {
        await writeFile(args.out as string, "wrapped");
        return { content: [] };
      },
      { outputPathArg: "out" },
    );
    const wrapped = await handler({}, extra);
    expect(seen).toEqual([extra, extra]);
    for (const url of [direct._meta.download_url, wrapped._meta?.download_url]) {
      const response = (await routes(new Request(url as string))) as Response;
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(downloads).toEqual([
      { key: "key-7", size: 3 },
      { key: "key-7", size: 7 },
    ]);
    expect(() => new Artifacts({ store, downloadClaims: {} as never })).toThrowError(
      expect.objectContaining({ code: "INVALID_OPTION" }),
    );
  });

  it("stores nothing when the download URL cannot be minted", async () => {
    const failing = new Artifacts({
      store,
      minter,
      downloadClaims: () => ({ "bad key!": 1 }),
    });
    await expect(
      failing.capture({ scope: "s1", bytes: Buffer.from("x"), name: "x.txt" }),
    ).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    expect((await store.list("s1")).files).toEqual([]);
  });

  it("registers through a ResourceRegistry when one is given", async () => {
    const registry = new ResourceRegistry({ store });
    const registered = new Artifacts({ store, registry });
    const captured = await registered.capture({ scope: "s1", bytes: Buffer.from("x"), name: "out.txt" });
    expect(captured.uri).toBe(registry.uriFor(captured.file));
    expect(captured._meta.download_url).toBeUndefined();
    expect((await store.list("s1", { kind: "artifact" })).files.map((f) => f.id)).toEqual([captured.file.id]);
    await registry.close();
  });
});

describe("Artifacts.withArtifacts", () => {
  it("pre-allocates the output path, captures what the handler wrote, appends links and cleans up", async () => {
    let seen = "";
    const handler = artifacts.withArtifacts(
      async (args: { text: string; out?: string }) => {
        seen = args.out as string;
        await writeFile(args.out as string, args.text);
        return { content: [{ type: "text", text: "done" }], _meta: { mine: 1 } };
      },
      { outputPathArg: "out", outputName: "result.txt" },
    );
    const result = await handler({ text: "hello" }, {});
    expect(seen.startsWith(join(dir, "tmp"))).toBe(true);
    expect(seen.endsWith("result.txt")).toBe(true);
    expect(result.content?.map((c) => (c as { type: string }).type)).toEqual([
      "text",
      "resource_link",
      "text",
    ]);
    expect(result._meta).toMatchObject({ mine: 1 });
    expect(String(result._meta?.artifact_uri)).toMatch(
      new RegExp(`^artifact://sessions/${scopeRef("s1", minter)}/[0-9a-z]{26}/result\\.txt$`),
    );
    expect(typeof result._meta?.download_url).toBe("string");
    expect(await readdir(join(dir, "tmp"))).toEqual([]);
    const [file] = (await store.list("s1")).files;
    expect(file).toMatchObject({ kind: "artifact", size: 5, name: "result.txt" });
  });

  it("keeps a caller-given name inside the temp folder", async () => {
    let seen = "";
    const handler = artifacts.withArtifacts(
      async (args: { out?: string }) => {
        seen = args.out as string;
        await writeFile(seen, "x");
        return { content: [] };
      },
      { outputPathArg: "out" },
    );
    await handler({ out: "../../../etc/evil.sh" }, {});
    expect(dirname(dirname(seen))).toBe(join(dir, "tmp"));
    expect((await store.list("s1")).files.map((f) => f.name)).toEqual(["evil.sh"]);
  });

  it("returns the result unchanged when the handler wrote nothing or failed, and always cleans up", async () => {
    const nothing = artifacts.withArtifacts(async () => ({ content: [{ type: "text", text: "no file" }] }), {
      outputPathArg: "out",
    });
    expect(await nothing({}, {})).toEqual({ content: [{ type: "text", text: "no file" }] });
    const failed = artifacts.withArtifacts(
      async (args: { out?: string }) => {
        await writeFile(args.out as string, "partial");
        return { isError: true, content: [{ type: "text", text: "bad" }] };
      },
      { outputPathArg: "out" },
    );
    expect((await failed({}, {})).isError).toBe(true);
    const thrown = artifacts.withArtifacts(
      async (args: { out?: string }) => {
        await writeFile(args.out as string, "partial");
        throw new Error("boom");
      },
      { outputPathArg: "out" },
    );
    await expect(thrown({}, {})).rejects.toThrow("boom");
    const tooBig = artifacts.withArtifacts(
      async (args: { out?: string }) => {
        await writeFile(args.out as string, randomBytes(20_000));
        return { content: [] };
      },
      { outputPathArg: "out" },
    );
    const result = await tooBig({}, {});
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain("FILE_TOO_LARGE");
    expect(await readdir(join(dir, "tmp"))).toEqual([]);
    expect((await store.list("s1")).files).toEqual([]);
  });

  it("refuses bad options with INVALID_OPTION", () => {
    expect(() =>
      artifacts.withArtifacts(async () => ({ content: [] }), { outputPathArg: "a b" }),
    ).toThrowError(expect.objectContaining({ code: "INVALID_OPTION" }));
    expect(() => artifacts.withArtifacts("x" as never, { outputPathArg: "out" })).toThrowError(
      expect.objectContaining({ code: "INVALID_OPTION" }),
    );
  });
});
