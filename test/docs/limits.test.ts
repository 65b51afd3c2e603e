import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as limits from "../../src/internal/limits.js";
import { repoRoot } from "../support/helpers.js";

// Every default limit is defined once (src/internal/limits.ts) and documented once (docs/limits.md).
// This test reads both and fails when they disagree, so the table cannot drift from the code.

const read = (path: string) => readFileSync(join(repoRoot, path), "utf8");
const source = read("src/internal/limits.ts");
const page = read("docs/limits.md");

/** The constants `limits.ts` declares, by parsing its source. */
const declared = [...source.matchAll(/^export const ([A-Z0-9_]+)\b/gm)].map((m) => m[1] as string);

/**
 * The rows of the page's limits table (its first table: the one with a `constant` column), each a
 * map from column header to cell text. Other tables on the page (memory over time) are prose.
 */
function tableRows(markdown: string): Array<Record<string, string>> {
  const all = markdown.split("\n");
  const first = all.findIndex((line) => line.startsWith("|"));
  const end = all.findIndex((line, i) => i > first && !line.startsWith("|"));
  const lines = all.slice(first, end === -1 ? undefined : end);
  const cells = (line: string) =>
    line
      .slice(1, -1)
      .split("|")
      .map((cell) => cell.trim());
  const [header, , ...body] = lines;
  if (!header) throw new Error("docs/limits.md has no table");
  const names = cells(header);
  return body.map((line) => Object.fromEntries(cells(line).map((cell, i) => [names[i], cell])));
}

/** How the table writes a value: the literal as in code, inside the cell's first code span. */
function literal(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const members = Object.entries(value).map(([key, member]) => `${key}: ${literal(member)}`);
    return `{ ${members.join(", ")} }`;
  }
  throw new Error(`no table form for ${typeof value} values; extend test/docs/limits.test.ts`);
}

const UNITS: Record<string, number> = { KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 };
const rows = tableRows(page);
const rowsFor = (name: string) => rows.filter((row) => row.constant === `\`${name}\``);

describe("docs/limits.md", () => {
  it("src/internal/limits.ts declares what it exports", () => {
    expect(declared.length).toBeGreaterThan(0);
    expect([...declared].sort()).toEqual(Object.keys(limits).sort());
  });

  it.each(declared)("documents %s with the value the code has", (name) => {
    const value = (limits as Record<string, unknown>)[name];
    const documented = rowsFor(name);
    expect(documented.length, `${name} has no row in docs/limits.md`).toBeGreaterThan(0);
    for (const row of documented) {
      const cell = row.default ?? "";
      expect(/`([^`]*)`/.exec(cell)?.[1]).toBe(literal(value));
      // A size written out in units next to the literal, "(50 MiB)", must say the same number.
      const unit = /\((\d+) (KiB|MiB|GiB)\)/.exec(cell);
      if (unit) expect(Number(unit[1]) * (UNITS[unit[2] as string] as number)).toBe(value);
    }
  });

  it("names no constant that limits.ts does not define", () => {
    const named = rows.map((row) => row.constant ?? "").filter((cell) => cell !== "—");
    const unknown = named.map((cell) => cell.replace(/`/g, "")).filter((name) => !declared.includes(name));
    expect(unknown).toEqual([]);
  });

  it("is the only page that states the byte-sized defaults", () => {
    const pages = [
      "README.md",
      ...readdirSync(join(repoRoot, "docs"))
        .filter((name) => name.endsWith(".md") && name !== "limits.md")
        .map((name) => `docs/${name}`),
    ];
    const sizes = Object.values(limits).filter((value) => typeof value === "number" && value >= 1024);
    const restated = pages.flatMap((path) =>
      sizes.filter((size) => new RegExp(`\\b${size}\\b`).test(read(path))).map((size) => `${path}: ${size}`),
    );
    expect(restated).toEqual([]);
  });
});
