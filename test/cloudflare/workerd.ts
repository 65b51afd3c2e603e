/**
 * Runs a test Worker in workerd through miniflare (both from npm, offline) and hands the Node side
 * stores that forward every call to the real drivers running inside it: the shared driver suites run
 * in Vitest on Node while `r2Store` and `durableObjectState` execute in workerd, on miniflare's
 * local R2 and Durable Object simulation.
 */
import { createReadStream } from "node:fs";
import { builtinModules } from "node:module";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { Readable as NodeReadable, PassThrough, pipeline } from "node:stream";
import { build } from "esbuild";
import { Miniflare, type MiniflareOptions } from "miniflare";
import pLimit from "p-limit";
import { FileBridgeError } from "../../src/errors/file-bridge-error.js";
import type {
  ByteRange,
  FileStore,
  ListOptions,
  ListPage,
  PutOptions,
  PutSource,
  StagedFile,
  StateSetOptions,
  StateStore,
  StoredFile,
} from "../../src/storage/types.js";

/** The compatibility date and flags the tests (and the example's wrangler.jsonc) use. */
export const COMPATIBILITY_DATE = "2026-07-01";
export const COMPATIBILITY_FLAGS = ["nodejs_compat"];

/**
 * Bundles a Worker entry for workerd (ESM, `node:*` left to `nodejs_compat`).
 *
 * @example
 * ```ts
 * const script = await bundleWorker("test/cloudflare/fixtures/suite-worker.ts");
 * ```
 */
export async function bundleWorker(entry: string, external: string[] = []): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    conditions: ["workerd", "worker", "browser", "import"],
    mainFields: ["module", "main"],
    // Node built-ins are left to workerd's `nodejs_compat` (bare names too: some dependencies
    // `require("fs")`).
    external: ["node:*", "cloudflare:*", ...builtinModules, ...external],
    logLevel: "silent",
  });
  return (result.outputFiles[0] as { text: string }).text;
}

/**
 * Starts workerd with a test Worker on an R2 bucket `FILES` and the state Durable Object `STATE`,
 * on the tests' compatibility date and flags. With `persist`, both are kept under that folder (so a
 * second start on the same folder is a restart: a new isolate over the same stored bytes and state);
 * `serviceBindings` are passed to miniflare as they are.
 *
 * @example
 * ```ts
 * const mf = await startWorker(await bundleWorker("test/cloudflare/fixtures/tus-worker.ts"), { persist: dir });
 * ```
 */
export async function startWorker(
  script: string,
  options: { persist?: string; serviceBindings?: MiniflareOptions["serviceBindings"] } = {},
): Promise<Miniflare> {
  const { persist, serviceBindings } = options;
  const mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: COMPATIBILITY_FLAGS,
    r2Buckets: ["FILES"],
    durableObjects: { STATE: { className: "FileBridgeStateObject", useSQLite: true } },
    ...(persist === undefined
      ? {}
      : { r2Persist: join(persist, "r2"), durableObjectsPersist: join(persist, "do") }),
    ...(serviceBindings === undefined ? {} : { serviceBindings }),
  });
  await mf.ready;
  return mf;
}

