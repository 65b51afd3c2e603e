import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, posix, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

/**
 * The import graph of `src/` and the rules it must keep (docs/architecture.md, "Who may import
 * whom"). Plain TypeScript: every import, `export … from` and `import()` specifier of every file is
 * read with the compiler's parser, so comments and strings never count.
 */

export interface ImportEdge {
  /** The specifier as written. */
  specifier: string;
  /** The imported file, relative to the source root (`registry/options.ts`), for relative specifiers. */
  target?: string;
  /** `import type` / `export type` (erased at run time). */
  typeOnly: boolean;
}

/** File (relative to the source root, `/`-separated) → its imports. */
export type ImportGraph = Map<string, ImportEdge[]>;

export interface Violation {
  rule:
    | "sdk-outside-mcp"
    | "sdk-value-import"
    | "sdk-reachable-from-entry"
    | "internal-imports-piece"
    | "mcp-imports-piece"
    | "scope-imports-piece"
    | "browser-only-imported"
    | "cycle"
    | "folder-cycle"
    | "core-imports-outer"
    | "http-imports-protocol";
  file: string;
  detail: string;
}

const SDK = /^@modelcontextprotocol\//;
/**
 * The only folders that may import the SDK: `mcp/` (the host port, types only) and `proxy/sdk/` (the
 * proxy's own MCP client and server, which use the SDK at run time and are reached only through
 * `mcp-file-bridge/proxy` and the CLI). The rule "sdk-reachable-from-entry" checks that no other entry
 * point can reach them.
 */
export const SDK_FOLDERS: readonly string[] = ["mcp", "proxy/sdk"];
/** Of those, the one that may import the SDK as values. */
export const SDK_RUNTIME_FOLDERS: readonly string[] = ["proxy/sdk"];
/** Entry points that must load without any SDK installed (every one but the proxy and the CLI). */
export const SDK_FREE_ENTRIES: readonly string[] = [
  "index.ts",
  "node/index.ts",
  "storage/kit/index.ts",
  "testing/index.ts",
  "ui/index.ts",
  "s3/index.ts",
  "redis/index.ts",
];

function inFolder(file: string, folders: readonly string[]): boolean {
  return folders.some((dir) => file.startsWith(`${dir}/`));
}

/** Top-level folder of a file (`registry`), or `""` for files directly in the root (`index.ts`). */
function folderOf(file: string): string {
  const slash = file.indexOf("/");
  return slash < 0 ? "" : file.slice(0, slash);
}

function isTypeOnly(node: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  if (ts.isExportDeclaration(node)) {
    if (node.isTypeOnly) return true;
    const clause = node.exportClause;
    return clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0
      ? clause.elements.every((element) => element.isTypeOnly)
      : false;
  }
  const clause = node.importClause;
  if (!clause) return false; // a side-effect import always runs
  if (clause.isTypeOnly) return true;
  const bindings = clause.namedBindings;
  return (
    clause.name === undefined &&
    bindings !== undefined &&
    ts.isNamedImports(bindings) &&
    bindings.elements.length > 0 &&
    bindings.elements.every((element) => element.isTypeOnly)
  );
}

/** The imports of one file's text. */
export function importsOf(file: string, text: string): ImportEdge[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const edges: ImportEdge[] = [];
  const add = (specifier: string, typeOnly: boolean) => {
    const edge: ImportEdge = { specifier, typeOnly };
    if (specifier.startsWith(".")) {
      const resolved = posix.normalize(posix.join(posix.dirname(file), specifier)).replace(/\.js$/, ".ts");
      edge.target = resolved;
    }
    edges.push(edge);
  };
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) add(node.moduleSpecifier.text, isTypeOnly(node));
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      add(node.arguments[0].text, false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const literal = node.argument.literal;
      if (ts.isStringLiteral(literal)) add(literal.text, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return edges;
}

/** The import graph of every `.ts` file under `root`. */
/**
 * Browser-only sources: bundled into strings at build time (`npm run build:ui`), never imported by
 * the package (the rule "browser-only-imported" checks that), so the Node rules do not apply.
 */
export const BROWSER_ONLY: readonly string[] = ["ui/client"];

export function readImportGraph(root: string): ImportGraph {
  const graph: ImportGraph = new Map();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const rel = relative(root, path).split(sep).join("/");
      if (entry.isDirectory() && BROWSER_ONLY.includes(rel)) continue;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts")) {
        const file = relative(root, path).split(sep).join("/");
        graph.set(file, importsOf(file, readFileSync(path, "utf8")));
      }
    }
  };
  walk(root);
  return graph;
}

