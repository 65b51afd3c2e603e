import { join } from "node:path";
import { build } from "esbuild";
import { repoRoot } from "../../support/helpers.js";

/** Bundles test/browser/support/host-app.ts (SDK Client + ext-apps AppBridge) for the browser. */
export async function hostAppScript(): Promise<string> {
  const result = await build({
    entryPoints: [join(repoRoot, "test", "browser", "support", "host-app.ts")],
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    target: "es2020",
    logLevel: "silent",
  });
  const file = result.outputFiles[0];
  if (!file) throw new Error("esbuild produced no host bundle");
  return file.text;
}
