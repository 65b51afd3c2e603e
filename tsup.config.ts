import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { type BuildOptions, type Plugin, transform } from "esbuild";
import { defineConfig, type Options } from "tsup";
import { buildForNode } from "./scripts/package/node-build.js";

/**
 * The package's build (issue 39). Four outputs, each shaped for who loads it (package.json
 * `exports` sends each loader to its own):
 *
 * - **ESM, one file per source module** (`dist/<entry>.js`, `dist/lib/<path>.js`; condition
 *   `module`, which bundlers match), importing each other as the sources do. A bundler that imports
 *   `FileBridge` or `SignedUrlMinter` keeps the modules it reaches and drops every other file whole
 *   (`sideEffects: false`), as from the sources. With shared chunks, one module-level statement
 *   anywhere in a chunk (a zod schema, a `Map`) kept the chunk's whole closure in the bundle.
 * - **ESM for Node** (`dist/node/`; condition `node`, after `module`: Node, Deno and Bun): all entries
 *   but the CLI, built by scripts/package/node-build.ts so that Node loads the root as 5 files (28
 *   with one split build of every entry, ~150 with one file per module), and `/bridge` as its own
 *   file and 2 of them: Node's ESM loader costs per file (docs/performance.md, sessions 17, 18 and
 *   29).
 * - **CommonJS, bundled per entry with shared chunks** (`dist/<entry>.cjs`): `require()` users do not
 *   tree-shake, and one file per module costs CommonJS a third more bytes in helpers. Local names
 *   minified, top-level ones and those of classes and functions kept (stack traces read as the
 *   sources).
 * - **Shipped once, as CommonJS, loaded by the three** (`dist/lib/...*.cjs`): the upload page's
 *   and widget's assets (about 300 KB of text) and the vendored yaml and busboy (minified). Node,
 *   Deno, Bun and bundlers all import CommonJS from ESM.
 *
 * Each module exists once per build, so classes and module-level state are shared by every entry
 * a loader resolves through one condition (instanceof and the Node fast path work across
 * `mcp-file-bridge`, `/node`, `/storage-kit`, `/testing`, ...). All three are minified, names kept
 * where Node runs them, to stay inside the install budget (≤ 3 MiB over SDK v1).
 * Types: one set of declarations (`.d.cts`); each ESM entry's `.d.ts` re-exports its `.d.cts`.
 */

/** The package's entry points (package.json `exports`, and the CLI's `bin`). */
const PUBLIC: Record<string, string> = {
  index: "src/index.ts",
  bridge: "src/bridge/index.ts",
  mcp: "src/mcp/index.ts",
  types: "src/types.ts",
  media: "src/media/index.ts",
  node: "src/node/index.ts",
  "storage-kit": "src/storage/kit/index.ts",
  testing: "src/testing/index.ts",
  ui: "src/ui/index.ts",
  s3: "src/s3/index.ts",
  redis: "src/redis/index.ts",
  cloudflare: "src/cloudflare/index.ts",
  proxy: "src/proxy/index.ts",
  images: "src/images/index.ts",
  cli: "src/cli/main.ts",
};
/** ESM only: the CLI (a `bin`), and `./testing` (Vitest, which its suites run on, is ESM-only). */
const ESM_ONLY = new Set(["cli", "testing"]);

/** Shipped once as CommonJS: output name → source. */
const SHARED_CJS: Record<string, string> = {
  "lib/ui/generated/page-assets": "src/ui/generated/page-assets.ts",
  "lib/ui/generated/widget-assets": "src/ui/generated/widget-assets.ts",
};
/** Vendored packages (bundled, so a user installs none of them), shipped once as CommonJS. */
const VENDOR: Record<string, string> = {
  yaml: "lib/vendor/yaml",
  "@fastify/busboy": "lib/vendor/busboy",
};

