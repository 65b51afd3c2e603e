/**
 * The package's weight budgets (issue 39), measured from the packed tarball and printed: what
 * `FileBridge` adds to an SDK v1 stdio server's bundle, what `SignedUrlMinter` alone bundles to,
 * which heavy packages a core bundle reaches (none; bundling it needs no optional peer), what each
 * entry loads statically, and what `npm install` of the tarball adds to a project that has SDK v1
 * (with no `EBADENGINE` line). Process start is a benchmark (bench/), not a test. The root's export
 * count is pinned by test/architecture/public-surface.test.ts.
 *
 * `MFB_BUDGET_TARBALL=<path>` weighs that tarball instead of packing this checkout (how a heavy
 * import into the core was shown to fail these tests).
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "../support/helpers.js";
import {
  type Bundle,
  bundle,
  bundleProject,
  heavyIn,
  MINTER_ALONE,
  pack,
  SERVER_WITH,
  SERVER_WITHOUT,
  weighInstall,
} from "./weigh.js";

const run = promisify(execFile);
const KB = 1000;
const MiB = 1024 * 1024;

/**
 * The budgets of the table, each at its goal. The ESM build is one file per source module
 * (tsup.config.ts), so a bundler keeps the modules `FileBridge` or `SignedUrlMinter` reaches and drops
 * every other file whole; a module-level statement elsewhere no longer drags its chunk in.
 */
const BUDGET = {
  // Goal 80 KB (issue 39), pinned at the goal. 80.0 KB after the review fixes of session 15; 76.8 KB
  // since session 16 (p-limit replaced by 20 lines, the media table one string, the error table
  // pairs: docs/performance.md).
  fileBridgeAdds: 80 * KB,
  minterAlone: 30 * KB,
  installBytes: 3 * MiB,
  installPackages: 3,
} as const;

/**
 * Bare imports each entry may load statically (its closure), besides `node:` builtins. Everything
 * else an entry needs is bundled, or loaded on first use (busboy for forms, the AWS presigner).
 */
const STATIC_IMPORTS: Record<string, readonly string[]> = {
  index: ["zod/v4"],
  node: [],
  "storage-kit": [],
  media: [],
  types: [],
  mcp: ["zod/v4"],
  testing: ["fast-check", "vitest"],
  ui: [],
  s3: ["@aws-sdk/client-s3", "zod/v4"],
  redis: ["ioredis", "zod/v4"],
  cloudflare: [],
  proxy: ["zod/v4"],
};

let tarball: string;
let unpacked: string;
let project: string;
let without: Bundle;
const owned: string[] = [];

beforeAll(async () => {
  if (process.env.MFB_BUDGET_TARBALL) tarball = process.env.MFB_BUDGET_TARBALL;
  else {
    ensureBuilt();
    tarball = await pack(undefined, true);
    owned.push(join(tarball, ".."));
  }
  unpacked = await mkdtemp(join(tmpdir(), "mfb-unpacked-"));
  owned.push(unpacked);
  await run("tar", ["-xzf", tarball, "-C", unpacked]);
  unpacked = join(unpacked, "package");
  project = await bundleProject(unpacked, ["@modelcontextprotocol/sdk", "zod"]);
  owned.push(project);
  without = await bundle(project, SERVER_WITHOUT);
  expect(without.errors).toEqual([]);
}, 300_000);

