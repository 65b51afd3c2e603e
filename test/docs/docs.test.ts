import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const read = (path: string) => readFileSync(join(root, path), "utf8");

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const heading = !fenced && /^#{1,6} (.+)$/.exec(line);
    if (!heading) continue;
    const base = (heading[1] as string)
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/ /g, "-");
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

function linksOf(markdown: string): string[] {
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, "").replace(/`[^`]*`/g, "");
  return [...withoutCode.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string);
}

const pages = [
  "README.md",
  ...readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
  ...readdirSync(join(root, "examples"))
    .map((name) => `examples/${name}/README.md`)
    .filter((path) => existsSync(join(root, path))),
];

/** Prose paragraphs of a page: no code blocks, tables, headings or list markers. */
function paragraphsOf(markdown: string): string[] {
  return markdown
    .replace(/```[\s\S]*?```/g, "")
    .split(/\n\s*\n/)
    .map((block) =>
      block
        .replace(/^\s*(?:[-*]|\d+\.)\s+/gm, "")
        .replace(/\s+/g, " ")
        .trim(),
    )
    .filter((block) => block.length > 0 && !block.startsWith("|") && !block.startsWith("#"));
}

describe("docs", () => {
  it("README stays a five-minute read (at most 300 lines)", () => {
    expect(read("README.md").split("\n").length).toBeLessThanOrEqual(300);
  });

  it("README copies no prose from docs/ (docs/ is the reference)", () => {
    const docs = pages
      .filter((page) => page.startsWith("docs/"))
      .map((page) => read(page).replace(/\s+/g, " "))
      .join("\n");
    // A sentence-sized run of words the README shares with a docs page means a copy that can drift.
    const copied = paragraphsOf(read("README.md")).flatMap((paragraph) => {
      const words = paragraph.split(" ");
      const runs: string[] = [];
      for (let i = 0; i + 12 <= words.length; i++) {
        const run = words.slice(i, i + 12).join(" ");
        if (docs.includes(run)) runs.push(run);
      }
      return runs.slice(0, 1);
    });
    expect(copied).toEqual([]);
  });

  it.each(pages)("%s links only to files and headings that exist", (page) => {
    const markdown = read(page);
    const broken: string[] = [];
    for (const link of linksOf(markdown)) {
      if (/^(https?|mailto):/.test(link)) continue;
      const [target = "", hash] = link.split("#");
      const file = target === "" ? page : join(dirname(page), target);
      if (!existsSync(join(root, file))) {
        broken.push(link);
        continue;
      }
      if (hash && file.endsWith(".md") && !anchorsOf(read(file)).has(hash)) broken.push(link);
    }
    expect(broken).toEqual([]);
  });
});
