/**
 * The screenshot example end to end over Streamable HTTP with the SDK's client: the model-facing
 * result carries an image block within the client's budget, and the original's signed download URL
 * serves the exact bytes of the full-size original.
 */
import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cameraJpeg, jpegMetadataOf } from "../../test/support/images.js";
import { start } from "./server.js";

type Block = { type: string; text?: string; data?: string; mimeType?: string };
const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

let running: Awaited<ReturnType<typeof start>>;
let client: Client;

beforeAll(async () => {
  running = await start();
  client = new Client({ name: "claude-code", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(running.mcpUrl));
});
afterAll(async () => {
  await client?.close();
  await running?.close();
});

async function imageOf(content: Block[]) {
  const image = content.find((block) => block.type === "image");
  expect(image, "no image block").toBeDefined();
  const bytes = Buffer.from(image?.data ?? "", "base64");
  const meta = await sharp(bytes).metadata();
  return { bytes, meta, mimeType: image?.mimeType };
}

async function download(url: string): Promise<Buffer> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

describe("examples/screenshot", () => {
  it("render_page: a 4000×3000 screenshot reaches the model as a 1568×1176 PNG; the download URL serves the original", async () => {
    const result = await client.callTool({ name: "render_page", arguments: { title: "Q3 sales" } });
    const content = result.content as Block[];
    const { bytes, meta, mimeType } = await imageOf(content);
    expect([meta.width, meta.height]).toEqual([1568, 1176]);
    expect(mimeType).toBe("image/png");
    expect(bytes.length).toBeLessThanOrEqual(562_500);
    const structured = result.structuredContent as {
      width: number;
      files: Array<{ downloadUrl: string; sha256: string; size: number }>;
    };
    expect(structured.width).toBe(4000);
    const [file] = structured.files;
    const original = await download(file?.downloadUrl as string);
    expect(sha(original)).toBe(file?.sha256);
    expect(original.length).toBe(file?.size);
    expect((await sharp(original).metadata()).width).toBe(4000);
    // The text fallback names the same URL.
    expect(content.some((block) => block.text?.includes(file?.downloadUrl as string))).toBe(true);
  }, 60_000);

  it("show_photo: a camera JPEG from the workspace, shown rotated upright without its GPS; the original byte for byte", async () => {
    const photo = await cameraJpeg(3000, 2000, { orientation: 6 });
    const path = join(running.workspace, "camera.jpg");
    await writeFile(path, photo);
    const result = await client.callTool({ name: "show_photo", arguments: { photo: path } });
    const content = result.content as Block[];
    const { bytes, meta, mimeType } = await imageOf(content);
    expect(mimeType).toBe("image/jpeg");
    expect([meta.width, meta.height]).toEqual([1045, 1568]);
    expect(meta.exif).toBeUndefined();
    expect(jpegMetadataOf(bytes).includes("GPS")).toBe(false);
    const url = /Download URL \(valid until [^)]+\): (\S+)/.exec(
      content.map((b) => b.text ?? "").join("\n"),
    )?.[1];
    expect(url).toBeDefined();
    expect((await download(url as string)).equals(await readFile(path))).toBe(true);
  }, 60_000);
});
