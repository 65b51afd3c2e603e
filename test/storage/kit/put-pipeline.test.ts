import { Readable, Writable } from "node:stream";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FileBridgeError } from "../../../src/errors/file-bridge-error.js";
import { newId } from "../../../src/internal/ids.js";
import {
  decodeCursor,
  encodeCursor,
  measureBytes,
  planPut,
  resolveRange,
  streamPut,
  upperBound,
} from "../../../src/storage/kit/put-pipeline.js";
import { codeOfSync, sha256 } from "../../support/helpers.js";

/** Splits bytes at the given cut points. */
function split(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const parts: Uint8Array[] = [];
  let last = 0;
  for (const point of [...points, bytes.length]) {
    parts.push(bytes.subarray(last, point));
    last = point;
  }
  return parts;
}

function nullSink(): Writable {
  return new Writable({
    write(_chunk, _encoding, callback) {
      callback();
    },
  });
}

describe("put pipeline", () => {
  it("size, sha256 and the cap do not depend on how the bytes are chunked (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 5000 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        fc.option(fc.nat({ max: 6000 }), { nil: undefined }),
        async (bytes, cuts, maxBytes) => {
          const plan = planPut({ scope: "s", name: "x", maxBytes }, Date.now());
          const streamed = await streamPut(Readable.from(split(bytes, cuts)), plan, nullSink()).then(
            (measure) => ({ size: measure.size, sha256: measure.sha256 }),
            (error: FileBridgeError) => error.code,
          );
          const direct = (() => {
            try {
              const measure = measureBytes(bytes, plan);
              return { size: measure.size, sha256: measure.sha256 };
            } catch (error) {
              return (error as FileBridgeError).code;
            }
          })();
          const over = maxBytes !== undefined && bytes.length > maxBytes;
          expect(streamed).toEqual(over ? "FILE_TOO_LARGE" : { size: bytes.length, sha256: sha256(bytes) });
          expect(direct).toEqual(streamed);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("cursors round-trip every id; any other string is INVALID_CURSOR, never another error (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 47 }), (time) => {
        const id = newId(time);
        return decodeCursor(encodeCursor(id)) === id;
      }),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 100 }), (input) => {
        const code = codeOfSync(() => decodeCursor(input));
        if (code === "OK") return encodeCursor(decodeCursor(input)) === input;
        return code === "INVALID_CURSOR";
      }),
      { numRuns: 2000 },
    );
  });

  it("ranges are inside the file or RANGE_NOT_SATISFIABLE (property)", () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 1000 }),
        fc.integer({ min: -5, max: 1200 }),
        fc.option(fc.integer({ min: -5, max: 1200 }), { nil: undefined }),
        (size, start, end) => {
          const range = end === undefined ? { start } : { start, end };
          const code = codeOfSync(() => resolveRange(range, size));
          const valid = start >= 0 && start < size && (end === undefined || end >= start);
          if (!valid) return code === "RANGE_NOT_SATISFIABLE";
          const resolved = resolveRange(range, size)!;
          return resolved.start === start && resolved.end === Math.min(end ?? size - 1, size - 1);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("upperBound finds the first id greater than the given one (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 50 }), fc.string(), (values, probe) => {
        const sorted = [...values].sort();
        const at = upperBound(sorted, probe);
        return sorted.slice(0, at).every((v) => v <= probe) && sorted.slice(at).every((v) => v > probe);
      }),
    );
  });
});