/** Statuses whose response has no body (a `Response` with one cannot be built). */
const NO_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * The response with its body read at once (the tests' answers are small). A `dispatchFetch` answer
 * whose body is never read keeps its connection into workerd busy; miniflare warns about exactly
 * this (`MINIFLARE_ASSERT_BODIES_CONSUMED`, which vitest.config.ts turns on for every test).
 */
async function whole(response: Response): Promise<Response> {
  const bytes = await response.arrayBuffer();
  const body = NO_BODY.has(response.status) ? null : bytes;
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/**
 * Requests to a started Worker (`worker()` is read at each call, so a restart is followed): `send`
 * any URL to it, `json` the answer to a path under `origin`.
 *
 * @example
 * ```ts
 * const { send, json } = workerRequests(() => mf, "http://tus.test");
 * const objects = await json<{ key: string }[]>("/test/objects");
 * ```
 */
export function workerRequests(worker: () => Miniflare | undefined, origin: string) {
  const send = async (url: string, init: RequestInit = {}): Promise<Response> =>
    whole((await (worker() as Miniflare).dispatchFetch(url, init as never)) as unknown as Response);
  const json = async <T>(path: string): Promise<T> => (await (await send(`${origin}${path}`)).json()) as T;
  return { send, json };
}

interface Pullable {
  next(): Promise<IteratorResult<unknown>>;
}

const ABORTED = Symbol("aborted");

/** A workerd running the suite Worker, and stores that call into it. */
export interface SuiteWorker {
  fileStore(now: () => number): FileStore;
  stateStore(now: () => number): StateStore;
  /** Every key in the local R2 bucket (read from Node through miniflare, for assertions). */
  bucketKeys(): Promise<string[]>;
  dispose(): Promise<void>;
}

let counter = 0;
const uid = () => `${process.pid}-${Date.now().toString(36)}-${counter++}`;

/**
 * Starts workerd with the suite Worker (`fixtures/suite-worker.ts`).
 *
 * @example
 * ```ts
 * const worker = await startSuiteWorker();
 * runFileStoreSuite("r2Store on workerd", (now) => worker.fileStore(now));
 * ```
 */
export async function startSuiteWorker(): Promise<SuiteWorker> {
  const script = await bundleWorker(join(import.meta.dirname, "fixtures/suite-worker.ts"));
  const sources = new Map<string, Pullable>();
  const localErrors = new Map<string, unknown>();
  const signals = new Map<string, AbortSignal>();

  async function pull(request: Request): Promise<Response> {
    const id = new URL(request.url).pathname.slice("/pull/".length);
    const source = sources.get(id);
    if (!source) return new Response(null, { headers: { "x-kind": "done" } });
    const signal = signals.get(id);
    try {
      const next = signal
        ? await Promise.race([
            source.next(),
            new Promise<typeof ABORTED>((resolve) => {
              if (signal.aborted) resolve(ABORTED);
              signal.addEventListener("abort", () => resolve(ABORTED), { once: true });
            }),
          ])
        : await source.next();
      if (next === ABORTED) return new Response(null, { headers: { "x-kind": "abort" } });
      if (next.done) {
        sources.delete(id);
        return new Response(null, { headers: { "x-kind": "done" } });
      }
      if (next.value instanceof Uint8Array) {
        return new Response(new Uint8Array(next.value), { headers: { "x-kind": "chunk" } });
      }
      return new Response(JSON.stringify(next.value), { headers: { "x-kind": "nonbytes" } });
    } catch (error) {
      sources.delete(id);
      const ref = uid();
      localErrors.set(ref, error);
      return Response.json(
        {
          code: error instanceof FileBridgeError ? error.code : undefined,
          message: String((error as Error)?.message ?? error),
          ref,
        },
        { headers: { "x-kind": "error" } },
      );
    }
  }

  const mf = await startWorker(script, { serviceBindings: { BRIDGE: pull } });

  // At most 32 calls in flight: miniflare's loopback into workerd resets connections past a few
  // hundred at once on a loaded machine. 32 still interleave every store operation inside workerd.
  const limit = pLimit(32);
  async function rpc(body: Record<string, unknown>): Promise<Response> {
    return limit(
      async () =>
        (await mf.dispatchFetch("http://suite/rpc", {
          method: "POST",
          body: JSON.stringify(body),
        })) as unknown as Response,
    );
  }

  async function result<T>(response: Response): Promise<T> {
    const json = (await response.json()) as {
      ok?: T;
      error?: { code?: string; message: string; data?: Record<string, unknown>; causeRef?: string };
    };
    if (!json.error) return json.ok as T;
    const { code, message, data, causeRef } = json.error;
    const cause = causeRef === undefined ? undefined : localErrors.get(causeRef);
    if (!code) throw new Error(message);
    throw new FileBridgeError(code as never, message, {
      ...(data ? { data } : {}),
      ...(cause === undefined ? {} : { cause }),
    });
  }

  function describeSource(source: PutSource, signal: AbortSignal | undefined): unknown {
    const described = describeSourceOnly(source);
    if (signal && (described as { type: string }).type === "pull")
      signals.set((described as { id: string }).id, signal);
    return described;
  }

  function describeSourceOnly(source: PutSource): unknown {
    if (source instanceof Uint8Array) {
      return { type: "bytes", b64: Buffer.from(source).toString("base64") };
    }
    if (
      typeof source === "object" &&
      source !== null &&
      "path" in source &&
      !(Symbol.asyncIterator in source)
    ) {
      if (typeof source.path !== "string" || source.path === "") return { type: "raw", value: source };
      // The suite's scratch files are on the Node side's disk: their bytes are pulled from here.
      const id = uid();
      const path = source.path;
      sources.set(
        id,
        (async function* () {
          yield* createReadStream(path);
        })(),
      );
      return { type: "pull", id, form: "iterable" };
    }
    if (typeof source === "object" && source !== null) {
      const form =
        source instanceof NodeReadable ? "readable" : source instanceof ReadableStream ? "web" : "iterable";
      const iterable = source as AsyncIterable<unknown>;
      if (typeof iterable[Symbol.asyncIterator] === "function") {
        const id = uid();
        sources.set(id, iterable[Symbol.asyncIterator]());
        return { type: "pull", id, form };
      }
    }
    return { type: "raw", value: source };
  }

  function describeOptions(options: PutOptions): Record<string, unknown> {
    const { signal, ...rest } = options;
    if (!signal) return rest;
    const ref = uid();
    if (!signal.aborted) {
      signal.addEventListener("abort", () => {
        void mf.dispatchFetch(`http://suite/abort/${ref}`).then((r) => r.text());
      });
    }
    return { ...rest, signalRef: ref, signalAborted: signal.aborted };
  }

  function fileStore(now: () => number): FileStore {
    const store = uid();
    const call = (method: string, ...args: unknown[]) =>
      rpc({ kind: "file", store, now: now(), method, args });
    const stagedOf = ({ file, handle }: { file: StoredFile; handle: string }): StagedFile => ({
      file,
      commit: async () =>
        result<StoredFile>(
          await rpc({ kind: "staged", store, now: now(), method: "commit", args: [handle] }),
        ),
      abort: async () => {
        await result(await rpc({ kind: "staged", store, now: now(), method: "abort", args: [handle] }));
      },
    });
    return {
      driver: "r2",
      async put(source: PutSource, options: PutOptions) {
        return result<StoredFile>(
          await call("put", describeSource(source, options?.signal), describeOptions(options)),
        );
      },
      async stage(source: PutSource, options: PutOptions) {
        return stagedOf(
          await result(
            await call("stage", describeSource(source, options?.signal), describeOptions(options)),
          ),
        );
      },
      async head(scope: string, id: string) {
        return result<StoredFile | null>(await call("head", scope, id));
      },
      async read(scope: string, id: string, range?: ByteRange): Promise<Readable | null> {
        const response = await call("read", scope, id, range);
        if (response.headers.get("x-null")) {
          await response.body?.cancel();
          return null;
        }
        if (response.headers.get("x-rpc") === "error") return result(response);
        // Read from at once (miniflare's check), as a stream: the bytes flow as the caller reads.
        const out = new PassThrough();
        pipeline(NodeReadable.fromWeb(response.body as never), out, () => {});
        return out;
      },
      async list(scope: string, options?: ListOptions) {
        return result<ListPage>(await call("list", scope, options));
      },
      async delete(scope: string, id: string) {
        return result<boolean>(await call("delete", scope, id));
      },
      async sweep() {
        return result<number>(await call("sweep"));
      },
    };
  }

  function describeValue(value: unknown): unknown {
    if (value === undefined) return { t: "undefined" };
    if (typeof value === "function") return { t: "function" };
    if (typeof value === "bigint") return { t: "bigint" };
    if (typeof value === "symbol") return { t: "symbol" };
    try {
      JSON.stringify(value);
    } catch {
      return { t: "circular" };
    }
    return { t: "json", v: value };
  }

  function stateStore(now: () => number): StateStore {
    const store = uid();
    const call = async <T>(method: string, ...args: unknown[]) =>
      result<T>(await rpc({ kind: "state", store, now: now(), method, args }));
    return {
      driver: "durable-object",
      get: <T>(key: string) => call<T | null>("get", key),
      set: (key: string, value: unknown, options?: StateSetOptions) =>
        call<void>("set", key, describeValue(value), options),
      setIfAbsent: (key: string, value: unknown, options?: StateSetOptions) =>
        call<boolean>("setIfAbsent", key, describeValue(value), options),
      delete: (key: string) => call<boolean>("delete", key),
    };
  }

  async function bucketKeys(): Promise<string[]> {
    const bucket = await mf.getR2Bucket("FILES");
    const keys: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await bucket.list(cursor ? { cursor } : {});
      keys.push(...page.objects.map((object) => object.key));
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor);
    return keys;
  }

  return { fileStore, stateStore, bucketKeys, dispose: () => mf.dispose() };
}
