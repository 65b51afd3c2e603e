/**
 * User code type-checks against each SDK generation, under `tsc --strict`: the README quick start
 * (SDK v1), the same code with the two SDK v2 imports (docs/sdk-v2.md), and the stateless HTTP server
 * of docs/sdk-v2.md. The v2 quick start also runs, as a stdio server driven by the SDK v2 client.
 */
import { execFile } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, repoRoot } from "../../support/helpers.js";

const run = promisify(execFile);
const dir = join(repoRoot, ".tmp", "sdk-v2-types");
/**
 * tsc's incremental state, kept beside `dir` for this file's runs: the package's source is checked
 * once, and the next check (other user files, same options) reuses what it found for the unchanged
 * source files; tsc still reports every diagnostic of every file.
 */
const buildInfo = join(repoRoot, ".tmp", "sdk-v2-types.tsbuildinfo");

/** The first ```ts block after `heading` in `doc`. */
async function codeBlock(doc: string, heading: string): Promise<string> {
  const markdown = await readFile(join(repoRoot, doc), "utf8");
  const start = markdown.indexOf(heading);
  expect(start).toBeGreaterThanOrEqual(0);
  const match = /```ts\n([\s\S]*?)```/.exec(markdown.slice(start));
  if (!match) throw new Error(`no ts block under ${heading} in ${doc}`);
  return match[1] as string;
}

/** `tsc --strict` over the given files, `mcp-file-bridge` mapped to this package's source. */
async function typecheck(files: Record<string, string>): Promise<{ code: number; output: string }> {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  await mkdir(dir, { recursive: true });
  for (const [name, source] of Object.entries(files)) await writeFile(join(dir, name), source);
  await writeFile(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        lib: ["ES2023", "DOM", "DOM.Iterable", "ESNext.Disposable"],
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        skipLibCheck: true,
        noEmit: true,
        incremental: true,
        tsBuildInfoFile: buildInfo,
        types: ["node"],
        paths: {
          "mcp-file-bridge": ["../../src/index.ts"],
          "mcp-file-bridge/node": ["../../src/node/index.ts"],
          "mcp-file-bridge/bridge": ["../../src/bridge/index.ts"],
        },
      },
      files: Object.keys(files),
    }),
  );
  try {
    const { stdout } = await run(
      process.execPath,
      [join(repoRoot, "node_modules/typescript/bin/tsc"), "-p", dir],
      {
        cwd: repoRoot,
        timeout: 120_000,
      },
    );
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string };
    return { code: failed.code ?? -1, output: failed.stdout ?? "" };
  }
}

const V1_IMPORTS = [
  'import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";',
  'import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";',
];
const V2_IMPORTS = [
  'import { McpServer } from "@modelcontextprotocol/server";',
  'import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";',
];

let readme: string;
/** The README's own SDK v2 version of the quick start (the block after "On SDK v2"). */
let readmeV2: string;
let v2QuickStart: string;
let v2Http: string;

beforeAll(async () => {
  await rm(buildInfo, { force: true });
  ensureBuilt(); // the running test imports the package by name (dist/)
  readme = await codeBlock("README.md", "## Quick start");
  readmeV2 = await codeBlock("README.md", "On SDK v2, install");
  v2QuickStart = await codeBlock("docs/sdk-v2.md", "## Quick start on SDK v2");
  v2Http = await codeBlock("docs/sdk-v2.md", "## Stateless HTTP on SDK v2");
}, 180_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  await rm(buildInfo, { force: true });
});

describe("user code against each SDK generation", { timeout: 180_000 }, () => {
  it("the v2 quick start is the README's v2 block: the v1 one with the SDK imports swapped and z.object", () => {
    for (const line of V1_IMPORTS) expect(readme).toContain(line);
    expect(v2QuickStart).toBe(readmeV2);
    let swapped = readme;
    V1_IMPORTS.forEach((line, i) => {
      swapped = swapped.replace(line, V2_IMPORTS[i] as string);
    });
    swapped = swapped
      .replace(
        'import { FileBridge } from "mcp-file-bridge/bridge";\n',
        'import { FileBridge } from "mcp-file-bridge/bridge";\nimport { z } from "zod";\n',
      )
      .replace(
        "inputSchema: { file: bridge.fileInput() }",
        "inputSchema: z.object({ file: bridge.fileInput() })",
      );
    expect(readmeV2).toBe(swapped);
  });

  it("compiles under tsc --strict: README quick start (v1), v2 quick start, v2 stateless HTTP", async () => {
    const result = await typecheck({
      "quick-start-v1.ts": readme,
      "quick-start-v2.ts": v2QuickStart,
      "http-v2.ts": v2Http,
    });
    expect(result.output).toBe("");
    expect(result.code).toBe(0);
  }, 150_000);

  it("fails to compile a misuse (the check can fail)", async () => {
    const broken = `${v2QuickStart.replace('{ fields: ["file"] }', '{ fields: "file" }')}`;
    expect(broken).not.toBe(v2QuickStart);
    const result = await typecheck({ "broken.ts": broken });
    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(/broken\.ts\(\d+,\d+\): error TS\d+/);
  }, 150_000);

  it("the v2 quick start runs as a stdio server for the SDK v2 client", async () => {
    await mkdir(dir, { recursive: true });
    // Saved inside the package so `import "mcp-file-bridge"` resolves to it by name, as for a user.
    const file = join(repoRoot, ".tmp", "quick-start-v2.ts");
    await writeFile(file, v2QuickStart);
    const client = new Client({ name: "quick-start", version: "1.0.0" });
    try {
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: ["--import", "tsx", file],
          cwd: repoRoot,
        }),
      );
      const dataUrl = `data:text/plain;base64,${Buffer.from("one two three").toString("base64")}`;
      const counted = await client.callTool({ name: "count_words", arguments: { file: dataUrl } });
      expect((counted.content as Array<{ text: string }>)[0]?.text).toBe("3 words");
      const object = { filename: "a.txt", content: Buffer.from("four five").toString("base64") };
      const fromObject = await client.callTool({ name: "count_words", arguments: { file: object } });
      expect((fromObject.content as Array<{ text: string }>)[0]?.text).toBe("2 words");
      const refused = await client.callTool({ name: "count_words", arguments: { file: "/etc/passwd" } });
      expect(refused.isError).toBe(true);
      expect((refused.content as Array<{ text: string }>)[0]?.text).toMatch(/PATH_NOT_ALLOWED/);
    } finally {
      await client.close();
      await rm(file, { force: true });
    }
  }, 60_000);
});
