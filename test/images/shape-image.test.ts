/**
 * `shapeImage`: what a model is sent of an image (dimensions, bytes, format, orientation, alpha,
 * metadata), what it refuses (bombs, undecodable files), and that it never enlarges. Test images are
 * made with sharp itself (test/support/images.ts).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import fc from "fast-check";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LinkOnlyImage, type ShapedImage, shapeImage } from "../../src/images/index.js";
import {
  alphaPng,
  animatedGif,
  bombPng,
  cameraJpeg,
  jpegMetadataOf,
  screenshotPng,
  screenshotSvg,
} from "../support/images.js";

function shaped(result: ShapedImage | LinkOnlyImage): ShapedImage {
  if ("linkOnly" in result) throw new Error(`expected an image, got linkOnly ${result.linkOnly}`);
  return result;
}

/** What the returned bytes really are, read back by sharp. */
async function decoded(image: ShapedImage) {
  const meta = await sharp(image.data).metadata();
  expect(meta.width).toBe(image.width);
  expect(meta.height).toBe(image.height);
  expect(`image/${meta.format}`).toBe(image.mimeType);
  return meta;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-images-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("shapeImage", () => {
  it("shapes a 4000×3000 screenshot PNG to 1568 px on the long edge, under the byte budget, lossless PNG", async () => {
    const png = await screenshotPng(4000, 3000);
    const image = shaped(await shapeImage(png, { maxEdge: 1568, maxBytes: 562_500 }));
    expect([image.width, image.height]).toEqual([1568, 1176]);
    expect(image.data.length).toBeLessThanOrEqual(562_500);
    expect(image.mimeType).toBe("image/png");
    expect(image.reencoded).toBe(true);
    expect(image.original).toEqual({ format: "png", width: 4000, height: 3000, frames: 1 });
    await decoded(image);
  }, 60_000);

  it("applies EXIF orientation and strips EXIF (GPS, camera) from what it returns; a photo becomes a JPEG", async () => {
    // Stored 1200 × 800, orientation 6: shown 800 wide and 1200 tall.
    const jpeg = await cameraJpeg(1200, 800, { orientation: 6 });
    expect(jpeg.includes("TestCam")).toBe(true);
    expect(jpegMetadataOf(jpeg).includes("GPS")).toBe(true);
    const image = shaped(await shapeImage(jpeg, { maxEdge: 600 }));
    expect([image.width, image.height]).toEqual([400, 600]);
    expect(image.original).toMatchObject({ width: 800, height: 1200 });
    expect(image.mimeType).toBe("image/jpeg");
    const meta = await decoded(image);
    expect(meta.exif).toBeUndefined();
    expect(meta.orientation).toBeUndefined();
    expect(image.data.includes("TestCam")).toBe(false);
    expect(jpegMetadataOf(image.data).includes("GPS")).toBe(false);
  });

  it("re-encodes an image that fits but carries metadata (GPS is not passed on), without enlarging it", async () => {
    const jpeg = await cameraJpeg(300, 200);
    const image = shaped(await shapeImage(jpeg, { maxEdge: 1568 }));
    expect([image.width, image.height]).toEqual([300, 200]);
    expect(image.reencoded).toBe(true);
    expect((await decoded(image)).exif).toBeUndefined();
  });

  it("passes an image that fits and carries nothing to strip through unchanged (decoded once to check it)", async () => {
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: "#123456" } })
      .png()
      .toBuffer();
    const image = shaped(await shapeImage(png));
    expect(image.reencoded).toBe(false);
    expect(image.data.equals(png)).toBe(true);
  });

  it("keeps alpha: a transparent PNG stays transparent where it was", async () => {
    const png = await alphaPng(2000, 1000);
    const image = shaped(await shapeImage(png, { maxEdge: 800 }));
    expect([image.width, image.height]).toEqual([800, 400]);
    expect(["image/png", "image/webp"]).toContain(image.mimeType);
    const meta = await decoded(image);
    expect(meta.hasAlpha).toBe(true);
    const { data, info } = await sharp(image.data).raw().toBuffer({ resolveWithObject: true });
    expect(info.channels).toBe(4);
    expect(data[3]).toBe(0); // top-left corner: transparent
    const centre = ((info.height / 2) * info.width + info.width / 2) * 4;
    expect(data[centre + 3]).toBe(255); // the square: opaque
  });

  it("meets a tight byte budget by lowering quality, then the size", async () => {
    const jpeg = await cameraJpeg(1600, 1200);
    const image = shaped(await shapeImage(jpeg, { maxEdge: 1568, maxBytes: 20_000 }));
    expect(image.data.length).toBeLessThanOrEqual(20_000);
    expect(image.width).toBeLessThan(1568);
    expect(image.width / image.height).toBeCloseTo(4 / 3, 1);
  });

  it("refuses a decompression bomb from its header: FILE_TOO_LARGE, reason pixels, nothing decoded", async () => {
    const bomb = await bombPng(30_000);
    expect(bomb.length).toBeLessThan(200);
    await expect(shapeImage(bomb)).rejects.toMatchObject({
      code: "FILE_TOO_LARGE",
      data: { reason: "pixels", width: 30_000, height: 30_000, limit: 100_000_000 },
    });
    await expect(
      shapeImage(await screenshotPng(400, 300), { maxInputPixels: 100_000 }),
    ).rejects.toMatchObject({
      code: "FILE_TOO_LARGE",
      data: { reason: "pixels" },
    });
  });

  it("says an image cannot be decoded: not an image, a truncated PNG (UNSUPPORTED_MEDIA_TYPE, undecodable)", async () => {
    await expect(shapeImage(Buffer.from("this is not an image at all"))).rejects.toMatchObject({
      code: "UNSUPPORTED_MEDIA_TYPE",
      data: { reason: "undecodable" },
    });
    const png = await screenshotPng(600, 400);
    await expect(shapeImage(png.subarray(0, Math.floor(png.length / 2)))).rejects.toMatchObject({
      code: "UNSUPPORTED_MEDIA_TYPE",
      data: { reason: "undecodable" },
    });
  });

  it("sends an animated GIF's first frame, or only links it with animated: link", async () => {
    const gif = await animatedGif(120, 90, 3);
    const first = shaped(await shapeImage(gif));
    expect([first.width, first.height]).toEqual([120, 90]);
    expect(first.firstFrame).toBe(true);
    expect(first.original.frames).toBe(3);
    expect((await decoded(first)).pages ?? 1).toBe(1);
    await expect(shapeImage(gif, { animated: "link" })).resolves.toMatchObject({ linkOnly: "animated" });
  });

  it("rasterizes an SVG from its bytes (an <image> naming a local file is not loaded), or only links it", async () => {
    const secret = join(dir, "secret.png");
    await writeFile(
      secret,
      await sharp({ create: { width: 50, height: 50, channels: 3, background: "#f00" } })
        .png()
        .toBuffer(),
    );
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="100" height="50"><rect width="100" height="50" fill="#fff"/><image x="0" y="0" width="50" height="50" xlink:href="secret.png"/><image x="50" y="0" width="50" height="50" xlink:href="file://${secret}"/></svg>`;
    const path = join(dir, "chart.svg");
    await writeFile(path, svg);
    const image = shaped(await shapeImage({ path }));
    expect([image.width, image.height]).toEqual([100, 50]);
    expect(image.mimeType).toBe("image/png");
    const { data } = await sharp(image.data).raw().toBuffer({ resolveWithObject: true });
    // No red pixel: neither the relative nor the file:// image was read.
    for (let i = 0; i < data.length; i += 4)
      expect([data[i], data[i + 1], data[i + 2]]).toEqual([255, 255, 255]);
    await expect(shapeImage(Buffer.from(screenshotSvg(200, 100)), { svg: "link" })).resolves.toMatchObject({
      linkOnly: "svg",
    });
  });

  it("reads a path or a stream as well as bytes, with the same answer", async () => {
    const png = await screenshotPng(1800, 900);
    const path = join(dir, "shot.png");
    await writeFile(path, png);
    const fromPath = shaped(await shapeImage({ path }, { maxEdge: 900 }));
    const fromStream = shaped(
      await shapeImage(Readable.from([png.subarray(0, 1000), png.subarray(1000)]), { maxEdge: 900 }),
    );
    expect(fromPath.data.equals(fromStream.data)).toBe(true);
    expect([fromPath.width, fromPath.height]).toEqual([900, 450]);
    await expect(shapeImage(Readable.from([png]), { maxInputBytes: 1000 })).rejects.toMatchObject({
      code: "FILE_TOO_LARGE",
    });
  });

  it("refuses bad options with INVALID_OPTION naming the option", async () => {
    await expect(shapeImage(Buffer.alloc(1), { maxEdge: 0 })).rejects.toMatchObject({
      code: "INVALID_OPTION",
      data: { option: "maxEdge" },
    });
    await expect(shapeImage(Buffer.alloc(1), { maxBytes: 1.5 })).rejects.toMatchObject({
      code: "INVALID_OPTION",
      data: { option: "maxBytes" },
    });
  });

  it("property: within the edge and byte budgets, never enlarged, aspect kept, metadata stripped", async () => {
    const kinds = ["screenshot", "photo", "alpha"] as const;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 8, max: 1600 }),
        fc.integer({ min: 8, max: 1600 }),
        fc.integer({ min: 16, max: 1800 }),
        fc.integer({ min: 6_000, max: 400_000 }),
        fc.constantFrom(...kinds),
        fc.constantFrom(1, 3, 6, 8),
        async (width, height, maxEdge, maxBytes, kind, orientation) => {
          const input =
            kind === "screenshot"
              ? await screenshotPng(width, height)
              : kind === "photo"
                ? await cameraJpeg(width, height, { orientation })
                : await alphaPng(width, height);
          const swapped = kind === "photo" && orientation >= 5;
          const [w, h] = swapped ? [height, width] : [width, height];
          const result = await shapeImage(input, { maxEdge, maxBytes });
          if ("linkOnly" in result) {
            expect(result.linkOnly).toBe("too-large");
            return;
          }
          expect(Math.max(result.width, result.height)).toBeLessThanOrEqual(Math.max(maxEdge, 0));
          expect(result.width).toBeLessThanOrEqual(w);
          expect(result.height).toBeLessThanOrEqual(h);
          expect(result.data.length).toBeLessThanOrEqual(maxBytes);
          // Aspect kept to within the rounding of one pixel on the short edge.
          const short = Math.min(result.width, result.height);
          if (short >= 8)
            expect(Math.abs(result.width / result.height - w / h)).toBeLessThan((w / h) * (2 / short) + 0.01);
          const meta = await decoded(result);
          expect(meta.exif).toBeUndefined();
          if (kind === "alpha") expect(meta.hasAlpha).toBe(true);
        },
      ),
      { numRuns: 20 },
    );
  }, 240_000);
});
