/**
 * Shapes of an upload with no declared digest, each alone on the request body (`BENCH_PROFILE=1`
 * steps of `bench/workerd.ts`, run inside workerd): which way of hashing the bytes while they go to
 * R2 costs the least. Session 18 measured them (docs/performance.md) before `r2Store` took the last.
 */
import { createHash } from "node:crypto";
import type { R2BucketBinding } from "../src/cloudflare/bindings.js";
import { largeChunks } from "../src/internal/web-chunks.js";

const MiB = 1024 * 1024;

type DigestStream = WritableStream<Uint8Array> & { digest: Promise<ArrayBuffer> };
const digestStream = (): DigestStream =>
  new (crypto as unknown as { DigestStream: new (algorithm: string) => DigestStream }).DigestStream(
    "SHA-256",
  );
const fixedLengthStream = (size: number): TransformStream<Uint8Array, Uint8Array> =>
  new (
    globalThis as unknown as {
      FixedLengthStream: new (size: number) => TransformStream<Uint8Array, Uint8Array>;
    }
  ).FixedLengthStream(size);

/** Hands each 1 MiB chunk of `stream` (BYOB reads) to `each`, awaited. */
async function eachMiB(
  stream: ReadableStream<Uint8Array>,
  each: (chunk: Uint8Array) => unknown,
): Promise<void> {
  const chunks = largeChunks(stream, MiB);
  for (let chunk = await chunks.read(); chunk; chunk = await chunks.read()) await each(chunk);
}

/** Runs the shape `step` on the request's body; `false` for an unknown step. */
export async function uploadShape(
  bucket: R2BucketBinding,
  step: string,
  key: string,
  request: Request,
): Promise<boolean> {
  const body = request.body as ReadableStream<Uint8Array>;
  const size = Number(request.headers.get("content-length"));
  switch (step) {
    case "digest-only": {
      // A native DigestStream alone, piped from the body (native to native).
      const digest = digestStream();
      await body.pipeTo(digest);
      await digest.digest;
      return true;
    }
    case "tee-put": {
      // The body teed: one branch straight into R2, the other piped into a native DigestStream.
      const [toR2, toHash] = body.tee();
      const digest = digestStream();
      await Promise.all([bucket.put(key, toR2), toHash.pipeTo(digest)]);
      await digest.digest;
      return true;
    }
    case "tee-fixed": {
      // The same, the R2 branch piped through a FixedLengthStream.
      const [toR2, toHash] = body.tee();
      const digest = digestStream();
      const fixed = fixedLengthStream(size);
      await Promise.all([
        bucket.put(key, fixed.readable),
        toR2.pipeTo(fixed.writable),
        toHash.pipeTo(digest),
      ]);
      await digest.digest;
      return true;
    }
    case "put-then-hash": {
      // Straight into R2, then the stored object read back through a native DigestStream.
      await bucket.put(key, body);
      const object = (await bucket.get(key)) as unknown as { body: ReadableStream<Uint8Array> };
      const digest = digestStream();
      await object.body.pipeTo(digest);
      await digest.digest;
      return true;
    }
    case "byob-drain":
    case "byob-hash": {
      // The body read in 1 MiB BYOB reads, hashed with node:crypto or not.
      const hash = step === "byob-hash" ? createHash("sha256") : undefined;
      await eachMiB(body, (chunk) => hash?.update(chunk));
      hash?.digest("hex");
      return true;
    }
    case "byob-digest": {
      // 1 MiB BYOB reads, each written (awaited) into a native DigestStream.
      const digest = digestStream();
      const writer = digest.getWriter();
      await eachMiB(body, (chunk) => writer.write(chunk));
      await writer.close();
      await digest.digest;
      return true;
    }
    case "tee-byob": {
      // Teed: one branch straight into R2, the other read in 1 MiB reads and hashed.
      const [toR2, toHash] = body.tee();
      const hash = createHash("sha256");
      await Promise.all([bucket.put(key, toR2), eachMiB(toHash, (chunk) => hash.update(chunk))]);
      hash.digest("hex");
      return true;
    }
    case "byob-fixed": {
      // 1 MiB reads, hashed, each written (awaited) into a FixedLengthStream that R2 reads.
      const hash = createHash("sha256");
      const fixed = fixedLengthStream(size);
      const writer = fixed.writable.getWriter();
      const putting = bucket.put(key, fixed.readable);
      await eachMiB(body, async (chunk) => {
        hash.update(chunk);
        await writer.write(chunk);
      });
      await writer.close();
      await putting;
      hash.digest("hex");
      return true;
    }
    case "fixed-fresh":
    case "fixed-reuse":
    case "fixed-reuse-4m":
    case "fixed-reuse-nohash": {
      // As r2Store's hashed put: 1 MiB BYOB reads (16 KiB at least), hashed, one write in flight
      // into a FixedLengthStream; a fresh buffer per read, or the two buffers reused in turn (4 MiB
      // ones for `fixed-reuse-4m`).
      const hash = step === "fixed-reuse-nohash" ? undefined : createHash("sha256");
      const fixed = fixedLengthStream(size);
      const writer = fixed.writable.getWriter();
      const putting = bucket.put(key, fixed.readable);
      const reader = body.getReader({ mode: "byob" }) as ReadableStreamBYOBReader & {
        readAtLeast(min: number, view: Uint8Array): Promise<ReadableStreamReadResult<Uint8Array>>;
      };
      const reuse = step !== "fixed-fresh";
      let spare: ArrayBuffer | undefined;
      let writing: Promise<unknown> = Promise.resolve();
      let last: Uint8Array | undefined;
      for (;;) {
        const view = new Uint8Array(
          reuse && spare ? spare : new ArrayBuffer(step.endsWith("4m") ? 4 * MiB : MiB),
        );
        const { done, value } = await reader.readAtLeast(16 * 1024, view);
        if (value && value.byteLength > 0) {
          hash?.update(value);
          await writing;
          if (reuse && last) spare = last.buffer as ArrayBuffer;
          writing = writer.write(value);
          last = value;
        }
        if (done) break;
      }
      await writing;
      await writer.close();
      await putting;
      hash?.digest("hex");
      return true;
    }
  }
  return false;
}
