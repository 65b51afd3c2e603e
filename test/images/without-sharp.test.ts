/**
 * `sharp` is an optional peer: without it the package loads, shaping that was asked for fails with
 * `INVALID_OPTION` naming it, and shaping left on by default falls back to linking the image.
 */
import { join } from "node:path";
import { expect, it } from "vitest";
import { repoRoot, runWithoutPackages } from "../support/helpers.js";

it("works without sharp installed: the root loads, asked-for shaping names sharp, default shaping links", async () => {
  const src = (path: string) => JSON.stringify(join(repoRoot, path));
  const out = await runWithoutPackages(
    "sharp",
    "sharp",
    [
      `const lib = await import(${src("src/index.ts")});`,
      `const { shapeImage } = await import(${src("src/images/index.ts")});`,
      "const code = (p) => p.then(() => 'ok', (e) => e.code + ':' + e.data?.package);",
      "const image = { type: 'image', data: Buffer.alloc(600000, 1).toString('base64'), mimeType: 'image/png' };",
      "const result = { content: [image] };",
      "const auto = await new lib.Artifacts({ store: lib.memoryStore() }).fit(result, { scope: 's' });",
      "const asked = new lib.Artifacts({ store: lib.memoryStore(), images: {} });",
      "console.log(JSON.stringify({",
      "  shape: await code(shapeImage(Buffer.alloc(8))),",
      "  asked: await code(asked.image({ scope: 's', bytes: Buffer.alloc(8), name: 'a.png' })),",
      "  auto: auto.content.map((b) => b.type),",
      "}));",
    ].join("\n"),
  );
  expect(JSON.parse(out)).toEqual({
    shape: "INVALID_OPTION:sharp",
    asked: "INVALID_OPTION:sharp",
    auto: ["resource_link", "text"],
  });
}, 60_000);
