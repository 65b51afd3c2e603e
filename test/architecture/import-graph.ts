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
    | "browser-only-imported"
    | "cycle";
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
/** Folders `mcp/` may import besides itself: the port sits below every piece. */
export const MCP_MAY_IMPORT: readonly string[] = ["mcp", "internal", "errors"];

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
  return violations;
}

export const SRC_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "src");
