import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/helpers.js";

const run = promisify(execFile);

// A module hook that makes every `@modelcontextprotocol/*` import fail, as if no SDK were installed.
const BLOCK_SDK = `
import { register } from "node:module";
register("data:text/javascript," + encodeURIComponent(\`
export async function resolve(specifier, context, next) {
  if (specifier.startsWith("@modelcontextprotocol/")) throw new Error("SDK blocked: " + specifier);
  return next(specifier, context);
}\`));
`;

async function loadWithoutSdk(code: string): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    [
      "--import",
      `data:text/javascript,${encodeURIComponent(BLOCK_SDK)}`,
      "--import",
      "tsx",
      "--input-type=module",
      "-e",
      code,
    ],
    { cwd: repoRoot },
  );
  return stdout.trim();
}

describe("the package without an SDK installed", () => {
  it("fails to import the SDK under the hook (the hook works)", async () => {
    await expect(loadWithoutSdk('await import("@modelcontextprotocol/sdk/types.js");')).rejects.toThrow(
      /SDK blocked/,
    );
  }, 60_000);

  it("loads the root entry and builds a host port structurally", async () => {
    const out = await loadWithoutSdk(
      [
        `const lib = await import(${JSON.stringify(join(repoRoot, "src/index.ts"))});`,
        "const registry = new lib.ResourceRegistry({ store: lib.memoryStore() });",
        "console.log(typeof lib.toHost, typeof registry.attach, Object.keys(lib).length > 20);",
      ].join("\n"),
    );
    expect(out).toBe("function function true");
  }, 60_000);
});
