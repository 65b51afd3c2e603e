import { execFileSync } from "node:child_process";
import { beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, repoRoot } from "../support/helpers.js";

const root = repoRoot;

function node(args: string[]): string {
  return execFileSync(process.execPath, args, { cwd: root, encoding: "utf8" }).trim();
}

// Loads the BUILT package by its own name (Node resolves a package's self-reference through its
// `exports` map), once with `import` and once with `require`.
describe("built package", () => {
  beforeAll(ensureBuilt, 180_000);

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

  // Both entry points must share one copy of every class (and of the Node fast path's state): an
  // error thrown by `mcp-file-bridge/node` is an instance of the root entry's FileBridgeError.
  const shared = `let error; try { node.toNodeHandler(42); } catch (e) { error = e; }
    console.log(JSON.stringify({ code: error.code, same: error instanceof m.FileBridgeError }));`;

  it("shares classes between the root and ./node entries under require()", () => {
    const out = JSON.parse(
      node([
        "-e",
        `const m = require("mcp-file-bridge"); const node = require("mcp-file-bridge/node"); ${shared}`,
      ]),
    );
    expect(out).toEqual({ code: "INVALID_OPTION", same: true });
  });

  it("shares classes between the root and ./node entries under import", () => {
    const out = JSON.parse(
      node([
        "--input-type=module",
        "-e",
        `const m = await import("mcp-file-bridge"); const node = await import("mcp-file-bridge/node"); ${shared}`,
      ]),
    );
    expect(out).toEqual({ code: "INVALID_OPTION", same: true });
  });

  // The extender subpaths: the storage kit and the driver conformance suites.
  const kitProbe = `const plan = kit.planPut({ scope: "s", name: "a.txt", maxBytes: 3 }, 0);
    const chunks = []; const sink = new (require("node:stream").Writable)({ write(c, _e, cb) { chunks.push(c); cb(); } });
    kit.streamPut(Buffer.from("abcd"), plan, sink).then(
      () => console.log(JSON.stringify({ code: null })),
      (e) => console.log(JSON.stringify({ code: e.code, same: e instanceof m.FileBridgeError })));`;

  it("exports the storage kit at mcp-file-bridge/storage, sharing classes with the root (require)", () => {
    const out = JSON.parse(
      node([
        "-e",
        `const m = require("mcp-file-bridge"); const kit = require("mcp-file-bridge/storage"); ${kitProbe}`,
      ]),
    );
    expect(out).toEqual({ code: "FILE_TOO_LARGE", same: true });
  });

  it("exports the storage kit at mcp-file-bridge/storage (import)", () => {
    const out = JSON.parse(
      node([
        "--input-type=module",
        "-e",
        `import { createRequire } from "node:module"; const require = createRequire(import.meta.url);
         const m = await import("mcp-file-bridge"); const kit = await import("mcp-file-bridge/storage"); ${kitProbe}`,
      ]),
    );
    expect(out).toEqual({ code: "FILE_TOO_LARGE", same: true });
  });

  it("exports the driver suites at mcp-file-bridge/testing under import and require", () => {
    const names = `console.log(JSON.stringify(Object.keys(t).sort()))`;
    const cjs = JSON.parse(node(["-e", `const t = require("mcp-file-bridge/testing"); ${names}`]));
    const esm = JSON.parse(
      node(["--input-type=module", "-e", `const t = await import("mcp-file-bridge/testing"); ${names}`]),
    );
    expect(cjs).toEqual(esm);
    expect(cjs).toEqual(
      expect.arrayContaining(["runFileStoreSuite", "runStateStoreSuite", "codeOf", "readAll"]),
    );
  });

  it("loads the root entry without loading optional peers (vitest, fast-check)", () => {
    const out = JSON.parse(
      node([
        "-e",
        `require("mcp-file-bridge"); require("mcp-file-bridge/node"); require("mcp-file-bridge/storage");
         console.log(JSON.stringify(Object.keys(require.cache).filter((k) => /node_modules[\\/](vitest|fast-check)[\\/]/.test(k))))`,
      ]),
    );
    expect(out).toEqual([]);
  });
});
