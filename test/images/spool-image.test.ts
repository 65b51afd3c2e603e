/**
 * A stream is shaped with bounded memory (issue 44): it is spooled to a private file in a fresh 0700
 * folder under `tmpDir`, shaped from that path, and the folder is gone afterwards — after a bomb,
 * an oversized or broken stream and an undecodable one too. A bomb is refused from the stream's
 * head, before the rest of the stream is read. Through `Artifacts` on a memory store (no local
 * path), the stored original goes the same way.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ShapedImage, shapeImage } from "../../src/images/index.js";
import { Artifacts, memoryStore } from "../../src/index.js";
import { bombPng, cameraJpeg, screenshotPng } from "../support/images.js";

let root: string;
let count = 0;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "mfb-spool-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A fresh temp folder for one case (its own, so "nothing left" means this case left nothing). */
const freshTmp = () => join(root, `tmp-${++count}`);
const leftIn = async (dir: string) => (existsSync(dir) ? readdir(dir) : []);

/** A stream of `bytes` in 16 KiB chunks that records, each time it is read, what `tmpDir` holds. */
function watchedStream(bytes: Buffer, tmpDir: string) {
  const seen: Array<{ folder: string; mode: number; files: string[] }> = [];
  let offset = 0;
  const stream = new Readable({
    async read() {
      for (const folder of await leftIn(tmpDir)) {
        const path = join(tmpDir, folder);
        seen.push({ folder, mode: (await stat(path)).mode & 0o777, files: await readdir(path) });
      }
      if (offset >= bytes.length) this.push(null);
      else {
        this.push(bytes.subarray(offset, offset + 16 * 1024));
        offset += 16 * 1024;
      }
    },
  });
  return { stream, seen };
}

describe("shapeImage from a stream: spooled to a private temp file, removed after", () => {
  it("a 12 MP camera JPEG by stream: written to one 0700 call folder under tmpDir, shaped from it, then removed", async () => {
    const jpeg = await cameraJpeg(4000, 3000, { orientation: 6 });
    const tmpDir = freshTmp();
    const { stream, seen } = watchedStream(jpeg, tmpDir);
    const image = (await shapeImage(stream, { tmpDir })) as ShapedImage;
    expect([image.width, image.height]).toEqual([1176, 1568]);
    expect((await sharp(image.data).metadata()).exif).toBeUndefined();
    // While the stream was read, its bytes went to one private folder of ours holding one file.
    const folders = new Set(seen.map((s) => s.folder));
    expect(folders.size).toBe(1);
    expect([...folders][0]).toMatch(/^call-\d+\./);
    expect(seen.every((s) => s.mode === 0o700)).toBe(true);
    expect(seen.at(-1)?.files).toEqual(["image"]);
    // The same answer as from the bytes, and nothing left.
    const fromBytes = (await shapeImage(jpeg)) as ShapedImage;
    expect(createHash("sha256").update(image.data).digest("hex")).toBe(
      createHash("sha256").update(fromBytes.data).digest("hex"),
    );
    expect(await leftIn(tmpDir)).toEqual([]);
  }, 120_000);

  it("a bomb by stream is refused from its head: FILE_TOO_LARGE reason pixels, the rest of the stream never read, nothing left", async () => {
    const bomb = await bombPng(30_000);
    const tmpDir = freshTmp();
    let served = 0;
    // The bomb's header, then 1 GiB of padding the stream would serve if asked.
    const padding = Buffer.alloc(64 * 1024);
    const stream = Readable.from(
      (function* () {
        yield bomb;
        for (let i = 0; i < 16_384; i += 1) {
          served += padding.length;
          yield padding;
        }
      })(),
    );
    await expect(shapeImage(stream, { tmpDir, maxInputBytes: 2 ** 31 })).rejects.toMatchObject({
      code: "FILE_TOO_LARGE",
      data: { reason: "pixels", width: 30_000, height: 30_000, limit: 100_000_000 },
    });
    expect(served).toBeLessThan(1024 * 1024);
    expect(stream.destroyed).toBe(true);
    expect(await leftIn(tmpDir)).toEqual([]);
  });

  it("a stream over maxInputBytes, one that fails half-way and one that is no image: the error, nothing left", async () => {
    const png = await screenshotPng(1200, 900);
    const tmpDir = freshTmp();
    await expect(shapeImage(Readable.from([png]), { tmpDir, maxInputBytes: 1000 })).rejects.toMatchObject({
      code: "FILE_TOO_LARGE",
      data: { limit: 1000 },
    });
    expect(await leftIn(tmpDir)).toEqual([]);
    const broken = new Readable({
      read() {
        this.destroy(new Error("connection reset"));
      },
    });
    broken.push(png.subarray(0, 200 * 1024));
    await expect(shapeImage(broken, { tmpDir })).rejects.toThrow("connection reset");
    expect(await leftIn(tmpDir)).toEqual([]);
    await expect(
      shapeImage(Readable.from([Buffer.from("not an image at all")]), { tmpDir }),
    ).rejects.toMatchObject({ code: "UNSUPPORTED_MEDIA_TYPE", data: { reason: "undecodable" } });
    expect(await leftIn(tmpDir)).toEqual([]);
  });

  it("refuses an empty tmpDir with INVALID_OPTION before reading the stream", async () => {
    const stream = Readable.from([Buffer.from("x")]);
    await expect(shapeImage(stream, { tmpDir: "" })).rejects.toMatchObject({
      code: "INVALID_OPTION",
      data: { option: "tmpDir" },
    });
    expect(stream.readableDidRead).toBe(false);
  });

  it("Artifacts on a memory store (no local path): the original is spooled under its tmpDir and removed", async () => {
    const tmpDir = freshTmp();
    const store = memoryStore();
    const artifacts = new Artifacts({ store, tmpDir });
    const png = await screenshotPng(3000, 2000);
    const shown = await artifacts.image({
      scope: "spool",
      bytes: png,
      name: "page.png",
      client: "claude-code",
    });
    expect(shown.shown).toMatchObject({ mimeType: "image/png", width: 1568, height: 1045 });
    expect(await leftIn(tmpDir)).toEqual([]);
  }, 60_000);
});
