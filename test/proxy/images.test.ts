/**
 * The proxy's artifact producers and image outputs (issue 44): an upstream's full-size embedded
 * image, or an image file it wrote, reaches the caller as a shaped image block in front of the
 * stored original's link; `images: false` links only; an undecodable image fails the call and leaves
 * nothing stored.
 */
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryStore, ResourceRegistry, SignedUrlMinter } from "../../src/index.js";
import type { ArtifactRule } from "../../src/proxy/config.js";
import { confinedFolders } from "../../src/proxy/confined-file.js";
import { artifactProducer } from "../../src/proxy/stored-file-adapters.js";
import type { CallContext, JsonObject } from "../../src/proxy/types.js";
import { screenshotPng } from "../support/images.js";

const SCOPE = "proxy-images";
let dir: string;
let screenshot: Buffer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-proxy-images-"));
  screenshot = await screenshotPng(3000, 2000);
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

function context(): CallContext {
  return {
    scope: SCOPE,
    extra: {},
    signal: new AbortController().signal,
    tool: "screenshot",
    upstream: "browser",
    callUpstream: async () => ({}),
    readUpstream: async () => ({}),
  };
}

async function producer(rule: ArtifactRule, images?: false | { maxEdge?: number }) {
  const store = memoryStore();
  const minter = new SignedUrlMinter({ secret: "p".repeat(32), baseUrl: "http://127.0.0.1:9" });
  const registry = new ResourceRegistry({ store, minter });
  const adapter = artifactProducer(rule, {
    registry,
    outputs: await confinedFolders([dir]),
    maxBytes: 64 * 1024 * 1024,
    ttl: "1h",
    store,
    ...(images === undefined ? {} : { images }),
  });
  return { adapter, store };
}

async function run(rule: ArtifactRule, result: JsonObject, images?: false | { maxEdge?: number }) {
  const { adapter, store } = await producer(rule, images);
  const prepared = await adapter.before?.({}, context());
  try {
    const after = await adapter.after?.(result, context(), prepared?.state);
    return { result: after as JsonObject, store };
  } finally {
    await prepared?.dispose?.();
  }
}

const blocks = (result: JsonObject) => result.content as Array<Record<string, unknown>>;

async function storedShas(store: ReturnType<typeof memoryStore>): Promise<string[]> {
  const page = await store.list(SCOPE);
  return Promise.all(
    page.files.map(async (file) => {
      const chunks: Buffer[] = [];
      for await (const chunk of (await store.read(SCOPE, file.id)) ?? []) chunks.push(chunk as Buffer);
      return sha(Buffer.concat(chunks));
    }),
  );
}

describe("proxy artifact producers and images", () => {
  it("embedded: the upstream's 3000×2000 image becomes a ≤1568 px image block; the original is stored and linked", async () => {
    const upstream = {
      content: [
        { type: "text", text: "Screenshot of the page." },
        { type: "image", data: screenshot.toString("base64"), mimeType: "image/png" },
      ],
    };
    const { result, store } = await run({ locator: "embedded" }, upstream);
    const types = blocks(result).map((block) => block.type);
    expect(types).toEqual(["text", "image", "resource_link", "text"]);
    const image = blocks(result)[1] as { data: string; mimeType: string };
    const meta = await sharp(Buffer.from(image.data, "base64")).metadata();
    expect([meta.width, meta.height]).toEqual([1568, 1045]);
    expect(image.data.length).toBeLessThanOrEqual(750_000);
    expect(String(blocks(result)[3]?.text)).toMatch(/Shown to the model as a 1568×1045/);
    expect(await storedShas(store)).toEqual([sha(screenshot)]);
    expect((result._meta as { download_url?: string }).download_url).toMatch(/\/files\/download\//);
  }, 60_000);

  it("none: an image file the upstream wrote gets its shaped block; images: { maxEdge } is the tool's budget", async () => {
    const rule: ArtifactRule = { locator: "none", outputArg: "output", outputName: "shot.png" };
    const { adapter, store } = await producer(rule, { maxEdge: 600 });
    const prepared = await adapter.before?.({}, context());
    try {
      await writeFile(String(prepared?.args.output), screenshot);
      const result = (await adapter.after?.(
        { content: [{ type: "text", text: "Saved." }] },
        context(),
        prepared?.state,
      )) as JsonObject;
      expect(blocks(result).map((block) => block.type)).toEqual(["text", "image", "resource_link", "text"]);
      const image = blocks(result)[1] as { data: string };
      const meta = await sharp(Buffer.from(image.data, "base64")).metadata();
      expect([meta.width, meta.height]).toEqual([600, 400]);
      expect(await storedShas(store)).toEqual([sha(screenshot)]);
    } finally {
      await prepared?.dispose?.();
    }
  }, 60_000);

  it("images: false keeps today's shape (the upstream's block, the link)", async () => {
    const upstream = {
      content: [{ type: "image", data: screenshot.toString("base64"), mimeType: "image/png" }],
    };
    const { result } = await run({ locator: "embedded" }, upstream, false);
    expect(blocks(result).map((block) => block.type)).toEqual(["image", "resource_link", "text"]);
    expect((blocks(result)[0] as { data: string }).data).toBe(screenshot.toString("base64"));
  });

  it("an embedded image that cannot be decoded fails the call; nothing stays stored", async () => {
    const upstream = {
      content: [
        { type: "image", data: Buffer.from("not an image").toString("base64"), mimeType: "image/png" },
      ],
    };
    const { adapter, store } = await producer({ locator: "embedded" });
    await expect(adapter.after?.(upstream, context(), undefined)).rejects.toMatchObject({
      code: "UNSUPPORTED_MEDIA_TYPE",
    });
    expect(await storedShas(store)).toEqual([]);
  });
});
