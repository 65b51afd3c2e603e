import { describe, expect, it } from "vitest";
import {
  checkImportGraph,
  type ImportEdge,
  type ImportGraph,
  importsOf,
  readImportGraph,
  SDK_FOLDERS,
  SDK_RUNTIME_FOLDERS,
  SRC_ROOT,
} from "./import-graph.js";

function graphOf(files: Record<string, string>): ImportGraph {
  return new Map(Object.entries(files).map(([file, text]) => [file, importsOf(file, text)]));
}

function rules(files: Record<string, string>): string[] {
  return checkImportGraph(graphOf(files)).map((v) => `${v.rule} ${v.file}`);
}

describe("src/ import rules", () => {
  it("hold for the source tree", () => {
    const graph = readImportGraph(SRC_ROOT);
    expect(graph.size).toBeGreaterThan(30);
    expect(graph.has("mcp/v1/host.ts")).toBe(true);
    expect(checkImportGraph(graph)).toEqual([]);
  });

  it("see the SDK only inside src/mcp and src/proxy/sdk, and as values only in src/proxy/sdk", () => {
    const graph = readImportGraph(SRC_ROOT);
    const sdk = [...graph].flatMap(([file, edges]) =>
      edges
        .filter((e) => e.specifier.startsWith("@modelcontextprotocol/"))
        .map((e) => ({ file, type: e.typeOnly })),
    );
    expect(sdk.length).toBeGreaterThan(0);
    expect(
      sdk.filter(
        ({ file, type }) =>
          !SDK_FOLDERS.some((dir) => file.startsWith(`${dir}/`)) ||
          (!type && !SDK_RUNTIME_FOLDERS.some((dir) => file.startsWith(`${dir}/`))),
      ),
    ).toEqual([]);
  });
});

