/**
 * Image outputs through `Artifacts` (issue 44): `fit()`, `image()` and `withArtifacts()` deliver an
 * image block shaped to the client's budget plus the full-resolution original as an artifact (link,
 * text, download URL, `structuredContent.files`); undecodable images and bombs fail with nothing
 * stored; `images: false` and `inline: "original-only"` keep the link alone.
 */
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Artifacts, type FileStore, fsStore, memoryStore, SignedUrlMinter } from "../../src/index.js";
import type { CallToolResult, ContentBlock, MediaContent } from "../../src/mcp/types.js";
import { alphaPng, bombPng, cameraJpeg, jpegMetadataOf, screenshotPng } from "../support/images.js";

const SCOPE = "images";
const minter = new SignedUrlMinter({ secret: "i".repeat(32), baseUrl: "http://127.0.0.1:9" });
let dir: string;
let screenshot: Buffer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-artifact-images-"));
  screenshot = await screenshotPng(4000, 3000);
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

async function storedBytes(store: FileStore): Promise<Buffer[]> {
  const page = await store.list(SCOPE);
  return Promise.all(
    page.files.map(async (file) => {
      const chunks: Buffer[] = [];
      for await (const chunk of (await store.read(SCOPE, file.id)) ?? []) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    }),
  );
}

function images(result: { content: readonly ContentBlock[] }): MediaContent[] {
  return result.content.filter((block): block is MediaContent => block.type === "image");
}

async function dimensions(block: MediaContent): Promise<[number, number, number]> {
  const bytes = Buffer.from(block.data, "base64");
  const meta = await sharp(bytes).metadata();
  return [meta.width ?? 0, meta.height ?? 0, bytes.length];
}

const imageResult = (bytes: Buffer, mimeType: string, structured = false): CallToolResult => ({
  content: [
    { type: "text", text: "Screenshot taken." },
    { type: "image", data: bytes.toString("base64"), mimeType },
  ],
  ...(structured ? { structuredContent: { taken: true } } : {}),
});

