import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/helpers.js";

/** Public exports (every entry point) whose declarations have no TSDoc `@example`. */
function exportsWithoutExample(): string[] {
  // Every entry point tsup builds (the root and each subpath of package.json "exports").
  const tsup = readFileSync(join(repoRoot, "tsup.config.ts"), "utf8");
  const entries = [...tsup.matchAll(/^\s+[\w-]+: "(src\/[^"]+\.ts)",$/gm)].map((m) =>
    join(repoRoot, m[1] as string),
  );
  expect(entries.map((e) => e.slice(repoRoot.length + 1))).toContain("src/testing/index.ts");
  const program = ts.createProgram(entries, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const missing: string[] = [];
  for (const entry of entries) {
    const source = program.getSourceFile(entry);
    const moduleSymbol = source && checker.getSymbolAtLocation(source);
    if (!moduleSymbol) throw new Error(`cannot read ${entry}`);
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const hasExample = (symbol.declarations ?? []).some((declaration) =>
        ts.getJSDocTags(declaration).some((tag) => tag.tagName.text === "example"),
      );
      if (!hasExample) missing.push(exported.name);
    }
  }
  return missing.sort();
}

describe("TSDoc", () => {
  it("every public export has an @example", () => {
    expect(exportsWithoutExample()).toEqual([]);
  }, 60_000);
});
