import { join } from "node:path";
import ts from "typescript";
import { expect, it } from "vitest";
import { repoRoot } from "../support/helpers.js";

// Same rule as test/docs/tsdoc.test.ts, for the ./s3 and ./redis entry points and the new storage types.
it("every export of ./s3 and ./redis (and the feed/catalog types) has a TSDoc @example", () => {
  const entries = ["src/s3/index.ts", "src/redis/index.ts", "src/storage/types.ts"].map((path) =>
    join(repoRoot, path),
  );
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
  expect(missing.sort()).toEqual([]);
}, 60_000);
