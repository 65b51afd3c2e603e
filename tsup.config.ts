import { defineConfig } from "tsup";

export default defineConfig({
  entry: {
    index: "src/index.ts",
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
  },
  format: ["esm", "cjs"],
  dts: true,
  // No source maps in the package (issue 39): they were 5.5 MB of its 8.6 MB, and the output is not
  // minified, so a stack trace already points at readable code with the source's names.
  sourcemap: false,
  clean: true,
  target: "node20",
  // Shared chunks, so every entry point shares one copy of every class and module-level map
  // (instanceof and the Node fast path work across `mcp-file-bridge`, `/node`, `/storage`, ...).
  splitting: true,
  treeshake: true,
  // Bundled, so a user installs none of them (issue 39): p-limit 7 and its yocto-queue (ESM-only);
  // the jshttp header parsers content-disposition 3, content-type 3, range-parser 2 (ESM-only, and
  // they declare Node >= 22: installed, they print EBADENGINE on Node 20); yaml, which only the proxy
  // config (the CLI and `./proxy`) parses. Each lands in the chunk of the code that uses it, so no
  // other entry loads it (test/package/budgets.test.ts checks that from the packed tarball).
  noExternal: ["p-limit", "yocto-queue", "content-disposition", "content-type", "range-parser", "yaml"],
  // Optional peers of `mcp-file-bridge/testing`: never bundled.
  external: ["vitest", "fast-check"],
  esbuildOptions(options) {
    // yaml's `node` build is CommonJS that `require()`s Node built-ins, which an ESM bundle cannot do
    // ("Dynamic require of \"process\" is not supported"): bundle its ESM build, the same code.
    options.alias = { ...options.alias, yaml: "./node_modules/yaml/browser/index.js" };
  },
});
