import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/helpers.js";

describe("mcp-file-bridge/ui TSDoc", () => {
  it("every export of src/ui/index.ts has an @example", () => {
    const entry = join(repoRoot, "src", "ui", "index.ts");
    const program = ts.createProgram([entry], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      skipLibCheck: true,
    });
    const checker = program.getTypeChecker();
    const source = program.getSourceFile(entry);
    const moduleSymbol = source && checker.getSymbolAtLocation(source);
    if (!moduleSymbol) throw new Error("cannot read src/ui/index.ts");
    const exported = checker.getExportsOfModule(moduleSymbol);
    const missing = exported
      .filter((symbol) => {
        const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
        return !(target.declarations ?? []).some((declaration) =>
          ts.getJSDocTags(declaration).some((tag) => tag.tagName.text === "example"),
        );
      })
      .map((symbol) => symbol.name);
    expect(exported.length).toBeGreaterThan(15);
    expect(missing).toEqual([]);
  }, 60_000);
});