describe("the checker", () => {
  it("reads imports, re-exports, dynamic imports and type positions, not comments or strings", () => {
    const edges = importsOf(
      "registry/x.ts",
      [
        'import type { A } from "./a.js";',
        'import { type B, c } from "../b/b.js";',
        'export { d } from "./d.js";',
        'export type { E } from "./e.js";',
        'import "./side.js";',
        'const lazy = () => import("./lazy.js");',
        'type T = import("./t.js").T;',
        '// import { no } from "./comment.js";',
        "const s = \"import { no } from './string.js'\";",
      ].join("\n"),
    );
    const seen = edges.map((e: ImportEdge) => `${e.target}${e.typeOnly ? " (type)" : ""}`);
    expect(seen).toEqual([
      "registry/a.ts (type)",
      "b/b.ts",
      "registry/d.ts",
      "registry/e.ts (type)",
      "registry/side.ts",
      "registry/lazy.ts",
      "registry/t.ts (type)",
    ]);
  });

  it("fails an SDK import outside src/mcp and src/proxy/sdk, type-only or not", () => {
    expect(
      rules({
        "registry/r.ts": 'import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";',
        "artifacts/a.ts": 'import { McpError } from "@modelcontextprotocol/sdk/types.js";',
        "proxy/core.ts": 'import type { Server } from "@modelcontextprotocol/sdk/server/index.js";',
        "mcp/ok.ts": 'import type { Server } from "@modelcontextprotocol/sdk/server/index.js";',
        "proxy/sdk/ok.ts": 'import { Server } from "@modelcontextprotocol/sdk/server/index.js";',
      }),
    ).toEqual([
      "sdk-outside-mcp registry/r.ts",
      "sdk-outside-mcp artifacts/a.ts",
      "sdk-outside-mcp proxy/core.ts",
    ]);
  });

  it("fails a value import of the SDK inside src/mcp (the package must load without it)", () => {
    expect(
      rules({
        "mcp/v1/host.ts": 'import { McpError } from "@modelcontextprotocol/sdk/types.js";',
        "mcp/v2/host.ts": 'import { type A, B } from "@modelcontextprotocol/server";',
        "mcp/v2/types.ts": 'import { type A, type B } from "@modelcontextprotocol/server";',
      }),
    ).toEqual(["sdk-value-import mcp/v1/host.ts", "sdk-value-import mcp/v2/host.ts"]);
  });

  it("fails internal/ importing a piece, and src/mcp importing a piece", () => {
    expect(
      rules({
        "internal/a.ts": 'import { x } from "../registry/r.js";\nimport { e } from "../errors/e.js";',
        "internal/b.ts": 'import type { Y } from "../bridge/types.js";\nimport { m } from "../media/m.js";',
        "mcp/host.ts": 'import { R } from "../registry/r.js";\nimport { i } from "../internal/i.js";',
        "registry/r.ts": 'import { a } from "../internal/a.js";',
        "bridge/types.ts": "export type Y = 1;",
        "errors/e.ts": "",
        "media/m.ts": "",
        "internal/i.ts": "",
      }),
    ).toEqual([
      "internal-imports-piece internal/a.ts",
      "internal-imports-piece internal/b.ts",
      "mcp-imports-piece mcp/host.ts",
      "cycle internal/a.ts",
      "folder-cycle internal",
    ]);
  });

  it("fails scope/ importing anything but shared leaves (an adapter, a piece), type-only or not", () => {
    expect(
      rules({
        "scope/scope.ts":
          'import { scopeSourceOf } from "../mcp/scope-source.js";\nimport { E } from "../errors/e.js";',
        "scope/types.ts":
          'import type { StoredFile } from "../storage/types.js";\nimport { i } from "../internal/i.js";',
        "mcp/scope-source.ts": "export const scopeSourceOf = 1;",
        "storage/types.ts": "export type StoredFile = 1;",
        "errors/e.ts": "export class E {}",
        "internal/i.ts": "export const i = 1;",
      }),
    ).toEqual(["scope-imports-piece scope/scope.ts", "scope-imports-piece scope/types.ts"]);
  });

  it("fails a cycle, type-only edges included, and reports each once", () => {
    const found = checkImportGraph(
      graphOf({
        "a/a.ts": 'import { b } from "../b/b.js";',
        "b/b.ts": 'import type { C } from "../c/c.js";',
        "c/c.ts": 'import { a } from "../a/a.js";',
        "d/d.ts": 'import { a } from "../a/a.js";',
        "e/self.ts": 'import { x } from "./self.js";',
      }),
    );
    expect(found.filter((v) => v.rule === "cycle")).toEqual([
      { rule: "cycle", file: "a/a.ts", detail: "a/a.ts -> b/b.ts -> c/c.ts -> a/a.ts" },
      { rule: "cycle", file: "e/self.ts", detail: "e/self.ts -> e/self.ts" },
    ]);
  });

  it("fails a core folder importing a transfer, driver or proxy folder, type-only included; the wire leaves stay core", () => {
    expect(
      rules({
        "bridge/a.ts": 'import { r } from "../http/create-file-routes.js";',
        "registry/b.ts": 'import type { S } from "../s3/s3-store.js";',
        "storage/c.ts": 'import { p } from "../proxy/config.js";',
        "artifacts/d.ts": 'import { t } from "../uploads/tus/service.js";',
        "links/ok.ts":
          'import { h } from "../uploads/upload-handle.js";\nimport { w } from "../uploads/files-wire.js";',
        "uploads/upload-handle.ts": 'import { n } from "../node/index.js";',
        "uploads/files-wire.ts": 'import { e } from "../errors/e.js";',
        "uploads/ok.ts": 'import { s } from "../s3/s3-store.js";\nimport { b } from "../bridge/a.js";',
        "http/create-file-routes.ts": "",
        "s3/s3-store.ts": "",
        "proxy/config.ts": "",
        "uploads/tus/service.ts": "",
        "node/index.ts": "",
        "errors/e.ts": "",
      }).filter((v) => v.startsWith("core-imports-outer")),
    ).toEqual([
      "core-imports-outer bridge/a.ts",
      "core-imports-outer registry/b.ts",
      "core-imports-outer storage/c.ts",
      "core-imports-outer artifacts/d.ts",
      "core-imports-outer uploads/upload-handle.ts",
    ]);
  });

  it("fails http/ importing the ticket protocol or the routes, type-only included", () => {
    expect(
      rules({
        "http/cors.ts": 'import type { RequestView } from "../uploads/request-view.js";',
        "http/responses.ts": 'import type { ResolvedRouteOptions } from "../routes/options.js";',
        "http/ok.ts": 'import { e } from "../errors/e.js";\nimport type { R } from "./request-view.js";',
        "http/request-view.ts": "export type R = 1;",
        "uploads/request-view.ts": "export type RequestView = 1;",
        "uploads/ok.ts": 'import type { R } from "../http/request-view.js";',
        "routes/options.ts": 'import { c } from "../http/ok.js";\nimport { u } from "../uploads/ok.js";',
        "errors/e.ts": "",
      }).filter((v) => v.startsWith("http-imports-protocol")),
    ).toEqual(["http-imports-protocol http/cors.ts", "http-imports-protocol http/responses.ts"]);
  });

  it("fails two folders that import each other without any file cycle, a type-only import included", () => {
    const files = {
      "registry/handlers.ts": 'import { bridge } from "../bridge/file-bridge.js";',
      "bridge/file-bridge.ts": "export const bridge = 1;",
      "bridge/options.ts": 'import type { Registry } from "../registry/types.js";',
      "registry/types.ts": "export type Registry = 1;",
    };
    const found = checkImportGraph(graphOf(files));
    expect(found.filter((v) => v.rule === "cycle")).toEqual([]);
    expect(found).toEqual([
      {
        rule: "folder-cycle",
        file: "bridge",
        detail:
          "bridge -> registry -> bridge (bridge/options.ts -> registry/types.ts; registry/handlers.ts -> bridge/file-bridge.ts); folders in the knot: bridge, registry",
      },
    ]);
    // Without the type-only import the folders are layered again.
    const { "bridge/options.ts": _typeOnly, ...layered } = files;
    expect(rules(layered)).toEqual([]);
  });

  it("fails a folder cycle through a third folder, reported once with every folder in it", () => {
    const found = checkImportGraph(
      graphOf({
        "uploads/a.ts": 'import { b } from "../ui/b.js";',
        "ui/b.ts": 'import { c } from "../routes/c.js";\nexport const b = 1;',
        "routes/c.ts": 'import { d } from "../uploads/d.js";\nexport const c = 1;',
        "uploads/d.ts": "export const d = 1;",
        "storage/s.ts": "export const s = 1;",
        "routes/e.ts": 'import { s } from "../storage/s.js";',
      }),
    );
    expect(found.map((v) => `${v.rule} ${v.file}`)).toEqual(["folder-cycle routes"]);
    expect(found[0]?.detail).toMatch(
      /^routes -> uploads -> ui -> routes .*folders in the knot: routes, ui, uploads$/,
    );
  });

  it("does not count the root entry (src/index.ts) as a folder", () => {
    expect(
      rules({
        "index.ts": 'export { r } from "./registry/r.js";',
        "registry/r.ts": 'import { i } from "../internal/i.js";\nexport const r = 1;',
        "internal/i.ts": "export const i = 1;",
      }),
    ).toEqual([]);
  });

  it("passes an acyclic graph that keeps the rules", () => {
    expect(
      rules({
        "index.ts": 'export { R } from "./registry/r.js";',
        "registry/r.ts": 'import { h } from "../mcp/host.js";\nimport { i } from "../internal/i.js";',
        "mcp/host.ts":
          'import type { S } from "@modelcontextprotocol/sdk/server/index.js";\nimport { e } from "../errors/e.js";',
        "internal/i.ts": 'import { e } from "../errors/e.js";',
        "errors/e.ts": "",
      }),
    ).toEqual([]);
  });
});

