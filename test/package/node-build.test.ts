/**
 * scripts/package/node-build.ts on a small package of its own (issue 39): the other entries import
 * the root's modules through stand-ins exporting the names their sources' import and export lists
 * name. A name the lists spell oddly must reach the output or fail the build, never go missing.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
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
  await rm(dir, { recursive: true, force: true });
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
});
