/**
 * The README's reference sections are the docs pages of the pieces, included verbatim so the two
 * never drift: edit docs/<piece>.md, then run `npm run readme`. A test fails when the README is stale.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The docs pages included in the README, in order. */
export const README_PAGES = [
  "file-bridge.md",
  "storage.md",
  "resource-registry.md",
  "signed-urls.md",
  "http-routes.md",
  "uploads-and-artifacts.md",
];

const START = "<!-- pieces:start -->";
const END = "<!-- pieces:end -->";

/** Rewrites a docs page's relative links so they work from the repository root. */
function rebaseLinks(markdown: string): string {
  return markdown.replace(/\]\((?!https?:|#|mailto:)(\.\/)?([^)\s]+)\)/g, (_match, _dot, target: string) =>
    target.startsWith("../") ? `](${target.slice(3)})` : `](docs/${target})`,
  );
}

/** The README with its reference sections rebuilt from the docs pages. */
export function renderReadme(readme: string, readPage: (name: string) => string): string {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`README.md needs ${START} and ${END} markers`);
  const sections = README_PAGES.map(
    (name) =>
      `<!-- from docs/${name}: edit it there, then run npm run readme -->\n\n${rebaseLinks(readPage(name).trim())}\n`,
  );
  return `${readme.slice(0, start + START.length)}\n\n${sections.join("\n")}\n${readme.slice(end)}`;
}

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const path = join(root, "README.md");
  const next = renderReadme(readFileSync(path, "utf8"), (name) =>
    readFileSync(join(root, "docs", name), "utf8"),
  );
  writeFileSync(path, next);
  console.log("README.md rebuilt from", README_PAGES.join(", "));
}