afterAll(async () => {
  for (const dir of owned) await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

const kb = (bytes: number) => `${(bytes / KB).toFixed(1)} KB`;

describe("weight budgets, from the packed tarball", () => {
  it("FileBridge adds at most 80 KB to an SDK v1 McpServer + stdio bundle (esbuild, minified)", async () => {
    const withBridge = await bundle(project, SERVER_WITH);
    expect(withBridge.errors).toEqual([]);
    const added = withBridge.bytes - without.bytes;
    console.log(
      `budget: FileBridge adds ${kb(added)} to the SDK v1 stdio server (${kb(without.bytes)} → ${kb(withBridge.bytes)}; budget ${kb(BUDGET.fileBridgeAdds)})`,
    );
    expect(added).toBeLessThanOrEqual(BUDGET.fileBridgeAdds);
  });

  it("SignedUrlMinter alone bundles to at most 30 KB", async () => {
    const minter = await bundle(project, MINTER_ALONE);
    expect(minter.errors).toEqual([]);
    console.log(`budget: SignedUrlMinter alone ${kb(minter.bytes)} (budget ${kb(BUDGET.minterAlone)})`);
    expect(minter.bytes).toBeLessThanOrEqual(BUDGET.minterAlone);
  });

  it("a FileBridge or SignedUrlMinter bundle reaches no heavy package and needs no optional peer", async () => {
    // Only the SDK and zod are installed in the project: an import of the AWS SDK, ioredis or
    // ext-apps anywhere the bundle reaches fails to resolve.
    for (const code of [SERVER_WITH, MINTER_ALONE]) {
      const built = await bundle(project, code);
      expect(built.errors).toEqual([]);
      const heavy = heavyIn(built.packages);
      console.log(
        `budget: heavy packages reached: ${heavy.join(", ") || "none"} (of ${built.packages.join(", ")})`,
      );
      expect(heavy).toEqual([]);
    }
  });

  it("each entry loads statically only its own closure", async () => {
    const found: Record<string, string[]> = {};
    for (const entry of Object.keys(STATIC_IMPORTS)) {
      found[entry] = await staticImports(join(unpacked, "dist"), `${entry}.js`);
    }
    console.log(`budget: static imports per entry: ${JSON.stringify(found)}`);
    for (const [entry, allowed] of Object.entries(STATIC_IMPORTS)) {
      expect(
        found[entry]?.filter((name) => !allowed.includes(name)),
        entry,
      ).toEqual([]);
    }
  });

  it("the root entry loads at start nothing that is loaded on first use (https, tus, image shaping)", async () => {
    // docs/architecture.md, "loaded on first use": each is an import() in the function that needs it.
    const root = await staticClosure(join(unpacked, "dist"), "index.js");
    console.log(`budget: the root entry loads ${root.files.length} files at start`);
    expect(root.builtins.filter((name) => ["https", "tls", "dns", "http"].includes(name))).toEqual([]);
    const firstUse = [
      "lib/uploads/tus/tus-handler.js",
      "lib/images/shape-image.js",
      "lib/images/stored-image.js",
    ];
    expect(root.files.filter((file) => firstUse.includes(file))).toEqual([]);
  });

  it("installing the tarball over SDK v1 adds at most 3 MiB and 3 packages, with no EBADENGINE", {
    timeout: 300_000,
  }, async () => {
    const weight = await weighInstall(tarball);
    console.log(
      `budget: install over SDK v1 adds ${(weight.addedBytes / MiB).toFixed(2)} MiB, ${weight.addedPackages} packages, ${weight.ebadengine.length} EBADENGINE lines (Node ${process.versions.node})`,
    );
    expect(weight.ebadengine).toEqual([]);
    expect(weight.addedBytes).toBeLessThanOrEqual(BUDGET.installBytes);
    expect(weight.addedPackages).toBeLessThanOrEqual(BUDGET.installPackages);
  });
});

/**
 * What an ESM file of `dist` loads statically, following its static imports of other `dist` files
 * (ESM, or the CommonJS files both formats share); dynamic `import()` is not followed: the bare
 * specifiers (packages), the Node builtins, and the `dist` files (relative to `dist`).
 */
async function staticClosure(
  dist: string,
  file: string,
): Promise<{ bare: string[]; builtins: string[]; files: string[] }> {
  const seen = new Set<string>();
  const bare = new Set<string>();
  const builtins = new Set<string>();
  const visit = async (path: string): Promise<void> => {
    if (seen.has(path)) return;
    seen.add(path);
    const text = await readFile(path, "utf8");
    const specifiers = path.endsWith(".cjs")
      ? [...text.matchAll(/\brequire\("([^"]+)"\)/g)].map((match) => match[1] as string)
      : [
          ...text.matchAll(
            /^(?:import|export)\s[^;]*?from\s*["']([^"']+)["'];|^import\s*["']([^"']+)["'];/gm,
          ),
        ].map((match) => (match[1] ?? match[2]) as string);
    for (const specifier of specifiers) {
      if (specifier.startsWith(".")) await visit(join(dirname(path), specifier));
      else if (specifier.startsWith("node:") || builtinModules.includes(specifier))
        builtins.add(specifier.replace(/^node:/, ""));
      else bare.add(specifier);
    }
  };
  await visit(join(dist, file));
  const files = [...seen].map((path) => path.slice(dist.length + 1));
  return { bare: [...bare].sort(), builtins: [...builtins].sort(), files: files.sort() };
}

/** The bare specifiers (packages, not `node:` builtins) an ESM file of `dist` imports statically. */
async function staticImports(dist: string, file: string): Promise<string[]> {
  return (await staticClosure(dist, file)).bare;
}
