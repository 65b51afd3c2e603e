import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, repoRoot } from "../support/helpers.js";

// The servers the docs tell people to write, run exactly as written: each code block is saved inside
// the package (so `import "mcp-file-bridge"` resolves to this package by name) and started as a stdio
// server, driven by the real SDK client.
const dir = join(repoRoot, ".tmp", "snippets");

async function codeBlock(doc: string, heading: string): Promise<string> {
  const markdown = await readFile(join(repoRoot, doc), "utf8");
  const section = markdown.slice(markdown.indexOf(heading));
  const match = /```ts\n([\s\S]*?)```/.exec(section);
  if (!match) throw new Error(`no ts block under ${heading} in ${doc}`);
  return match[1] as string;
}

async function startServer(name: string, source: string): Promise<Client> {
  const file = join(dir, `${name}.ts`);
  await writeFile(file, source);
  const client = new Client({ name: "docs-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: ["--import", "tsx", file], cwd: repoRoot }),
  );
  return client;
}

const text = (result: Record<string, unknown>) =>
  (result.content as Array<{ text?: string }>).map((block) => block.text ?? "").join("");

const clients: Client[] = [];
beforeAll(async () => {
  ensureBuilt();
  await mkdir(dir, { recursive: true });
}, 180_000);
afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.close()));
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

describe("code in the docs", () => {
  it("README quick start counts words of a data URL, an object and a path", async () => {
    const source = await codeBlock("README.md", "## Quick start");
    expect(source.split("\n").filter((line) => line.trim()).length).toBeLessThanOrEqual(20);
    const client = await startServer("quick-start", source);
    clients.push(client);
    const dataUrl = `data:text/plain;base64,${Buffer.from("one two three").toString("base64")}`;
    expect(text(await client.callTool({ name: "count_words", arguments: { file: dataUrl } }))).toBe(
      "3 words",
    );
    const object = { filename: "a.txt", content: Buffer.from("four five").toString("base64") };
    expect(text(await client.callTool({ name: "count_words", arguments: { file: object } }))).toBe("2 words");
    const license = (await readFile(join(repoRoot, "LICENSE"), "utf8")).split(/\s+/).filter(Boolean).length;
    expect(text(await client.callTool({ name: "count_words", arguments: { file: "LICENSE" } }))).toBe(
      `${license} words`,
    );
    const refused = await client.callTool({ name: "count_words", arguments: { file: "/etc/passwd" } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain("PATH_NOT_ALLOWED");
  }, 60_000);

  it("getting-started server (the README's) counts words", async () => {
    const source = await codeBlock("docs/getting-started.md", "## 2. Write the server");
    expect(source.split("\n").filter((line) => line.trim()).length).toBeLessThanOrEqual(20);
    const client = await startServer("getting-started", source);
    clients.push(client);
    const hello = "data:text/plain;name=hello.txt;base64,aGVsbG8gd29ybGQ=";
    expect(text(await client.callTool({ name: "count_words", arguments: { file: hello } }))).toBe("2 words");
    expect(
      text(await client.callTool({ name: "count_words", arguments: { file: "./package.json" } })),
    ).toMatch(/^\d+ words$/);
  }, 60_000);
});
