/**
 * Reads the package's public surface the way a consumer sees it: every entry point tsup builds
 * (the CLI aside) and the names each exports, values and types apart, by the TypeScript checker.
 * Shared by the pinning test (public-surface.test.ts) and scripts/measure-surface.ts.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The entry points tsup builds, by name (`index`, `node`, `storage`, …), without the CLI. */
export function entryPoints(): Array<[string, string]> {
  const tsup = readFileSync(join(root, "tsup.config.ts"), "utf8");
  return [...tsup.matchAll(/^\s+"?([\w-]+)"?: "(src\/[^"]+\.ts)",$/gm)]
    .map((m) => [m[1] as string, join(root, m[2] as string)] as [string, string])
    .filter(([name]) => name !== "cli");
}

export interface EntrySurface {
  values: string[];
  types: string[];
}

export function entrySurfaces(): Record<string, EntrySurface> {
  const list = entryPoints();
  const program = ts.createProgram(
    list.map(([, file]) => file),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      skipLibCheck: true,
    },
  );
  const checker = program.getTypeChecker();
  const out: Record<string, EntrySurface> = {};
  for (const [name, file] of list) {
    const source = program.getSourceFile(file);
    const moduleSymbol = source && checker.getSymbolAtLocation(source);
    if (!moduleSymbol) throw new Error(`cannot read ${file}`);
    const surface: EntrySurface = { values: [], types: [] };
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      (symbol.flags & ts.SymbolFlags.Value ? surface.values : surface.types).push(exported.name);
    }
    surface.values.sort();
    surface.types.sort();
    out[name] = surface;
  }
  return out;
}
