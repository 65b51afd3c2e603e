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
    proxy: "src/proxy/index.ts",
    images: "src/images/index.ts",
    cli: "src/cli/main.ts",
  },
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20",
  // Shared chunks, so every entry point shares one copy of every class and module-level map
  // (instanceof and the Node fast path work across `mcp-file-bridge`, `/node`, `/storage`, ...).
  splitting: true,
  treeshake: true,
  // ESM-only dependencies (p-limit 7 and its yocto-queue; the jshttp header parsers
  // content-disposition 3, content-type 3, range-parser 2): bundle them so `require()` works.
  noExternal: ["p-limit", "yocto-queue", "content-disposition", "content-type", "range-parser"],
  // Optional peers of `mcp-file-bridge/testing`: never bundled.
  external: ["vitest", "fast-check"],
});