/** Folders `internal/` may import besides itself: shared leaves that import no piece either. */
export const INTERNAL_MAY_IMPORT: readonly string[] = ["internal", "errors", "media"];
/**
 * Folders `scope/` may import besides itself: shared leaves only. The storage kit and every piece
 * import `scope/`, so an adapter behind it would load with them; the adapters normalize their
 * request context before they call a piece instead.
 */
export const SCOPE_MAY_IMPORT: readonly string[] = ["scope", "internal", "errors"];
/** Folders `mcp/` may import besides itself: the port sits below every piece. */
export const MCP_MAY_IMPORT: readonly string[] = ["mcp", "internal", "errors"];

/**
 * The core (issue 39): what the root entry's light half is made of — `FileBridge`, the storage
 * contracts and built-in drivers, the registry, artifacts, links, signing, scope, errors, media, the
 * host port and the shared helpers. It imports no transfer folder (the routes, uploads, the Node
 * adapter, the upload page), no driver folder (S3, Redis) and no proxy folder, type-only imports
 * included: the dry run of a split into a core package and the rest.
 */
export const CORE_FOLDERS: readonly string[] = [
  "bridge",
  "storage",
  "registry",
  "artifacts",
  "links",
  "signing",
  "scope",
  "errors",
  "media",
  "mcp",
  "internal",
];
/** Transfer, driver and proxy folders: what the core must not import. */
export const OUTER_FOLDERS: readonly string[] = [
  "http",
  "routes",
  "uploads",
  "node",
  "ui",
  "s3",
  "redis",
  "proxy",
  "cli",
  "testing",
];
/**
 * The transport (`http/`: CORS, ranges, timeouts, the request view, the Node fast path) sits below
 * the ticket protocol (`uploads/`) and below `routes/`, which composes the two into
 * `createFileRoutes()`; it imports neither, type-only imports included (issue 39).
 */
export const HTTP_MAY_NOT_IMPORT: readonly string[] = ["uploads", "routes"];

/**
 * The wire format of upload handles and of the files extension's file values: leaves in `uploads/`
 * that `links/` writes into a tool result. They belong to the core side of a split; the rule checks
 * they import the core only.
 */
export const CORE_WIRE_FILES: readonly string[] = ["uploads/upload-handle.ts", "uploads/files-wire.ts"];

/** Every import cycle among the graph's files (each reported once, from its first file). */
function cycles(graph: ImportGraph): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, "open");
    stack.push(file);
    for (const edge of graph.get(file) ?? []) {
      const target = edge.target;
      if (target === undefined || !graph.has(target)) continue;
      const seen = state.get(target);
      if (seen === "open") found.push([...stack.slice(stack.indexOf(target)), target]);
      else if (seen === undefined) visit(target);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return found;
}

/** Folder → folders its files import (top-level folders of `src/`; files in the root itself excluded). */
function folderGraph(graph: ImportGraph): Map<string, Map<string, string>> {
  const folders = new Map<string, Map<string, string>>();
  for (const [file, edges] of graph) {
    const from = folderOf(file);
    if (from === "") continue;
    for (const edge of edges) {
      if (edge.target === undefined || !graph.has(edge.target)) continue;
      const to = folderOf(edge.target);
      if (to === "" || to === from) continue;
      let targets = folders.get(from);
      if (!targets) {
        targets = new Map();
        folders.set(from, targets);
      }
      // The first import seen names the edge in reports.
      if (!targets.has(to)) targets.set(to, `${file} -> ${edge.target}`);
    }
  }
  return folders;
}

/**
 * The sets of top-level folders that import each other, directly or through others (the strongly
 * connected components of the folder graph with more than one folder), type-only imports included;
 * each sorted, the sets sorted by their first folder.
 */
export function folderComponents(graph: ImportGraph): string[][] {
  const folders = folderGraph(graph);
  const targetsOf = (folder: string) => [...(folders.get(folder)?.keys() ?? [])].sort();
  const names = [...new Set([...folders.keys(), ...[...folders.values()].flatMap((t) => [...t.keys()])])];
  // Tarjan's strongly connected components.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  const connect = (folder: string) => {
    index.set(folder, index.size);
    low.set(folder, index.get(folder) as number);
    stack.push(folder);
    onStack.add(folder);
    for (const next of targetsOf(folder)) {
      if (!index.has(next)) {
        connect(next);
        low.set(folder, Math.min(low.get(folder) as number, low.get(next) as number));
      } else if (onStack.has(next)) {
        low.set(folder, Math.min(low.get(folder) as number, index.get(next) as number));
      }
    }
    if (low.get(folder) !== index.get(folder)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== folder);
    if (component.length > 1) components.push(component.sort());
  };
  for (const folder of names.sort()) if (!index.has(folder)) connect(folder);
  return components.sort((a, b) => (a[0] as string).localeCompare(b[0] as string));
}

