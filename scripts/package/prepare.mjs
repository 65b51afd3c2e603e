/**
 * `npm prepare`: builds `dist/` when it is missing, which is the case in the clone npm makes to
 * install this package from a git URL (`npm install github:owner/mcp-file-bridge`) and on a fresh
 * clone's first `npm install`. A checkout that already has a build keeps it (every `npm pack` builds
 * afresh anyway, through `prepack`). `npm install --ignore-scripts` skips this.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
if (!existsSync(join(root, "dist", "index.js"))) {
  execFileSync("npx", ["tsup"], { cwd: root, stdio: "inherit" });
}
