/**
 * The README quick start as a new user follows it: the packed tarball (`npm pack`) installed in a fresh
 * `npm init -y` project with the README's own set-up lines, the README's `tsconfig.json` and servers
 * pasted verbatim (read from README.md here, so the two cannot drift), type-checked with TypeScript
 * 5.9 and 7, then run with `npx tsx` and driven over stdio by a real SDK client — on this Node (20)
 * and on Node 22 (the `node@22` npm package, shared with the conformance test through
 * scripts/conformance/ensure.sh), so both supported majors run the packed package. Needs the npm
 * registry (or a warm npm cache) for the public packages.
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, repoRoot } from "../support/helpers.js";

const run = promisify(execFile);
/** The versions the quick start is checked against: both SDK generations, both TypeScript majors. */
const PEERS = ["@modelcontextprotocol/sdk@1.32.2", "@modelcontextprotocol/server@2.4.0", "zod@4"];
const TYPESCRIPTS = { "5.9": "typescript@5.9.3", "7": "typescript7@npm:typescript@7.0.2" } as const;

/** The fenced blocks of `lang` under the README's `## Quick start`, in order. */
function blocks(readme: string, lang: string): string[] {
  const start = readme.indexOf("## Quick start");
  const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
  return [...section.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, "g"))].map(
    (m) => m[1] as string,
  );
}

async function sh(cwd: string, command: string, args: string[]): Promise<string> {
  const { stdout } = await run(command, args, { cwd, timeout: 240_000, maxBuffer: 16 << 20 });
  return stdout;
}

/** Runs `tsc -p .` of one TypeScript major; resolves with its output, "" when it passes. */
async function typecheck(dir: string, major: keyof typeof TYPESCRIPTS): Promise<string> {
  const bin = join(dir, "node_modules", major === "7" ? "typescript7" : "typescript", "bin", "tsc");
  try {
    await run(process.execPath, [bin, "-p", "."], { cwd: dir, timeout: 240_000 });
    return "";
  } catch (error) {
    const failed = error as { stdout?: string; message: string };
    return failed.stdout || failed.message;
  }
}

const text = (result: Record<string, unknown>) =>
  (result.content as Array<{ text?: string }>).map((block) => block.text ?? "").join("");

let dir: string;
let readme: string;

beforeAll(async () => {
  ensureBuilt();
  readme = await readFile(join(repoRoot, "README.md"), "utf8");
  dir = await mkdtemp(join(tmpdir(), "mfb-quick-start-"));
  const started = Date.now();
  // `--ignore-scripts`: dist/ is fresh (ensureBuilt), and `prepack` would rebuild it under the feet
  // of the other package tests; prepack-build.test.ts checks that a plain `npm pack` builds.
  const tarball = (
    await sh(repoRoot, "npm", ["pack", "--silent", "--ignore-scripts", "--pack-destination", dir])
  ).trim();
  // The README's set-up lines, with the published names replaced by the tarball and pinned versions.
  const [setup] = blocks(readme, "sh");
  expect(setup?.split("\n")).toEqual([
    "npm init -y && npm pkg set type=module",
    "npm install mcp-file-bridge @modelcontextprotocol/sdk",
    "npm install -D typescript tsx @types/node",
    "",
  ]);
  await sh(dir, "npm", ["init", "-y"]);
  await sh(dir, "npm", ["pkg", "set", "type=module"]);
  // One install for both README lines (one resolution, one pass over the npm cache, no revalidation
  // of what the cache holds): the quick start's cost in `npm test` is mostly this step.
  await sh(dir, "npm", [
    "install",
    "--no-audit",
    "--no-fund",
    "--prefer-offline",
    join(dir, tarball),
    ...PEERS,
    ...Object.values(TYPESCRIPTS),
    "tsx",
    "@types/node@22",
  ]);
  const [tsconfig] = blocks(readme, "json");
  const [v1, v2] = blocks(readme, "ts");
  await writeFile(join(dir, "tsconfig.json"), tsconfig as string);
  await writeFile(join(dir, "server.ts"), v1 as string);
  await writeFile(join(dir, "server-v2.ts"), v2 as string);
  // The CommonJS variant the README describes: the same server with its last line replaced, in a
  // folder whose package.json says `"type": "commonjs"` (what `npm init -y` writes).
  const cjsLine = /write the last line as\s+`([^`]+)`/.exec(readme)?.[1];
  expect(cjsLine).toBeDefined();
  const cjs = (v1 as string).replace("await server.connect(new StdioServerTransport());", cjsLine as string);
  expect(cjs).not.toContain("await server.connect");
  await mkdir(join(dir, "cjs"));
  await writeFile(join(dir, "cjs", "package.json"), JSON.stringify({ type: "commonjs" }));
  await writeFile(join(dir, "cjs", "server.ts"), cjs);
  console.log(`quick start: packed and installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}, 300_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