/**
 * One folder cycle per folder component: the shortest way from its first folder back to itself
 * (e.g. `["mcp", "proxy", "mcp"]`).
 */
export function folderCycles(graph: ImportGraph): string[][] {
  const folders = folderGraph(graph);
  return folderComponents(graph).map((component) => {
    const start = component[0] as string;
    const inside = new Set(component);
    const previous = new Map<string, string>();
    const queue = [start];
    while (queue.length > 0) {
      const folder = queue.shift() as string;
      for (const next of [...(folders.get(folder)?.keys() ?? [])].sort()) {
        if (!inside.has(next)) continue;
        if (next === start) {
          const path: string[] = [];
          for (let at: string | undefined = folder; at !== undefined; at = previous.get(at)) path.unshift(at);
          return [...path, start];
        }
        if (!previous.has(next) && next !== start) {
          previous.set(next, folder);
          queue.push(next);
        }
      }
    }
    return [...component, start]; // unreachable: a component always has a way back
  });
}

/** The imports that make up a folder cycle, one per step (`proxy/a.ts -> mcp/b.ts`). */
export function folderCycleEdges(graph: ImportGraph, cycle: readonly string[]): string[] {
  const folders = folderGraph(graph);
  return cycle.slice(1).map((to, i) => folders.get(cycle[i] as string)?.get(to) ?? `${cycle[i]} -> ${to}`);
}

/** What breaks the rules. */
export function checkImportGraph(graph: ImportGraph): Violation[] {
  const violations: Violation[] = [];
  for (const [file, edges] of graph) {
    const folder = folderOf(file);
    for (const edge of edges) {
      if (SDK.test(edge.specifier)) {
        if (!inFolder(file, SDK_FOLDERS)) {
          violations.push({ rule: "sdk-outside-mcp", file, detail: edge.specifier });
        } else if (!edge.typeOnly && !inFolder(file, SDK_RUNTIME_FOLDERS)) {
          violations.push({ rule: "sdk-value-import", file, detail: edge.specifier });
        }
      }
      if (edge.target === undefined) continue;
      if (BROWSER_ONLY.some((dir) => edge.target?.startsWith(`${dir}/`))) {
        violations.push({ rule: "browser-only-imported", file, detail: edge.target });
      }
      const targetFolder = folderOf(edge.target);
      if (folder === "internal" && !INTERNAL_MAY_IMPORT.includes(targetFolder)) {
        violations.push({ rule: "internal-imports-piece", file, detail: edge.target });
      }
      if (folder === "scope" && !SCOPE_MAY_IMPORT.includes(targetFolder)) {
        violations.push({ rule: "scope-imports-piece", file, detail: edge.target });
      }
      const coreSide = CORE_FOLDERS.includes(folder) || CORE_WIRE_FILES.includes(file);
      if (coreSide && OUTER_FOLDERS.includes(targetFolder) && !CORE_WIRE_FILES.includes(edge.target)) {
        violations.push({ rule: "core-imports-outer", file, detail: edge.target });
      }
      if (folder === "http" && HTTP_MAY_NOT_IMPORT.includes(targetFolder)) {
        violations.push({ rule: "http-imports-protocol", file, detail: edge.target });
      }
      // The port sits below every piece.
      if (folder === "mcp" && !MCP_MAY_IMPORT.includes(targetFolder)) {
        violations.push({ rule: "mcp-imports-piece", file, detail: edge.target });
      }
    }
  }
  // Follow value imports from each SDK-free entry: none may reach a file that uses the SDK at run time.
  for (const entry of SDK_FREE_ENTRIES) {
    if (!graph.has(entry)) continue;
    const seen = new Set<string>([entry]);
    const queue = [entry];
    while (queue.length > 0) {
      const file = queue.shift() as string;
      for (const edge of graph.get(file) ?? []) {
        if (edge.typeOnly) continue;
        if (SDK.test(edge.specifier)) {
          violations.push({
            rule: "sdk-reachable-from-entry",
            file,
            detail: `${entry} -> ${edge.specifier}`,
          });
        }
        if (edge.target !== undefined && !seen.has(edge.target)) {
          seen.add(edge.target);
          queue.push(edge.target);
        }
      }
    }
  }
  for (const cycle of cycles(graph)) {
    violations.push({ rule: "cycle", file: cycle[0] as string, detail: cycle.join(" -> ") });
  }
  const components = folderComponents(graph);
  folderCycles(graph).forEach((cycle, i) => {
    violations.push({
      rule: "folder-cycle",
      file: cycle[0] as string,
      detail: `${cycle.join(" -> ")} (${folderCycleEdges(graph, cycle).join("; ")}); folders in the knot: ${components[i]?.join(", ")}`,
    });
  });
  return violations;
}

export const SRC_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "src");
