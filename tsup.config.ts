import { defineConfig } from "tsup";

export default defineConfig({
  entry: { index: "src/index.ts", node: "src/node/index.ts" },
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20",
  splitting: false,
  treeshake: true,
  // p-limit 7 and its dependency are ESM-only; bundle them so `require()` works.
  noExternal: ["p-limit", "yocto-queue"],
});
