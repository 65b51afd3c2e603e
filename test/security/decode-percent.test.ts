/**
 * Attack: a large percent-encoded `data:` URL. Decoded byte by byte in JavaScript, 150 MiB held the
 * event loop for 8–9.5 s, so one tool call froze every other request of the server. The payload is
 * now decoded in windows with native searches, and the event loop turns between windows.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { percentDecodeBytes, percentDecodeTo } from "../../src/bridge/sources/data-url.js";
import { codeOf, codeOfSync, sha256 } from "../support/helpers.js";
import { tempLeftovers } from "../support/temp-leftovers.js";

const MiB = 1024 * 1024;
/**
 * Longest the event loop may stand still while a payload is decoded. A bound, not a performance
 * target: the old decoder stood still for 1.9 to 9.6 s on these inputs; a window takes a few ms, and the
 * rest of the bound is room for garbage collection and a busy 2-core machine running other suites.
 */
const MAX_STALL_MS = 750;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-sec-percent-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

/** Runs `work` while a 1 ms interval timer measures the longest gap between its ticks. */
async function longestStall(work: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  try {
    await work();
    const now = performance.now();
    return Math.max(longest, now - last);
  } finally {
    clearInterval(ticker);
  }
}

/**
 * The string as a server gets it: out of `JSON.parse` of a tool call, one flat string (a string built
 * by concatenation would make the first native search flatten it, which is the test's cost, not ours).
 */
function asReceived(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}

/** Every byte as `%XX`: the densest percent-encoding, three characters per byte. */
function percentEncodeAll(bytes: Buffer): string {
  const hex = Buffer.from("0123456789ABCDEF");
  const out = Buffer.allocUnsafe(bytes.length * 3);
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i] as number;
    out[i * 3] = 0x25;
    out[i * 3 + 1] = hex[byte >> 4] as number;
    out[i * 3 + 2] = hex[byte & 15] as number;
  }
  return out.toString("latin1");
}

describe("attack: a huge percent-encoded data: URL must not freeze the event loop", () => {
  it("decodes 32 MiB of %XX escapes correctly while the event loop keeps turning", async () => {
    const bytes = Buffer.alloc(32 * MiB);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + (i >> 11)) & 0xff;
    const url = asReceived(`data:application/octet-stream;name=big.bin,${percentEncodeAll(bytes)}`);
    const bridge = new FileBridge({ tmpDir: join(dir, "tmp"), maxBytes: 64 * MiB });
    let file: Awaited<ReturnType<FileBridge["resolve"]>> | undefined;
    const stall = await longestStall(async () => {
      file = await bridge.resolve(url, { scope: "attacker" });
    });
    expect(file?.size).toBe(bytes.length);
    expect(sha256(await readFile(file?.path as string))).toBe(sha256(bytes));
    await file?.dispose();
    expect(stall).toBeLessThan(MAX_STALL_MS);
  });

  it("keeps turning on the worst mix: one literal character between every two escapes", async () => {
    // Runs of escapes are decoded natively; alternating input defeats that and costs the most per byte.
    const unit = "a%41";
    const url = asReceived(`data:,${unit.repeat(4 * MiB)}`);
    const bridge = new FileBridge({ tmpDir: join(dir, "tmp"), maxBytes: 64 * MiB });
    let file: Awaited<ReturnType<FileBridge["resolve"]>> | undefined;
    const stall = await longestStall(async () => {
      file = await bridge.resolve(url, { scope: "attacker" });
    });
    expect(file?.size).toBe(8 * MiB);
    expect((await readFile(file?.path as string)).subarray(0, 6).toString()).toBe("aAaAaA");
    await file?.dispose();
    expect(stall).toBeLessThan(MAX_STALL_MS);
  });

  it("refuses a bad escape anywhere, also one cut by a window boundary, and leaves no file", async () => {
    const bridge = new FileBridge({ tmpDir: join(dir, "tmp"), maxBytes: 64 * MiB });
    for (const at of [0, 1, 2, 256 * 1024 - 1, 256 * 1024, 256 * 1024 + 1, 3 * MiB]) {
      const good = "%41".repeat(MiB + 1);
      const broken = `${good.slice(0, at)}%G${good.slice(at)}`;
      expect(await codeOf(bridge.resolve(`data:,${broken}`, { scope: "s" }))).toBe("INVALID_DATA_URL");
    }
    expect(await codeOf(bridge.resolve(`data:,${"%41".repeat(MiB)}%4`, { scope: "s" }))).toBe(
      "INVALID_DATA_URL",
    );
    expect(await tempLeftovers(join(dir, "tmp"))).toEqual([]);
  });
});

/** The decoded bytes of `payload` as the chunked decoder hands them to a sink. */
async function chunked(payload: string, windowChars: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  await percentDecodeTo(
    payload,
    { write: async (chunk) => void parts.push(Buffer.from(chunk)) },
    windowChars,
  );
  return Buffer.concat(parts);
}

describe("percent-decoding (properties)", () => {
  /** Text made of literals (ASCII, non-ASCII, astral), escapes of any byte, and runs of escapes. */
  const piece = fc.oneof(
    fc.string({ maxLength: 6 }).map((s) => s.replaceAll("%", "")),
    fc.constantFrom("é", "😀", "中", "\u0000", " "),
    fc.integer({ min: 0, max: 255 }).map((b) => `%${b.toString(16).padStart(2, "0")}`),
    fc.uint8Array({ minLength: 2, maxLength: 12 }).map((b) => percentEncodeAll(Buffer.from(b))),
    fc.integer({ min: 0, max: 255 }).map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`),
  );

  it("matches a reference decoder at every window size", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(piece, { maxLength: 30 }),
        fc.integer({ min: 1, max: 40 }),
        async (pieces, size) => {
          const payload = pieces.join("");
          const expected = referenceDecode(payload);
          expect(percentDecodeBytes(payload).equals(expected)).toBe(true);
          expect((await chunked(payload, size)).equals(expected)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("inverts percent-encoding of any bytes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 300 }),
        fc.integer({ min: 1, max: 64 }),
        async (bytes, size) => {
          const encoded = percentEncodeAll(Buffer.from(bytes));
          expect((await chunked(encoded, size)).equals(Buffer.from(bytes))).toBe(true);
        },
      ),
    );
  });

  it("refuses exactly the strings with a malformed escape, with INVALID_DATA_URL", async () => {
    const chars = fc.constantFrom("%", "4", "1", "g", "F", "a", "é");
    await fc.assert(
      fc.asyncProperty(
        fc.array(chars, { maxLength: 12 }),
        fc.integer({ min: 1, max: 8 }),
        async (list, size) => {
          const payload = list.join("");
          const valid = /^(?:[^%]|%[0-9A-Fa-f]{2})*$/.test(payload);
          expect(codeOfSync(() => percentDecodeBytes(payload))).toBe(valid ? "OK" : "INVALID_DATA_URL");
          expect(await codeOf(chunked(payload, size))).toBe(valid ? "OK" : "INVALID_DATA_URL");
        },
      ),
      { numRuns: 1000 },
    );
  });
});

/** The obvious decoder, one character at a time (what the library did before, minus the speed). */
function referenceDecode(payload: string): Buffer {
  const out: number[] = [];
  for (let i = 0; i < payload.length; ) {
    if (payload[i] === "%") {
      out.push(Number.parseInt(payload.slice(i + 1, i + 3), 16));
      i += 3;
    } else {
      const code = payload.codePointAt(i) as number;
      const char = String.fromCodePoint(code);
      out.push(...Buffer.from(char, "utf8"));
      i += char.length;
    }
  }
  return Buffer.from(out);
}