const root = process.cwd();
/** Output name (no extension) of every source module, for the ESM build. */
const outName = new Map<string, string>(
  Object.entries({ ...PUBLIC, ...SHARED_CJS }).map(([name, file]) => [resolve(file), name]),
);
for (const entry of readdirSync("src", { recursive: true, withFileTypes: true })) {
  const file = resolve(entry.parentPath, entry.name);
  const path = relative(join(root, "src"), file).split(sep).join("/");
  // src/ui/client is browser code, built into the generated assets (scripts/browser/build-ui.ts).
  if (!entry.isFile() || !path.endsWith(".ts") || path.endsWith(".d.ts") || path.startsWith("ui/client/"))
    continue;
  if (!outName.has(file)) outName.set(file, `lib/${path.slice(0, -".ts".length)}`);
}
const sharedCjs = new Set(Object.keys(SHARED_CJS));

const relativeTo = (from: string, to: string) => {
  const path = relative(dirname(from), to).split(sep).join("/");
  return path.startsWith(".") ? path : `./${path}`;
};

/**
 * ESM: a relative import of another source module stays an import, of that module's own file; the
 * shared CommonJS files and vendored packages are imported from their one `.cjs` copy.
 */
const esmLayout: Plugin = {
  name: "esm-one-file-per-module",
  setup(build) {
    build.onResolve({ filter: /^\.\.?\// }, (args) => {
      if (!args.importer.startsWith(join(root, "src"))) return undefined;
      const target = resolve(dirname(args.importer), args.path.replace(/\.js$/, ".ts"));
      const name = outName.get(target);
      if (name === undefined) {
        if (existsSync(target)) throw new Error(`${args.path} (from ${args.importer}) is not in the build`);
        return undefined;
      }
      const from = outName.get(args.importer) as string;
      return { path: relativeTo(from, name) + (sharedCjs.has(name) ? ".cjs" : ".js"), external: true };
    });
    build.onResolve({ filter: /^(yaml|@fastify\/busboy)$/ }, (args) => {
      const from = outName.get(args.importer) as string;
      return { path: `${relativeTo(from, VENDOR[args.path] as string)}.cjs`, external: true };
    });
    // Each ESM entry's types re-export the CommonJS declarations (one set of `.d.cts` files).
    build.onEnd(() => {
      const outDir = build.initialOptions.outdir as string;
      mkdirSync(outDir, { recursive: true });
      for (const name of Object.keys(PUBLIC)) {
        if (name === "cli") continue;
        writeFileSync(join(outDir, `${name}.d.ts`), `export * from "./${name}.cjs";\n`);
      }
    });
  },
};

/** CommonJS (bundled): the shared CommonJS files and vendored packages are required from their copy. */
const cjsLayout: Plugin = {
  name: "cjs-shared-files",
  setup(build) {
    build.onResolve({ filter: /[/\\]generated[/\\](page|widget)-assets(\.js)?$/ }, (args) => {
      const target = resolve(dirname(args.importer), args.path.replace(/\.js$/, ".ts"));
      return { path: `./${outName.get(target) as string}.cjs`, external: true };
    });
    build.onResolve({ filter: /^(yaml|@fastify\/busboy)$/ }, (args) => ({
      path: `./${VENDOR[args.path] as string}.cjs`,
      external: true,
    }));
  },
};

const common: Options = {
  sourcemap: false,
  target: "node20",
  treeshake: false,
  // Bundled into the module that imports each, so a user installs none of them: the jshttp header
  // parsers content-disposition 3, content-type 3, range-parser 2 (ESM-only, and they declare
  // Node >= 22: installed, they print EBADENGINE on Node 20). (p-limit went in session 16: FileBridge
  // needed 20 lines of it, src/bridge/settle-limited.ts.)
  noExternal: ["content-disposition", "content-type", "range-parser"],
  // Optional peers of `mcp-file-bridge/testing`: never bundled.
  external: ["vitest", "fast-check"],
  // The build script empties dist/ first (three builds write into it side by side).
  clean: false,
};

/**
 * ESM for Node (`dist/node/`, scripts/package/node-build.ts): the shared CommonJS files and vendored
 * packages are imported from their one `.cjs` copy in `dist/lib`.
 */
const nodeLayout: Plugin = {
  name: "node-esm-shared-files",
  setup(build) {
    build.onResolve({ filter: /[/\\]generated[/\\](page|widget)-assets(\.js)?$/ }, (args) => {
      const target = resolve(dirname(args.importer), args.path.replace(/\.js$/, ".ts"));
      return { path: `../${outName.get(target) as string}.cjs`, external: true };
    });
    build.onResolve({ filter: /^(yaml|@fastify\/busboy)$/ }, (args) => ({
      path: `../${VENDOR[args.path] as string}.cjs`,
      external: true,
    }));
  },
};