describe("Artifacts and image outputs", () => {
  it("fit(): a 4000×3000 screenshot reaches Claude Code as a ≤1568 px image block, the original one link away", async () => {
    const store = memoryStore();
    const artifacts = new Artifacts({ store, minter });
    const fitted = await artifacts.fit(imageResult(screenshot, "image/png", true), {
      scope: SCOPE,
      client: "claude-code",
    });
    const [image] = images(fitted);
    expect(image).toBeDefined();
    const [width, height, bytes] = await dimensions(image as MediaContent);
    expect(Math.max(width, height)).toBeLessThanOrEqual(1568);
    expect([width, height]).toEqual([1568, 1176]);
    expect((image as MediaContent).data.length).toBeLessThanOrEqual(750_000);
    expect(bytes).toBeLessThan(screenshot.length);
    // The original: stored whole, linked (resource_link + text with URI and download URL), in structuredContent.files.
    expect((await storedBytes(store)).map(sha)).toEqual([sha(screenshot)]);
    expect(fitted.content.some((block) => block.type === "resource_link")).toBe(true);
    const text = fitted.content.map((block) => (block.type === "text" ? block.text : "")).join("\n");
    expect(text).toMatch(/Shown to the model as a 1568×1176 image\/png/);
    expect(text).toMatch(/Download URL \(valid until [^)]+\): http:\/\/127\.0\.0\.1:9\/files\/download\//);
    const files = (fitted.structuredContent as { files?: Array<Record<string, unknown>> }).files ?? [];
    expect(files).toHaveLength(1);
    expect(files[0]).toMatchObject({
      mimeType: "image/png",
      size: screenshot.length,
      sha256: sha(screenshot),
    });
    expect(String(files[0]?.downloadUrl)).toMatch(/^http:\/\/127\.0\.0\.1:9\/files\/download\//);
  }, 60_000);

  it("fit(): a small plain PNG stays as it came and nothing is stored", async () => {
    const store = memoryStore();
    const png = await sharp({ create: { width: 80, height: 60, channels: 3, background: "#abcdef" } })
      .png()
      .toBuffer();
    const result = imageResult(png, "image/png");
    const fitted = await new Artifacts({ store }).fit(result, { scope: SCOPE });
    expect(fitted.content).toEqual(result.content);
    expect(await storedBytes(store)).toEqual([]);
  });

  it("fit(): a photo that fits but carries GPS is re-encoded without it; the original is stored", async () => {
    const store = memoryStore();
    const jpeg = await cameraJpeg(640, 480);
    const fitted = await new Artifacts({ store }).fit(imageResult(jpeg, "image/jpeg"), { scope: SCOPE });
    const [image] = images(fitted);
    const bytes = Buffer.from((image as MediaContent).data, "base64");
    expect(jpegMetadataOf(bytes).includes("GPS")).toBe(false);
    expect((await sharp(bytes).metadata()).exif).toBeUndefined();
    expect((await storedBytes(store)).map(sha)).toEqual([sha(jpeg)]);
  });

  it("fit(): a tool's own budget (images: { maxEdge }) and images: false", async () => {
    const store = memoryStore();
    const artifacts = new Artifacts({ store });
    const small = await artifacts.fit(imageResult(screenshot, "image/png"), {
      scope: SCOPE,
      images: { maxEdge: 512 },
    });
    expect((await dimensions(images(small)[0] as MediaContent)).slice(0, 2)).toEqual([512, 384]);
    const off = await artifacts.fit(imageResult(screenshot, "image/png"), { scope: SCOPE, images: false });
    expect(images(off)).toEqual([]);
    expect(off.content.some((block) => block.type === "resource_link")).toBe(true);
  }, 60_000);

  it("fit(): an image that cannot be decoded fails the call and leaves nothing stored (a long text before it included)", async () => {
    const store = memoryStore();
    const result: CallToolResult = {
      content: [
        { type: "text", text: "x".repeat(20_000) },
        { type: "image", data: Buffer.from("not a PNG at all").toString("base64"), mimeType: "image/png" },
      ],
    };
    await expect(new Artifacts({ store }).fit(result, { scope: SCOPE })).rejects.toMatchObject({
      code: "UNSUPPORTED_MEDIA_TYPE",
      data: { reason: "undecodable" },
    });
    expect(await storedBytes(store)).toEqual([]);
  });

  it("image(): from a path into fsStore, the image block, the original's exact bytes and its download URL", async () => {
    const store = fsStore(join(dir, "store"));
    const path = join(dir, "page.png");
    await writeFile(path, screenshot);
    const shot = await new Artifacts({ store, minter }).image({
      scope: SCOPE,
      path,
      client: "codex-mcp-client",
    });
    expect(shot.content.map((block) => block.type)).toEqual(["image", "resource_link", "text"]);
    expect(shot.shown).toMatchObject({ mimeType: "image/png", width: 1568, height: 1176 });
    expect(shot.file.sha256).toBe(sha(screenshot));
    expect(shot.structuredContent.downloadUrl).toMatch(/\/files\/download\//);
    expect((await storedBytes(store)).map(sha)).toEqual([sha(screenshot)]);
    await store.close?.();
  }, 60_000);

  it("image(): a decompression bomb is refused (FILE_TOO_LARGE, reason pixels) and its upload removed", async () => {
    const store = memoryStore();
    await expect(
      new Artifacts({ store }).image({ scope: SCOPE, bytes: await bombPng(40_000), name: "bomb.png" }),
    ).rejects.toMatchObject({ code: "FILE_TOO_LARGE", data: { reason: "pixels" } });
    expect(await storedBytes(store)).toEqual([]);
  });

  it("image(): inline: original-only stores and links the original, sends no image block", async () => {
    const store = memoryStore();
    const artifacts = new Artifacts({ store, images: { inline: "original-only" } });
    const shot = await artifacts.image({ scope: SCOPE, bytes: await alphaPng(300, 200), name: "logo.png" });
    expect(shot.content.map((block) => block.type)).toEqual(["resource_link", "text"]);
    expect(shot.shown).toBeUndefined();
  });

  it("withArtifacts(): an image the tool wrote comes back as an image block before its link; images: false links only", async () => {
    const store = memoryStore();
    const artifacts = new Artifacts({ store, minter, tmpDir: join(dir, "calls") });
    const handler = async ({ output }: { output: string }) => {
      await writeFile(output, screenshot);
      return { content: [{ type: "text" as const, text: "Rendered." }] };
    };
    const tool = artifacts.withArtifacts(handler, {
      outputPathArg: "output",
      outputName: "page.png",
      client: () => "gemini-cli-mcp-client",
    });
    const result = await tool({ output: "" }, { sessionId: "s1" });
    expect(result.content.map((block) => block.type)).toEqual(["text", "image", "resource_link", "text"]);
    expect((await dimensions(images(result)[0] as MediaContent)).slice(0, 2)).toEqual([1568, 1176]);
    const plain = artifacts.withArtifacts(handler, {
      outputPathArg: "output",
      outputName: "page.png",
      images: false,
    });
    const linked = await plain({ output: "" }, { sessionId: "s1" });
    expect(images(linked)).toEqual([]);
  }, 60_000);

  it("refuses bad image options with INVALID_OPTION naming the option", () => {
    const store = memoryStore();
    expect(() => new Artifacts({ store, images: { maxEdge: 0 } })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION", data: { option: "images.maxEdge" } }),
    );
    expect(() => new Artifacts({ store, images: { svg: "inline" as "link" } })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION", data: { option: "images.svg" } }),
    );
    expect(() =>
      new Artifacts({ store }).withArtifacts(async () => ({ content: [] }), {
        outputPathArg: "output",
        client: "claude-code" as unknown as () => string,
      }),
    ).toThrow(expect.objectContaining({ code: "INVALID_OPTION", data: { option: "client" } }));
  });
});
