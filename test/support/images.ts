/**
 * Test images made with sharp itself: a screenshot (flat colours, text, thin lines: the kind a
 * browser tool returns), a camera photo (noise that compresses like one, EXIF orientation and GPS),
 * images with alpha, an animated GIF, an SVG, and a decompression bomb.
 */
import { crc32 } from "node:zlib";
import sharp from "sharp";

/** An SVG page of `width` × `height`: a title bar, boxes and lines of small text. */
export function screenshotSvg(width: number, height: number): string {
  const lines: string[] = [];
  const size = Math.max(12, Math.round(height / 60));
  for (let y = size * 4, i = 0; y < height - size; y += size * 1.6, i += 1) {
    lines.push(
      `<text x="${size * 2}" y="${y}" font-family="sans-serif" font-size="${size}" fill="#222">Line ${i}: the quarterly figures rose by ${i % 17} percent in region ${i % 5}</text>`,
    );
  }
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<rect width="100%" height="${size * 2.5}" fill="#2d6cdf"/>`,
    `<rect x="${width * 0.6}" y="${size * 4}" width="${width * 0.35}" height="${height * 0.4}" fill="#f4e9c8" stroke="#c99a2e"/>`,
    ...lines,
    "</svg>",
  ].join("");
}

/** A PNG screenshot of `width` × `height`. */
export async function screenshotPng(width: number, height: number): Promise<Buffer> {
  return sharp(Buffer.from(screenshotSvg(width, height)), { limitInputPixels: false })
    .png()
    .toBuffer();
}

/**
 * A camera JPEG of `width` × `height` (stored pixels; `orientation` 6 shows it rotated a quarter
 * turn), with EXIF carrying a camera make and GPS coordinates, at `quality`.
 */
export async function cameraJpeg(
  width: number,
  height: number,
  options: { orientation?: number; quality?: number } = {},
): Promise<Buffer> {
  return sharp({
    create: {
      width,
      height,
      channels: 3,
      background: { r: 90, g: 140, b: 200 },
      noise: { type: "gaussian", mean: 128, sigma: 40 },
    },
    limitInputPixels: false,
  })
    .jpeg({ quality: options.quality ?? 90 })
    .withExif({
      IFD0: { Make: "TestCam", Model: "GPS-1" },
      IFD3: {
        GPSLatitudeRef: "N",
        GPSLatitude: "51/1 30/1 0/1",
        GPSLongitudeRef: "W",
        GPSLongitude: "0/1 7/1 0/1",
      },
    })
    .withMetadata({ orientation: options.orientation ?? 1 })
    .toBuffer();
}

/** A PNG with a transparent background and an opaque square in the middle. */
export async function alphaPng(width: number, height: number): Promise<Buffer> {
  const square = await sharp({
    create: {
      width: Math.ceil(width / 2),
      height: Math.ceil(height / 2),
      channels: 4,
      background: "#c0392b",
    },
  })
    .png()
    .toBuffer();
  return sharp({ create: { width, height, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
    .composite([{ input: square, gravity: "centre" }])
    .png()
    .toBuffer();
}

/** An animated GIF of `frames` frames of `width` × `height`. */
export async function animatedGif(width: number, height: number, frames = 3): Promise<Buffer> {
  const colours = ["#e74c3c", "#27ae60", "#2980b9", "#f1c40f"];
  const pages = await Promise.all(
    Array.from({ length: frames }, (_, i) =>
      sharp({ create: { width, height, channels: 3, background: colours[i % colours.length] as string } })
        .png()
        .toBuffer(),
    ),
  );
  return sharp(pages, { join: { animated: true } })
    .gif()
    .toBuffer();
}

/**
 * A decompression bomb: a tiny PNG whose header declares `side` × `side` pixels (a 1 × 1 image with
 * its IHDR rewritten and its CRC fixed), so only a decoder that trusts the header is fooled.
 */
export async function bombPng(side: number): Promise<Buffer> {
  const png = Buffer.from(
    await sharp({ create: { width: 1, height: 1, channels: 3, background: "#000" } })
      .png()
      .toBuffer(),
  );
  // Signature (8), IHDR length (4), "IHDR" (4), width (4), height (4), …, CRC over type + data.
  png.writeUInt32BE(side, 16);
  png.writeUInt32BE(side, 20);
  png.writeUInt32BE(crc32(png.subarray(12, 29)), 29);
  return png;
}

/**
 * A JPEG's segments before its first scan (SOI up to SOS): where EXIF, XMP and every other
 * metadata segment lives. A test that looks for a short marker such as `GPS` looks here; in the
 * entropy-coded scan data of a noisy image any three bytes turn up by chance.
 */
export function jpegMetadataOf(jpeg: Uint8Array): Buffer {
  const bytes = Buffer.from(jpeg.buffer, jpeg.byteOffset, jpeg.byteLength);
  if (bytes[0] !== 0xff || bytes[1] !== 0xd8) throw new Error("not a JPEG (no SOI marker)");
  let at = 2;
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) throw new Error(`not a JPEG segment at byte ${at}`);
    const marker = bytes[at + 1] as number;
    if (marker === 0xda) return bytes.subarray(0, at);
    at += 2 + bytes.readUInt16BE(at + 2);
  }
  throw new Error("a JPEG with no scan (SOS marker)");
}
