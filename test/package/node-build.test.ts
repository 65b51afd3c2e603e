/**
 * scripts/package/node-build.ts on a small package of its own (issue 39): the other entries import
 * the root's modules through stand-ins exporting the names their sources' import and export lists
 * name. A name the lists spell oddly must reach the output or fail the build, never go missing. An
 * entry named `narrow` loads the root's modules it reaches and no other.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildForNode } from "../../scripts/package/node-build.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-node-build-"));
});
afterAll(async () => {
  if (!process.env.KEEP) await rm(dir, { recursive: true, force: true });
});

async function buildAndLoad(
  files: Record<string, string>,
): Promise<[Record<string, unknown>, Record<string, unknown>]> {
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  await buildForNode({
    entries: { "node/index": join(dir, "index.ts"), "node/other": join(dir, "other.ts") },
    root: "node/index",
    outDir: join(dir, "out"),
    plugins: [],
    noExternal: [],
    external: [],
    lineLimit: 160,
  });
  const load = (name: string) => import(pathToFileURL(join(dir, "out", "node", `${name}.js`)).href);
  return Promise.all([load("index"), load("other")]);
}

describe("the Node build (scripts/package/node-build.ts)", () => {
  it("keeps a name whose import or export list holds comments (with commas) and type-only items", async () => {
    const [root, other] = await buildAndLoad({
      "errors.ts": 'export class Oops extends Error {}\nexport const code = "X";\nexport type Kind = "a";\n',
      "index.ts": 'export { Oops, code } from "./errors.js";\n',
      "relay.ts":
        'export {\n  // the class, renamed, for the other entry\n  Oops as Again,\n} from "./errors.js";\n',
      "other.ts": [
        'import { /* the code, first */ code, type Kind } from "./errors.js";',
        'export { Again } from "./relay.js";',
        'export const kind: Kind = "a";',
        "export const both = () => code;",
        "",
      ].join("\n"),
    });
    expect(other.Again).toBe(root.Oops);
    expect((other.both as () => string)()).toBe("X");
  });

  it("gives a narrow entry's share of the root chunks of its own, with every part of a shared module in the lowest one", async () => {
    const files: Record<string, string> = {
      // Reached by both the zod-free entry and the narrow one; `helper` is imported by the root's
      // modules only, never by an entry (as `writableDisk` is): it must still sit in the shared chunk.
      "shared.ts": 'export function helper() { return "shared"; }\n',
      "light-only.ts":
        'import { helper } from "./shared.js";\nexport const light = () => "light-only " + helper();\n',
      "narrow-only.ts":
        'import * as z from "zod/v4";\nimport { helper } from "./shared.js";\nexport const narrow = () => "narrow-only " + typeof z + helper();\n',
      "rest.ts": 'import * as z from "zod/v4";\nexport const rest = () => "rest-only " + typeof z;\n',
      "index.ts": [
        'export { light } from "./light-only.js";',
        'export { narrow } from "./narrow-only.js";',
        'export { rest } from "./rest.js";',
        "",
      ].join("\n"),
      "light.ts": 'export { light } from "./light-only.js";\n',
      "narrow.ts": 'export { narrow } from "./narrow-only.js";\n',
    };
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    const out = join(dir, "narrow-out");
    await buildForNode({
      entries: {
        "node/index": join(dir, "index.ts"),
        "node/light": join(dir, "light.ts"),
        "node/narrow": join(dir, "narrow.ts"),
      },
      root: "node/index",
      narrow: "node/narrow",
      outDir: out,
      plugins: [],
      noExternal: [],
      external: [],
      lineLimit: 160,
    });
    /** The text of every file `name` loads statically, itself included. */
    const loads = async (name: string) => {
      const seen = new Map<string, string>();
      const visit = async (file: string) => {
        if (seen.has(file)) return;
        const text = await readFile(join(out, "node", file), "utf8");
        seen.set(file, text);
        for (const [, next] of text.matchAll(/(?:from|import)\s*"\.\/([^"]+)"/g)) await visit(next as string);
      };
      await visit(`${name}.js`);
      return [...seen.values()].join("\n");
    };
    const [root, light, narrow] = await Promise.all([loads("index"), loads("light"), loads("narrow")]);
    for (const code of ["shared", "light-only", "narrow-only", "rest-only"]) expect(root).toContain(code);
    expect(narrow).toContain("narrow-only");
    expect(narrow).toContain('"shared"');
    expect(narrow).not.toContain("light-only");
    expect(narrow).not.toContain("rest-only");
    expect(light).toContain('"shared"');
    expect(light).not.toContain("zod");
  });
});
