/**
 * Attack: a line-wrapped (MIME, 76 columns) base64 data URL. The decoder stripped the line breaks
 * into a copy of the whole text and decoded again from the start: 100 MiB cost +442 MiB of memory
 * (clean base64: +41 MiB). Now whitespace is skipped window by window, never copied away.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { callFoldersRefilled } from "../../src/bridge/call-folders.js";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import {
  assertBase64Fits,
  base64DecodedLength,
  decodeBase64Plan,
  planBase64,
} from "../../src/bridge/sources/base64.js";
import { parseDataUrl } from "../../src/bridge/sources/data-url.js";
import { codeOf, codeOfSync, sha256 } from "../support/helpers.js";

const MiB = 1024 * 1024;
/**
 * The most memory (V8 heap plus Buffers) resolving a 64 MiB wrapped payload may add, as a bound and
 * not a target: about two 4 MiB windows in flight, the writer's queue (8 MiB) and garbage not yet
 * collected. A copy of the text alone would be 87 MiB; the old decoder added several of them.
 */
const MAX_GROWTH = 64 * MiB;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-sec-wrapped-"));
});
afterEach(async () => {
  await callFoldersRefilled(join(dir, "tmp")); // no pool refill racing the removal
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

/** MIME-style base64: lines of 76 characters ending in CRLF. */
function wrap(base64: string, eol = "\r\n", width = 76): string {
  const lines: string[] = [];
  for (let i = 0; i < base64.length; i += width) lines.push(base64.slice(i, i + width));
  return `${lines.join(eol)}${eol}`;
}

/** The string as a server gets it: one flat string out of `JSON.parse`. */
function asReceived(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}

function used(): number {
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

/** Runs `work` and returns how far heap + Buffers rose above where they started, sampled every 1 ms. */
async function peakGrowth(work: () => Promise<unknown>): Promise<number> {
  (globalThis as { gc?: () => void }).gc?.();
  const before = used();
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, used());
  }, 1);
  try {
    await work();
    return Math.max(peak, used()) - before;
  } finally {
    clearInterval(sampler);
  }
}

describe("attack: a line-wrapped base64 data URL must not be copied whole", () => {
  it("decodes 64 MiB wrapped at 76 columns with bounded extra memory", async () => {
    const bytes = randomBytes(64 * MiB);
    const url = asReceived(
      `data:application/octet-stream;name=w.bin;base64,${wrap(bytes.toString("base64"))}`,
    );
    const bridge = new FileBridge({ tmpDir: join(dir, "tmp"), maxBytes: 128 * MiB });
    let file: Awaited<ReturnType<FileBridge["resolve"]>> | undefined;
    const growth = await peakGrowth(async () => {
      file = await bridge.resolve(url, { scope: "s" });
    });
    console.log(`wrapped 64 MiB: +${(growth / MiB).toFixed(1)} MiB`);
    expect(file?.size).toBe(bytes.length);
    expect(file?.sha256).toBe(sha256(bytes));
    expect(sha256(await readFile(file?.path as string))).toBe(sha256(bytes));
    await file?.dispose();
    expect(growth).toBeLessThan(MAX_GROWTH);
  });

  it("refuses a wrapped payload over the cap before decoding, from its exact size", async () => {
    const bytes = randomBytes(3 * MiB);
    const wrapped = wrap(bytes.toString("base64"));
    const bridge = new FileBridge({ tmpDir: join(dir, "tmp"), maxBytes: bytes.length });
    // Exactly the cap: accepted although whitespace makes the upper bound larger.
    const ok = await bridge.resolve(`data:;base64,${wrapped}`, { scope: "s" });
    expect(ok.size).toBe(bytes.length);
    await ok.dispose();
    const small = new FileBridge({ tmpDir: join(dir, "tmp"), maxBytes: bytes.length - 1 });
    expect(await codeOf(small.resolve(`data:;base64,${wrapped}`, { scope: "s" }))).toBe("FILE_TOO_LARGE");
  });

  it("refuses a stray character anywhere in wrapped text, also across window edges", async () => {
    const text = wrap(randomBytes(200_000).toString("base64"));
    for (const at of [0, 77, 4095, 4096, 4097, 150_000, text.length - 3]) {
      const broken = `${text.slice(0, at)}*${text.slice(at + 1)}`;
      const plan = planBase64(broken);
      expect(codeOfSync(() => [...decodeBase64Plan(plan, 3000)])).toBe("INVALID_BASE64");
    }
  });
});

describe("streaming decoding (properties)", () => {
  const whitespace = fc.constantFrom(" ", "\n", "\r\n", "\t", "\f", "  \n");

  it("decodes any bytes wrapped anyhow, in any window size, like the clean text", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 400 }),
        fc.array(fc.tuple(fc.nat(), whitespace), { maxLength: 20 }),
        fc.integer({ min: 1, max: 64 }),
        fc.boolean(),
        (bytes, breaks, chunkBytes, url) => {
          let text = Buffer.from(bytes).toString(url ? "base64url" : "base64");
          for (const [at, ws] of breaks) {
            const where = text.length === 0 ? 0 : at % (text.length + 1);
            text = text.slice(0, where) + ws + text.slice(where);
          }
          const plan = planBase64(text);
          expect(base64DecodedLength(text)).toBe(bytes.length);
          expect(assertBase64Fits(plan, bytes.length).byteLength).toBe(bytes.length);
          const chunks = [...decodeBase64Plan(plan, chunkBytes)];
          expect(Buffer.concat(chunks).equals(Buffer.from(bytes))).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("takes %3D padding in data URLs, wrapped or not, and nowhere else", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 100 }), fc.boolean(), (bytes, wrapped) => {
        const clean = Buffer.from(bytes).toString("base64");
        const body = (wrapped ? wrap(clean, "\n", 8) : clean).replace(/=/g, "%3D");
        const parsed = parseDataUrl(`data:;base64,${body}`);
        const chunks = [...decodeBase64Plan(parsed.plan as ReturnType<typeof planBase64>, 16)];
        expect(Buffer.concat(chunks).equals(Buffer.from(bytes))).toBe(true);
        if (clean.endsWith("="))
          expect(codeOfSync(() => [...decodeBase64Plan(planBase64(body))])).toBe("INVALID_BASE64");
      }),
    );
  });

  it("refuses misplaced padding whatever the whitespace", () => {
    for (const text of ["aG=k", "aGk=\n=", "aGk= x", "aG==\nbG8=", "====", "aGVsbG8===", "aGU==\n"]) {
      expect(codeOfSync(() => [...decodeBase64Plan(planBase64(text), 3)])).toBe("INVALID_BASE64");
    }
  });
});
