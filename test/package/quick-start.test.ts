/**
 * The docs as a new user follows them, on the packed tarball (`npm pack`, once for this file):
 *
 * - the README quick start in a fresh `npm init -y` project with the README's own set-up lines and
 *   `tsconfig.json`, and every block of the docs marked `<!-- docs-test: <id> -->` written into the
 *   same project (docs-blocks.ts: read from the Markdown here, so the two cannot drift), type-checked
 *   with TypeScript 5.9 and 7 and run, each driven by a real SDK client (v1 and v2); the v1 server
 *   also as CommonJS, and both quick starts on Node 22 (the `node@22` npm package, shared with the
 *   conformance test through scripts/conformance/ensure.sh), so both supported majors run the
 *   packed package;
 * - three servers written from the docs alone, each in a fresh project of its own (docs-servers.ts).
 *
 * Needs the npm registry (or a warm npm cache) for the public packages.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, repoRoot } from "../support/helpers.js";
import { blockOf, describeDocsBlocks, exercise, writeBlocks } from "./docs-blocks.js";
import { describeDocsServers, installDocsServers } from "./docs-servers.js";
import { freshProject, type MarkedBlock, PEERS, packInto, TYPESCRIPTS, typecheck } from "./fresh-project.js";

let root: string;
let dir: string;
let blocks: Map<string, MarkedBlock>;
let tarball: string;

beforeAll(async () => {
  ensureBuilt();
  root = await mkdtemp(join(tmpdir(), "mfb-quick-start-"));
  dir = join(root, "quick-start");
  const started = Date.now();
  tarball = await packInto(root);
  // One install for both README lines, both SDKs and both TypeScript majors (the quick start's and the
  // docs blocks' cost in `npm test` is mostly this step), beside the three docs servers' own installs.
  await Promise.all([
    freshProject(dir, tarball, [...PEERS, ...Object.values(TYPESCRIPTS), "tsx", "@types/node@22"]),
    installDocsServers(root, tarball),
  ]);
  blocks = await writeBlocks(dir);
  await writeFile(join(dir, "tsconfig.json"), blockOf(blocks, "readme-tsconfig").code);
  // The CommonJS variant the README describes: the same server with its last line replaced, in a
  // folder whose package.json says `"type": "commonjs"` (what `npm init -y` writes).
  const readme = await readFile(join(repoRoot, "README.md"), "utf8");
  const cjsLine = /write the last line as\s+`([^`]+)`/.exec(readme)?.[1];
  expect(cjsLine).toBeDefined();
  const v1 = blockOf(blocks, "readme-v1").code;
  const cjs = v1.replace("await server.connect(new StdioServerTransport());", cjsLine as string);
  expect(cjs).not.toContain("await server.connect");
  await mkdir(join(dir, "cjs"));
  await writeFile(join(dir, "cjs", "package.json"), JSON.stringify({ type: "commonjs" }));
  await writeFile(join(dir, "cjs", "server.ts"), cjs);
  console.log(`quick start: packed and installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}, 300_000);

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true, maxRetries: 3 });
});

describe("README quick start in a fresh project from the packed tarball", () => {
  it("type-checks with TypeScript 5.9 and 7 (strict, both SDKs, ESM and CJS, every marked docs block)", {
    timeout: 300_000,
  }, async () => {
    const [ts59, ts7] = await Promise.all([typecheck(dir, "5.9"), typecheck(dir, "7")]);
    expect(ts59).toBe("");
    expect(ts7).toBe("");
  });

  it("SDK v1, CommonJS: a real client gets a file in as a data URL, an object and a path", {
    timeout: 120_000,
  }, async () => {
    await exercise(dir, { command: "npx", args: ["tsx", "cjs/server.ts"] });
  });

  it.each([
    ["SDK v1", "blocks/readme-v1.ts"],
    ["SDK v2", "blocks/readme-v2.ts"],
  ])("%s on Node 22 (node@22 from npm): the same calls work", { timeout: 300_000 }, async (_, file) => {
    const bin = execFileSync("bash", [join(repoRoot, "scripts/conformance/ensure.sh")], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    }).trim();
    const node = join(bin, "node");
    expect(execFileSync(node, ["-p", "process.versions.node"], { encoding: "utf8" })).toMatch(/^22\./);
    await exercise(dir, { command: node, args: [join(dir, "node_modules", "tsx", "dist", "cli.mjs"), file] });
  });
});

describeDocsBlocks(() => ({ dir, blocks }));
describeDocsServers(() => root);