/**
 * Minified output keeps lines short: Node prints the source line of an uncaught error, and one
 * line per chunk would print the whole chunk.
 */
const LINE_LIMIT = 160;
function shortLines(options: BuildOptions): void {
  options.lineLimit = LINE_LIMIT;
}

/** The output folder: `dist`, or what `tsup --out-dir <folder>` names (the tests build aside). */
function outDir(): string {
  const at = process.argv.findIndex((arg) => arg === "--out-dir" || arg === "-d");
  return at >= 0 ? (process.argv[at + 1] ?? "dist") : "dist";
}

/**
 * Minification of the CommonJS build's files, in place: whitespace, syntax and the names local to a
 * function; top-level names stay (no `format`: esbuild leaves a script's top level alone), and
 * `keepNames` keeps the `name` of every class and function. So `FileBridge.name`, `err.name` and a
 * stack trace's frames (`at FileBridge.addResolver`) read as the sources. Renaming the top level
 * too saved ~40 KB more but printed frames as `at Zn.addResolver`.
 *
 * Rollup keeps `import()` in CommonJS; esbuild turns each into `require()` here (no `dynamic-import`).
 * Through `import()`, Node's ESM loader saw only the names cjs-module-lexer finds in a chunk (none in
 * one re-exporting another chunk's: image shaping failed under `require()`), and loaders that run
 * CommonJS without ESM (Jest's registry, a vm script) failed on the first-use code.
 */
async function minifyCommonJs(): Promise<void> {
  const dir = outDir();
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(".cjs")) continue;
    const file = join(dir, name);
    const { code } = await transform(readFileSync(file, "utf8"), {
      minify: true,
      keepNames: true,
      lineLimit: LINE_LIMIT,
      target: "node20",
      supported: { "dynamic-import": false },
    });
    writeFileSync(file, code);
  }
}

export default defineConfig([
  {
    ...common,
    entry: Object.fromEntries(
      [...outName].filter(([, name]) => !sharedCjs.has(name)).map(([f, n]) => [n, f]),
    ),
    format: ["esm"],
    splitting: false,
    minify: true,
    esbuildOptions: shortLines,
    dts: false,
    esbuildPlugins: [esmLayout],
    // The Node build (dist/node/) is two esbuild builds of its own (scripts/package/node-build.ts).
    onSuccess: () =>
      buildForNode({
        entries: Object.fromEntries(
          Object.entries(PUBLIC)
            .filter(([name]) => name !== "cli")
            .map(([name, file]) => [`node/${name}`, file]),
        ),
        root: "node/index",
        // A server that uses only FileBridge loads FileBridge's closure alone (issue 39).
        narrow: "node/bridge",
        outDir: outDir(),
        plugins: [nodeLayout],
        noExternal: common.noExternal as string[],
        external: common.external as string[],
        lineLimit: LINE_LIMIT,
      }),
  },
  {
    ...common,
    entry: Object.fromEntries(Object.entries(PUBLIC).filter(([name]) => !ESM_ONLY.has(name))),
    format: ["cjs"],
    splitting: true,
    // Rollup turns esbuild's ESM chunks into CommonJS. Without `treeshake`, tsup does it with
    // sucrase, which also rewrote every `?.`, `??` and class field as helper calls (504
    // `_optionalChain`, 605 `_nullishCoalesce`; `FileBridgeError.name` was `_class`): 864 KB of
    // CommonJS then, 687 KB now. The files are minified once written, by esbuild.
    treeshake: true,
    onSuccess: minifyCommonJs,
    dts: { entry: Object.fromEntries(Object.entries(PUBLIC).filter(([name]) => name !== "cli")) },
    esbuildPlugins: [cjsLayout],
  },
  {
    ...common,
    entry: {
      ...SHARED_CJS,
      "lib/vendor/yaml": "scripts/package/vendor/yaml.ts",
      "lib/vendor/busboy": "scripts/package/vendor/busboy.ts",
    },
    format: ["cjs"],
    splitting: false,
    dts: false,
    minify: true,
    noExternal: ["yaml", "@fastify/busboy"],
  },
]);
