/**
 * `npm prepare`: builds `dist/` when it is missing, which is the case in the clone npm makes to
 * install this package from a git URL (`npm install github:owner/mcp-file-bridge`) and on a fresh
 * clone's first `npm install`. A checkout that already has a build keeps it (every `npm pack` builds
 * afresh anyway, through `prepack`). `npm install --ignore-scripts` skips this, and so does
 * `MFB_PREPARE_BUILD=0`, which `.ci/run` sets: its build step builds right after the install (the
 * install's other scripts, such as bun's postinstall, must still run there).
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
if (process.env.MFB_PREPARE_BUILD !== "0" && !existsSync(join(root, "dist", "index.js"))) {
  execFileSync("npx", ["tsup"], { cwd: root, stdio: "inherit" });
}
