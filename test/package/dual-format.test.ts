import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");

function node(args: string[]): string {
  return execFileSync(process.execPath, args, { cwd: root, encoding: "utf8" }).trim();
}

// Loads the BUILT package by its own name (Node resolves a package's self-reference through its
// `exports` map), once with `import` and once with `require`.
describe("built package", () => {
  beforeAll(() => {
    if (!existsSync(join(root, "dist", "index.js")) || !existsSync(join(root, "dist", "index.cjs"))) {
      execFileSync("npx", ["tsup"], { cwd: root, stdio: "ignore" });
    }
  }, 180_000);

  const probe = `const e = new m.FileBridgeError("NOT_FOUND", "x");
    console.log(JSON.stringify({ code: e.code, status: e.status, guard: m.isFileBridgeError(e), names: Object.keys(m).sort() }));`;

  it("works with require()", () => {
    const out = JSON.parse(node(["-e", `const m = require("mcp-file-bridge"); ${probe}`]));
    expect(out).toMatchObject({ code: "NOT_FOUND", status: 404, guard: true });
    expect(out.names).toContain("FileBridge");
  });

  it("works with import, exposing the same names as require()", () => {
    const esm = JSON.parse(
      node(["--input-type=module", "-e", `const m = await import("mcp-file-bridge"); ${probe}`]),
    );
    const cjs = JSON.parse(node(["-e", `const m = require("mcp-file-bridge"); ${probe}`]));
    expect(esm).toMatchObject({ code: "NOT_FOUND", status: 404, guard: true });
    expect(esm.names).toEqual(cjs.names);
  });
});
