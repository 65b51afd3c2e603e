import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { SRC_ROOT } from "./import-graph.js";

/**
 * The size the model codebases keep to (issue 39's review: none of them has a source file over 700
 * lines). A file that grows past it is split at its visible parts, not let through.
 */
const MAX_LINES = 700;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "generated" ? [] : sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

describe("src/ file sizes", () => {
  it(`has no hand-written source file over ${MAX_LINES} lines`, () => {
    const files = sourceFiles(SRC_ROOT);
    expect(files.length).toBeGreaterThan(100);
    const over = files
      .map((file) => ({
        file: relative(SRC_ROOT, file),
        lines: readFileSync(file, "utf8").split("\n").length,
      }))
      .filter(({ lines }) => lines > MAX_LINES);
    expect(over).toEqual([]);
  });
});
