import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
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

  // Node imports the split build (`node` condition), bundlers one file per module (`module`): in
  // each, every entry shares one copy of each module, the conformance suites' `instanceof` included.
  it("shares classes between the root, ./node, ./storage-kit and ./testing under import (Node's build)", () => {
    const out = JSON.parse(
      node([
        "--input-type=module",
        "-e",
        `const m = await import("mcp-file-bridge"); const node = await import("mcp-file-bridge/node");
        const kit = await import("mcp-file-bridge/storage-kit"); const testing = await import("mcp-file-bridge/testing");
        let error; try { node.toNodeHandler(42); } catch (e) { error = e; }
        const plan = kit.planPut({ scope: "s", name: "a.txt", maxBytes: 3 }, 0);
        const sink = new (await import("node:stream")).Writable({ write(c, _e, cb) { cb(); } });
        console.log(JSON.stringify({
          resolved: import.meta.resolve("mcp-file-bridge").split("/dist/")[1],
          same: error instanceof m.FileBridgeError,
          fromNode: await testing.codeOf(Promise.reject(error)),
          fromKit: await testing.codeOf(kit.streamPut(Buffer.from("abcd"), plan, sink)),
          fromRoot: await testing.codeOf(Promise.reject(new m.FileBridgeError("NOT_FOUND", "x"))),
        }));`,
      ]),
    );
    expect(out).toEqual({
      resolved: "node/index.js",
      same: true,
      fromNode: "INVALID_OPTION",
      fromKit: "FILE_TOO_LARGE",
      fromRoot: "NOT_FOUND",
    });
  });

  // The extender subpaths: the storage kit and the driver conformance suites.
  const kitProbe = `const plan = kit.planPut({ scope: "s", name: "a.txt", maxBytes: 3 }, 0);
    const chunks = []; const sink = new (require("node:stream").Writable)({ write(c, _e, cb) { chunks.push(c); cb(); } });
    kit.streamPut(Buffer.from("abcd"), plan, sink).then(
      () => console.log(JSON.stringify({ code: null })),
      (e) => console.log(JSON.stringify({ code: e.code, same: e instanceof m.FileBridgeError })));`;

  it("exports the storage kit at mcp-file-bridge/storage-kit, sharing classes with the root (require)", () => {
    const out = JSON.parse(
      node([
        "-e",
        `const m = require("mcp-file-bridge"); const kit = require("mcp-file-bridge/storage-kit"); ${kitProbe}`,
      ]),
    );
    expect(out).toEqual({ code: "FILE_TOO_LARGE", same: true });
  });

  it("no longer exports mcp-file-bridge/storage, the storage kit's former alias (one name: ./storage-kit)", () => {
    const out = JSON.parse(
      node([
        "--input-type=module",
        "-e",
        `const code = await import("mcp-file-bridge/storage").then(() => "loaded", (e) => e.code);
         console.log(JSON.stringify({ code }));`,
      ]),
    );
    expect(out).toEqual({ code: "ERR_PACKAGE_PATH_NOT_EXPORTED" });
  });

  // The root's former names that moved to subpaths (issue 20): the same objects, under both formats.
  const movedProbe = `const host = load("mcp-file-bridge/mcp"); const media = load("mcp-file-bridge/media");
    const types = load("mcp-file-bridge/types");
    console.log(JSON.stringify({ toHost: typeof host.toHost, v2Host: typeof host.v2Host,
      scopeSourceOf: typeof host.scopeSourceOf, mcpRequestError: new host.McpRequestError(-32602, "x").code,
      textual: media.isTextualMediaType("application/json"), typesValues: Object.keys(types).length }));`;

  it("exports the host port at ./mcp, media helpers at ./media and a types-only ./types (require and import)", () => {
    const cjs = JSON.parse(node(["-e", `const load = require; ${movedProbe}`]));
    const esm = JSON.parse(
      node([
        "--input-type=module",
        "-e",
        `const mods = { "mcp-file-bridge/mcp": await import("mcp-file-bridge/mcp"),
           "mcp-file-bridge/media": await import("mcp-file-bridge/media"),
           "mcp-file-bridge/types": await import("mcp-file-bridge/types") };
         const load = (name) => mods[name]; ${movedProbe}`,
      ]),
    );
    const expected = {
      toHost: "function",
      v2Host: "function",
      scopeSourceOf: "function",
      mcpRequestError: -32602,
      textual: true,
      typesValues: 0,
    };
    expect(cjs).toEqual(expected);
    expect(esm).toEqual(expected);
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

  // Code loaded on first use (image shaping, the tus handler, busboy, the S3 presigner, sharp) is
  // `require()`d by the CommonJS build. An `import()` there handed the file to Node's ESM loader,
  // which sees only the names cjs-module-lexer finds: a file re-exporting another chunk's names (the
  // image shaping) came without them, and `Artifacts.fit()` failed with a TypeError under require().
  const shapeProbe = `(async () => {
    const png = await sharp({ create: { width: 3000, height: 2000, channels: 3, background: "#369" } }).png().toBuffer();
    const minter = new m.SignedUrlMinter({ secret: "i".repeat(32), baseUrl: "http://127.0.0.1:9" });
    const artifacts = new m.Artifacts({ store: m.memoryStore(), minter });
    const fitted = await artifacts.fit({ content: [{ type: "image", data: png.toString("base64"), mimeType: "image/png" }] },
      { scope: "s", client: "claude-code" }).catch((e) => ({ error: e.code ?? e.name }));
    const image = fitted.content?.find((block) => block.type === "image");
    const width = image === undefined ? null : (await sharp(Buffer.from(image.data, "base64")).metadata()).width;
    console.log(JSON.stringify({ error: fitted.error ?? null, width }));
  })();`;

  it("shapes an image on first use under require() as under import (Artifacts.fit, claude-code: 1568 px)", () => {
    const cjs = JSON.parse(
      node(["-e", `const m = require("mcp-file-bridge"); const sharp = require("sharp"); ${shapeProbe}`]),
    );
    const esm = JSON.parse(
      node([
        "--input-type=module",
        "-e",
        `const m = await import("mcp-file-bridge"); const sharp = (await import("sharp")).default; ${shapeProbe}`,
      ]),
    );
    expect(esm).toEqual({ error: null, width: 1568 });
    expect(cjs).toEqual({ error: null, width: 1568 });
  });

  // Loaders that run CommonJS without Node's ESM loader (Jest's module registry, a vm script) fail on
  // any `import()`; the CommonJS build had six (rollup keeps them), sucrase's had none.
  it("the CommonJS build has no dynamic import(): every file it loads on demand is require()d", () => {
    const dist = join(root, "dist");
    const files = readdirSync(dist, { recursive: true, encoding: "utf8" }).filter((file) =>
      file.endsWith(".cjs"),
    );
    expect(files.length).toBeGreaterThan(10);
    const withImport = files.filter((file) => /\bimport\(/.test(readFileSync(join(dist, file), "utf8")));
    expect(withImport).toEqual([]);
  });

  it("loads the root entry without loading optional peers (vitest, fast-check)", () => {
    const out = JSON.parse(
      node([
        "-e",
        `require("mcp-file-bridge"); require("mcp-file-bridge/node"); require("mcp-file-bridge/storage-kit");
         require("mcp-file-bridge/mcp"); require("mcp-file-bridge/types"); require("mcp-file-bridge/media");
         console.log(JSON.stringify(Object.keys(require.cache).filter((k) => /node_modules[\\/](vitest|fast-check)[\\/]/.test(k))))`,
      ]),
    );
    expect(out).toEqual([]);
  });
});
