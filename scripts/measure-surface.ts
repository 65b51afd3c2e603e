/**
 * Measures the package's shape for reviews (issue 20): the public surface (names per entry point,
 * values and types apart), `*Options` types, files over 500 lines, functions over 80 own lines and
 * folder cycles. Reads the sources with the TypeScript compiler; prints JSON, or a short table with
 * `--table`.
 *
 *   npx tsx scripts/measure-surface.ts [--table]
 *
 * "Own lines" of a function: its lines minus the lines of the functions nested in it (a callback
 * passed inline counts for itself, not for its parent), so a composition root that defines many
 * small closures is measured by what it does itself.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import {
  folderComponents,
  folderCycles,
  type ImportGraph,
  readImportGraph,
} from "../test/architecture/import-graph.js";
import { entrySurfaces as surfaces } from "../test/architecture/public-surface.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const srcRoot = join(root, "src");

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "generated") files.push(...sourceFiles(path));
    } else if (entry.name.endsWith(".ts")) files.push(path);
  }
  return files;
}

const rel = (file: string) => relative(root, file).split(sep).join("/");

function isFunctionLike(node: ts.Node): node is ts.FunctionLikeDeclaration {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node)
  );
}

function nameOf(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  const named = node.name?.getText(source);
  if (named) {
    const owner = node.parent && ts.isClassLike(node.parent) ? node.parent.name?.getText(source) : undefined;
    return owner ? `${owner}.${named}` : named;
  }
  if (ts.isConstructorDeclaration(node)) {
    const owner = ts.isClassLike(node.parent) ? node.parent.name?.getText(source) : undefined;
    return `${owner ?? "class"}.constructor`;
  }
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText(source);
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText(source);
  if (parent && ts.isPropertyDeclaration(parent)) return parent.name.getText(source);
  return "(anonymous)";
}

export interface LongFunction {
  file: string;
  name: string;
  line: number;
  ownLines: number;
}

/** Functions whose own lines (nested functions excluded) exceed `limit`. */
export function longFunctions(files: string[], limit: number): LongFunction[] {
  const found: LongFunction[] = [];
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
    const span = (node: ts.Node) => lineOf(node.getEnd()) - lineOf(node.getStart(source)) + 1;
    /** Lines of the function bodies directly nested in `node` (not counting deeper ones twice). */
    const nestedLines = (node: ts.Node): number => {
      let total = 0;
      ts.forEachChild(node, function walk(child) {
        if (isFunctionLike(child) && child.body) total += span(child);
        else ts.forEachChild(child, walk);
      });
      return total;
    };
    const visit = (node: ts.Node) => {
      if (isFunctionLike(node) && node.body) {
        const own = span(node) - nestedLines(node.body);
        if (own > limit) {
          found.push({
            file: rel(file),
            name: nameOf(node, source),
            line: lineOf(node.getStart(source)) + 1,
            ownLines: own,
          });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found.sort((a, b) => b.ownLines - a.ownLines);
}

/** Declared `*Options` interfaces and type aliases in `src/`. */
function optionsTypes(files: string[]): string[] {
  const names = new Set<string>();
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false);
    for (const statement of source.statements) {
      if (
        (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) &&
        statement.name.text.endsWith("Options")
      ) {
        names.add(`${rel(file)}:${statement.name.text}`);
      }
    }
  }
  return [...names].sort();
}

/** Pairs of top-level folders that import each other directly, with the import counts each way. */
function mutualFolders(graph: ImportGraph): string[] {
  const top = (file: string) => (file.includes("/") ? file.slice(0, file.indexOf("/")) : "");
  const counts = new Map<string, number>();
  for (const [file, edges] of graph) {
    for (const edge of edges) {
      if (edge.target === undefined || !graph.has(edge.target)) continue;
      const from = top(file);
      const to = top(edge.target);
      if (from !== "" && to !== "" && from !== to)
        counts.set(`${from} ${to}`, (counts.get(`${from} ${to}`) ?? 0) + 1);
    }
  }
  return [...counts]
    .filter(([key]) => {
      const [from, to] = key.split(" ") as [string, string];
      return from < to && counts.has(`${to} ${from}`);
    })
    .map(([key, n]) => {
      const [from, to] = key.split(" ") as [string, string];
      return `${from} <-> ${to} (${n} imports one way, ${counts.get(`${to} ${from}`)} the other)`;
    });
}

function measure() {
  const files = sourceFiles(srcRoot);
  const surface = surfaces();
  const publicOptions = new Set(
    Object.values(surface).flatMap((s) => s.types.filter((n) => n.endsWith("Options"))),
  );
  const longFiles = files
    .map((file) => ({ file: rel(file), lines: readFileSync(file, "utf8").split("\n").length }))
    .filter(({ lines }) => lines > 500)
    .sort((a, b) => b.lines - a.lines);
  const graph = readImportGraph(srcRoot);
  const cycles = folderCycles(graph);
  const components = folderComponents(graph);
  return {
    root: {
      values: surface.index?.values.length ?? 0,
      types: surface.index?.types.length ?? 0,
    },
    entries: Object.fromEntries(
      Object.entries(surface).map(([name, s]) => [name, s.values.length + s.types.length]),
    ),
    totalExportedNames: Object.values(surface).reduce((n, s) => n + s.values.length + s.types.length, 0),
    distinctExportedNames: new Set(Object.values(surface).flatMap((s) => [...s.values, ...s.types])).size,
    optionsTypesDeclared: optionsTypes(files).length,
    optionsTypesPublic: publicOptions.size,
    filesOver500: longFiles,
    functionsOver80: longFunctions(files, 80),
    folderCycles: cycles.map((c, i) => `${c.join(" -> ")} (knot: ${components[i]?.join(", ")})`),
    mutualFolderPairs: mutualFolders(graph),
  };
}

const result = measure();
if (process.argv.includes("--table")) {
  const lines = [
    `root exports: ${result.root.values + result.root.types} (${result.root.values} values, ${result.root.types} types)`,
    `names per entry: ${Object.entries(result.entries)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}`,
    `total exported names across entries: ${result.totalExportedNames} (${result.distinctExportedNames} distinct)`,
    `*Options types: ${result.optionsTypesDeclared} declared in src/, ${result.optionsTypesPublic} public`,
    `files over 500 lines: ${result.filesOver500.length}`,
    ...result.filesOver500.map(({ file, lines }) => `  ${lines}  ${file}`),
    `functions over 80 own lines: ${result.functionsOver80.length}`,
    ...result.functionsOver80.map((f) => `  ${f.ownLines}  ${f.file}:${f.line} ${f.name}`),
    `folder cycles: ${result.folderCycles.length}`,
    ...result.folderCycles.map((c) => `  ${c}`),
    `folder pairs importing each other: ${result.mutualFolderPairs.length}`,
    ...result.mutualFolderPairs.map((c) => `  ${c}`),
  ];
  console.log(lines.join("\n"));
} else {
  console.log(JSON.stringify(result, null, 2));
}