describe("browser-only sources", () => {
  it("are never imported by the package", () => {
    expect(rules({ "ui/page.ts": 'import { x } from "./client/widget-main.js";' })).toEqual([
      "browser-only-imported ui/page.ts",
    ]);
  });
});

describe("run-time SDK use", () => {
  it("is allowed in src/proxy/sdk only, and no SDK-free entry point may reach it", () => {
    expect(
      rules({
        "proxy/sdk/server.ts": 'import { Server } from "@modelcontextprotocol/sdk/server/index.js";',
        "proxy/index.ts": 'import { s } from "./sdk/server.js";',
      }),
    ).toEqual([]);
    expect(
      rules({
        "proxy/sdk/server.ts": 'import { Server } from "@modelcontextprotocol/sdk/server/index.js";',
        "index.ts": 'import { s } from "./proxy/sdk/server.js";',
      }),
    ).toEqual(["sdk-reachable-from-entry proxy/sdk/server.ts"]);
    // The port's own folders get no run-time exemption, wherever the proxy used to live.
    expect(
      rules({
        "mcp/proxy/server.ts": 'import { Server } from "@modelcontextprotocol/sdk/server/index.js";',
        "mcp/upstream/client.ts": 'import { r } from "../../registry/r.js";',
        "registry/r.ts": "",
      }),
    ).toEqual(["sdk-value-import mcp/proxy/server.ts", "mcp-imports-piece mcp/upstream/client.ts"]);
  });
});