/** The calls a new user's client makes against the quick-start server started by `command args`. */
async function exercise(server: { command: string; args: string[] }): Promise<void> {
  const client = new Client({ name: "quick-start-test", version: "1.0.0" });
  const transport = new StdioClientTransport({ ...server, cwd: dir, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await client.connect(transport);
  try {
    const call = async (arg: unknown) =>
      client.callTool({ name: "count_words", arguments: { file: arg } }) as Promise<Record<string, unknown>>;
    const dataUrl = `data:text/plain;base64,${Buffer.from("one two three").toString("base64")}`;
    expect(text(await call(dataUrl))).toBe("3 words");
    const object = { filename: "a.txt", content: Buffer.from("four five").toString("base64") };
    expect(text(await call(object))).toBe("2 words");
    await writeFile(join(dir, "notes.txt"), "six seven eight nine");
    expect(text(await call("notes.txt"))).toBe("4 words");
    // What models and clients really send: the description names the path form (roots are set),
    // an object sent as a JSON string works, bare base64 is told the data: form to use.
    const { tools } = await client.listTools();
    expect(JSON.stringify(tools[0]?.inputSchema)).toContain("a path inside the server's shared folders");
    expect(text(await call(JSON.stringify(object)))).toBe("2 words");
    const bare = await call(Buffer.from("ten eleven twelve thirteen").toString("base64"));
    expect(bare.isError).toBe(true);
    expect(text(bare)).toContain("FORM_DISABLED");
    expect(text(bare)).toContain("data:<media type>;name=<file name>;base64,");
    const refused = await call("/etc/passwd");
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain("PATH_NOT_ALLOWED");
  } finally {
    await client.close();
  }
  // Nothing a user cannot act on: no Node warning (deprecations, experimental features) from the
  // package on either Node major.
  expect(stderr).not.toMatch(/Warning/);
}

describe("README quick start in a fresh project from the packed tarball", () => {
  it("type-checks with TypeScript 5.9 and 7 (strict, both SDKs, ESM and CJS)", {
    timeout: 300_000,
  }, async () => {
    const [ts59, ts7] = await Promise.all([typecheck(dir, "5.9"), typecheck(dir, "7")]);
    expect(ts59).toBe("");
    expect(ts7).toBe("");
  });

  it.each([
    ["SDK v1", "server.ts"],
    ["SDK v2", "server-v2.ts"],
    ["SDK v1, CommonJS", "cjs/server.ts"],
  ])(
    "%s: a real client gets a file in as a data URL, an object and a path",
    { timeout: 120_000 },
    async (_, file) => {
      await exercise({ command: "npx", args: ["tsx", file] });
    },
  );

  it.each([
    ["SDK v1", "server.ts"],
    ["SDK v2", "server-v2.ts"],
  ])("%s on Node 22 (node@22 from npm): the same calls work", { timeout: 300_000 }, async (_, file) => {
    const bin = execFileSync("bash", [join(repoRoot, "scripts/conformance/ensure.sh")], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    }).trim();
    const node = join(bin, "node");
    expect(execFileSync(node, ["-p", "process.versions.node"], { encoding: "utf8" })).toMatch(/^22\./);
    await exercise({ command: node, args: [join(dir, "node_modules", "tsx", "dist", "cli.mjs"), file] });
  });
});
