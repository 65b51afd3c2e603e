/**
 * The first-use loader of `node:crypto` and `node:worker_threads` (src/internal/node-builtins.ts):
 * the same results as the builtins themselves, through `process.getBuiltinModule` and, on a Node
 * without it (before 20.16), through `createRequire`.
 */
import * as crypto from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";

type Builtins = typeof import("../../src/internal/node-builtins.js");

/** A fresh copy of the loader module, as a Node with or without `process.getBuiltinModule` loads it. */
async function loader(withGetBuiltinModule: boolean): Promise<{ builtins: Builtins; asked: string[] }> {
  vi.resetModules();
  const asked: string[] = [];
  const own = Object.getOwnPropertyDescriptor(process, "getBuiltinModule");
  const real = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  Object.defineProperty(process, "getBuiltinModule", {
    configurable: true,
    writable: true,
    value: withGetBuiltinModule
      ? (id: string) => {
          asked.push(id);
          return real ? real.call(process, id) : undefined;
        }
      : undefined,
  });
  restore = () => {
    if (own) Object.defineProperty(process, "getBuiltinModule", own);
    else delete (process as { getBuiltinModule?: unknown }).getBuiltinModule;
  };
  return { builtins: await import("../../src/internal/node-builtins.js"), asked };
}

let restore: (() => void) | undefined;
afterEach(() => {
  restore?.();
  restore = undefined;
  vi.resetModules();
});

describe.each([
  ["process.getBuiltinModule", true],
  ["createRequire (Node before 20.16)", false],
])("loaded through %s", (_, withGetBuiltinModule) => {
  it("hashes, signs, derives and draws as node:crypto does", async () => {
    const { builtins, asked } = await loader(withGetBuiltinModule);
    expect(asked).toEqual([]); // nothing loaded at import
    const bytes = Buffer.from("the same bytes");
    expect(builtins.createHash("sha256").update(bytes).digest("hex")).toBe(
      crypto.createHash("sha256").update(bytes).digest("hex"),
    );
    expect(builtins.createHmac("sha256", "key").update(bytes).digest("hex")).toBe(
      crypto.createHmac("sha256", "key").update(bytes).digest("hex"),
    );
    expect(Buffer.from(builtins.hkdfSync("sha256", "secret", "salt", "info", 32))).toEqual(
      Buffer.from(crypto.hkdfSync("sha256", "secret", "salt", "info", 32)),
    );
    expect(builtins.randomBytes(24)).toHaveLength(24);
    expect(builtins.randomUUID()).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    const filled = builtins.randomFillSync(Buffer.alloc(64), 8, 16);
    expect(filled.subarray(0, 8)).toEqual(Buffer.alloc(8));
    expect(filled.subarray(24)).toEqual(Buffer.alloc(40));
    expect(builtins.timingSafeEqual(Buffer.from("ab"), Buffer.from("ab"))).toBe(true);
    expect(builtins.timingSafeEqual(Buffer.from("ab"), Buffer.from("ac"))).toBe(false);
    expect(builtins.oneShotHash()).toBe((crypto as { hash?: unknown }).hash);
    expect(builtins.nodeCrypto().createCipheriv).toBe(crypto.createCipheriv);
    expect(asked).toEqual(withGetBuiltinModule ? ["node:crypto"] : []);
  });

  it("starts a worker thread with node:worker_threads", async () => {
    const { builtins, asked } = await loader(withGetBuiltinModule);
    const worker = builtins.newWorker("require('node:worker_threads').parentPort.postMessage(6 * 7)", {
      eval: true,
    });
    try {
      expect(await new Promise((resolve) => worker.once("message", resolve))).toBe(42);
    } finally {
      await worker.terminate();
    }
    expect(asked).toEqual(withGetBuiltinModule ? ["node:worker_threads"] : []);
  });
});

describe("tmpdir (node:os only when a variable is set)", () => {
  const names = ["TMPDIR", "TMP", "TEMP"] as const;
  const saved = Object.fromEntries(names.map((name) => [name, process.env[name]]));
  afterEach(() => {
    for (const name of names) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  });

  it.each([
    [{}, false],
    [{ TMPDIR: "" }, false],
    [{ TMPDIR: "", TMP: "", TEMP: "" }, false],
    [{ TMPDIR: "/var/tmp/x/" }, true],
    [{ TMP: "/t" }, true],
    [{ TEMP: "/u//" }, true],
  ])("answers os.tmpdir() with %j (node:os loaded: %s)", async (env, loadsOs) => {
    const os = await import("node:os");
    for (const name of names) delete process.env[name];
    Object.assign(process.env, env);
    const { builtins, asked } = await loader(true);
    expect(builtins.tmpdir()).toBe(os.tmpdir());
    expect(asked.includes("node:os")).toBe(loadsOs);
  });
});
