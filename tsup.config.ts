import { defineConfig } from "tsup";

export default defineConfig({
  entry: {
    index: "src/index.ts",
    node: "src/node/index.ts",
    proxy: "src/proxy/index.ts",
    cli: "src/cli/main.ts",
  },
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20",
  // Shared chunks, so `mcp-file-bridge` and `mcp-file-bridge/node` share one copy of every class and
  // module-level map (instanceof and the Node fast path work across the two entry points).
  splitting: true,
  treeshake: true,
  // p-limit 7 and its dependency are ESM-only; bundle them so `require()` works.
  noExternal: ["p-limit", "yocto-queue"],
});
