import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot, runWithoutPackages } from "../support/helpers.js";

/** Runs `code` with every `@modelcontextprotocol/*` import failing, as if no SDK were installed. */
const loadWithoutSdk = (code: string) => runWithoutPackages("@modelcontextprotocol/", "SDK", code);

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
        `const port = await import(${JSON.stringify(join(repoRoot, "src/mcp/index.ts"))});`,
        "const registry = new lib.ResourceRegistry({ store: lib.memoryStore() });",
        "console.log(typeof port.toHost, typeof registry.attach, Object.keys(lib).length > 20);",
      ].join("\n"),
    );
    expect(out).toBe("function function true");
  }, 60_000);
});
