/**
 * The Worker `bench/workerd.ts` runs in workerd (through miniflare): our file routes on an `r2Store`
 * and a `durableObjectState`, a plain handler that streams the request body straight into R2 (the
 * baseline), and signing loops that run inside the isolate (`node:crypto` through `nodejs_compat`,
 * and `crypto.subtle`). Timing is done on the Node side: workerd's clocks do not advance while a
 * request computes.
 */
import { createHash, createHmac } from "node:crypto";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { durableObjectState, r2Store } from "../src/cloudflare/index.js";
import { R2PartSink } from "../src/cloudflare/r2-part-sink.js";
import { createFileRoutes, SignedUrlMinter, UploadHandleResolver } from "../src/index.js";
import { largeChunks, streamOfChunks } from "../src/internal/web-chunks.js";
import { uploadShape } from "./_workerd-shapes.js";

export { FileBridgeStateObject } from "../src/cloudflare/state-object.js";

interface Env {
  FILES: Parameters<typeof r2Store>[0]["bucket"];
  STATE: Parameters<typeof durableObjectState>[0]["namespace"];
}

const MiB = 1024 * 1024;
const SECRET = "bench-secret-bench-secret-bench-secret-0123";
const KEY_SECRET = "bench-scope-key-secret-bench-scope-key-0123";
const FILE_ID = "01jabcdefghjkmnpqrstvwxyz0";

let built: ReturnType<typeof build> | undefined;
function build(env: Env, origin: string) {
  const store = r2Store({ bucket: env.FILES, keySecret: KEY_SECRET });
  const state = durableObjectState({ namespace: env.STATE });
  const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: origin, state });
  const routes = createFileRoutes({ store, minter, state, maxBytes: 256 * MiB });
  const uploads = new UploadHandleResolver({ store, minter, state, maxBytes: 256 * MiB, maxFiles: 1 });
  return { store, minter, routes, uploads };
}

const encoder = new TextEncoder();
let subtleKey: Promise<CryptoKey> | undefined;

function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** Runs `count` signing operations of one kind; answers how many succeeded. */
async function sign(env: Env, origin: string, kind: string, count: number): Promise<number> {
  built ??= build(env, origin);
  const { minter } = built;
  subtleKey ??= crypto.subtle.importKey(
    "raw",
    encoder.encode(SECRET),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign", "verify"],
  );
  const key = await subtleKey;
  const token = (await minter.mint({ scope: "bench", fileId: FILE_ID, action: "download" })).token;
  const input = token.slice(0, token.lastIndexOf("."));
  const signature = Uint8Array.from(
    atob(
      token
        .slice(token.lastIndexOf(".") + 1)
        .replaceAll("-", "+")
        .replaceAll("_", "/"),
    ),
    (c) => c.charCodeAt(0),
  );
  // The two paths agree before anything is timed.
  const web = base64url(new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(input))));
  if (`${input}.${web}` !== token) throw new Error("Web Crypto signature differs from the minter's");
  let ok = 0;
  for (let i = 0; i < count; i++) {
    switch (kind) {
      case "mint":
        ok += (await minter.mint({ scope: "bench", fileId: `${FILE_ID}${i}`, action: "download" })).token
          ? 1
          : 0;
        break;
      case "verify":
        ok += (await minter.verify(token, { action: "download" })).scope === "bench" ? 1 : 0;
        break;
      case "node-hmac":
        ok += createHmac("sha256", SECRET).update(input).digest().length === 32 ? 1 : 0;
        break;
      case "subtle-sign":
        ok += (await crypto.subtle.sign("HMAC", key, encoder.encode(input))).byteLength === 32 ? 1 : 0;
        break;
      case "subtle-verify":
        ok += (await crypto.subtle.verify("HMAC", key, signature, encoder.encode(input))) ? 1 : 0;
        break;
      default:
        throw new Error(`unknown kind ${kind}`);
    }
  }
  return ok;
}

/** The upload's steps one at a time (`BENCH_PROFILE=1`): where our route's time goes. */
async function profile(env: Env, step: string, request: Request): Promise<void> {
  const key = `profile/${step}/${crypto.randomUUID()}`;
  const body = request.body as ReadableStream<Uint8Array>;
  switch (step) {
    case "drain": {
      const reader = body.getReader();
      while (!(await reader.read()).done);
      return;
    }
    case "hash": {
      const hash = createHash("sha256");
      const reader = body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        hash.update(value);
      }
      hash.digest("hex");
      return;
    }
    case "node-drain": {
      for await (const _ of Readable.fromWeb(body as never));
      return;
    }
    case "part-sink": {
      const sink = new R2PartSink({
        bucket: env.FILES,
        key,
        partSize: 8 * MiB,
        queueSize: 2,
        error: (_a, cause) => cause as never,
      });
      await pipeline(Readable.fromWeb(body as never), sink);
      return;
    }
    case "store-put":
    case "store-put-sized":
    case "store-put-wrapped":
    case "store-put-chunks": {
      built ??= build(env, "http://bench.test");
      const size = Number(request.headers.get("content-length"));
      // `store-put-wrapped`: the body in 1 MiB chunks through a stream made in JavaScript, as the
      // routes hand it to the store when no digest is declared.
      // `store-put-chunks`: the same 1 MiB reads waiting for 16 KiB at least, handed over as the
      // routes hand them now (`streamOfChunks`: the store reads them directly and reuses buffers).
      let source: ReadableStream<Uint8Array> = body;
      if (step === "store-put-chunks") source = streamOfChunks(largeChunks(body, MiB, 16 * 1024));
      if (step === "store-put-wrapped") {
        const chunks = largeChunks(body, MiB, 16 * 1024);
        source = new ReadableStream<Uint8Array>(
          {
            async pull(controller) {
              const chunk = await chunks.read();
              if (chunk) controller.enqueue(chunk);
              else controller.close();
            },
          },
          { highWaterMark: 0 },
        );
      }
      await built.store.put(source, {
        scope: "bench",
        name: "p.bin",
        maxBytes: 256 * MiB,
        ...(step === "store-put" ? {} : { expectedSize: size }),
      });
      return;
    }
  }
  if (!(await uploadShape(env.FILES, step, key, request))) throw new Error(`unknown step ${step}`);
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname.startsWith("/profile/")) {
      await profile(env, url.pathname.slice("/profile/".length), request);
      return new Response(null, { status: 201 });
    }
    if (url.pathname.startsWith("/plain-sha256/")) {
      // The baseline with R2 checking a declared digest (what the simulator's own hashing costs).
      await env.FILES.put(url.pathname.slice("/plain-sha256/".length), request.body, {
        sha256: request.headers.get("x-content-sha256") ?? "",
      });
      return new Response(null, { status: 201 });
    }
    if (url.pathname.startsWith("/plain/")) {
      // The baseline: the request body streamed into R2 as it is (its length is known).
      await env.FILES.put(url.pathname.slice("/plain/".length), request.body);
      return new Response(null, { status: 201 });
    }
    if (url.pathname === "/ticket") {
      built ??= build(env, url.origin);
      return Response.json(await built.uploads.createTicket("bench"));
    }
    if (url.pathname === "/sign") {
      const count = Number(url.searchParams.get("n"));
      const ok = await sign(env, url.origin, url.searchParams.get("kind") ?? "", count);
      return Response.json({ ok });
    }
    built ??= build(env, url.origin);
    return (await built.routes(request)) ?? new Response(null, { status: 404 });
  },
};
