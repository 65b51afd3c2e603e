import { Readable, Writable } from "node:stream";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FileBridgeError } from "../../../src/errors/file-bridge-error.js";
import { measureBytes } from "../../../src/storage/kit/put-meter.js";
import { streamPut } from "../../../src/storage/kit/put-pipeline.js";
import { planPut } from "../../../src/storage/kit/put-plan.js";
import { sha256 } from "../../support/helpers.js";

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
});
