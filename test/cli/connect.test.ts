import { spawn } from "node:child_process";
import { mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDirs, tempDir, textOf } from "../proxy/support.js";
import { repoRoot, sha256 } from "../support/helpers.js";
import { type Remote, startPiecesRemote, startPlainRemote } from "./remotes.js";
import { rpc } from "./support.js";

const CLI = join(repoRoot, "src/cli/main.ts");

/** Starts `mcp-file-bridge connect` as a desktop client does: a child process over stdio. */
async function startShim(args: string[]): Promise<Client> {
  const client = new Client({ name: "desktop-client", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ["--import", "tsx", CLI, "connect", ...args],
      cwd: repoRoot,
      stderr: "ignore",
    }),
  );
  return client;
}

async function leftovers(dir: string): Promise<string[]> {
  return (await readdir(dir)).sort();
}

describe("mcp-file-bridge connect in front of a remote built on our pieces", () => {
  let remote: Remote;
  let allow: string;
  let out: string;
  let outside: string;
  let client: Client;

  beforeAll(async () => {
    remote = await startPiecesRemote();
    allow = await tempDir("shim-allow-");
    out = await tempDir("shim-out-");
    outside = await tempDir("shim-outside-");
    client = await startShim(["--url", remote.mcpUrl, "--allow-dir", allow, "--output-dir", out]);
  });

  afterAll(async () => {
    await client?.close();
    await remote?.close();
    await removeDirs(allow, out, outside);
  });

  it("shuts down with exit 0 when its client closes stdout and stderr, even with stdin still open", async () => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", CLI, "connect", "--url", remote.mcpUrl, "--allow-dir", allow, "--output-dir", out],
      { cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] },
    );
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      const session = rpc(child);
      expect((await session.initialize()).result).toBeDefined();
      child.stderr.destroy();
      child.stdout.destroy();
      // Its answer meets a closed stdout (EPIPE): the shim shuts down instead of serving nobody.
      void session.request("tools/list", {});
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });

  it("uploads a file from an allowed folder through get_upload_url; the remote gets the exact bytes", async () => {
    const bytes = Buffer.from(Array.from({ length: 2_000_000 }, (_, i) => (i * 7) % 256));
    await mkdir(join(allow, "sub dir"));
    await writeFile(join(allow, "sub dir", "photo.bin"), bytes);
    const { tools } = await client.listTools();
    const digest = tools.find((tool) => tool.name === "digest");
    expect(JSON.stringify(digest?.inputSchema)).toContain(allow);
    const result = await client.callTool({
      name: "digest",
      arguments: { file: join(allow, "sub dir", "photo.bin") },
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      sha256: sha256(bytes),
      size: bytes.length,
      source: "resolver",
    });
    expect(remote.seen).toContain("POST /files/upload");
  });

  it("refuses a path outside the allowed folders, and a symlink out of them, before anything is sent", async () => {
    await writeFile(join(outside, "secret.txt"), "secret");
    await symlink(join(outside, "secret.txt"), join(allow, "link.txt"));
    const before = remote.seen.length;
    for (const path of [
      join(outside, "secret.txt"),
      join(allow, "link.txt"),
      `${allow}/../${outside.split("/").pop()}/secret.txt`,
    ]) {
      const result = await client.callTool({ name: "digest", arguments: { file: path } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^Error PATH_NOT_ALLOWED/);
      // The shim's own folders are named, not the remote server's.
      expect(textOf(result)).toContain("--allow-dir");
      expect(textOf(result)).not.toContain("server's allowed folders");
    }
    expect(remote.seen.slice(before)).toEqual([]);
  });

  it("saves a remote artifact into the output folder with the exact bytes and names its path", async () => {
    const body = `quarterly report ${"🙂".repeat(1000)}`;
    const result = await client.callTool({ name: "report", arguments: { name: "report.md", text: body } });
    expect(result.isError).toBeFalsy();
    const saved = join(out, "report.md");
    expect(textOf(result)).toContain(`Saved to ${saved}`);
    expect(await readFile(saved, "utf8")).toBe(body);
    // the same name again never overwrites
    const again = await client.callTool({ name: "report", arguments: { name: "report.md", text: "second" } });
    expect(textOf(again)).toContain(`Saved to ${join(out, "report (1).md")}`);
    expect(await readFile(saved, "utf8")).toBe(body);
  });

  it("a download that breaks off is a clear error and leaves no partial file", async () => {
    const before = await leftovers(out);
    const result = await client.callTool({ name: "broken_download", arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Error FETCH_FAILED/);
    expect(await leftovers(out)).toEqual(before);
  });

  it("a remote that drops mid-call is a clear error and leaves no partial file", async () => {
    const before = await leftovers(out);
    const result = await client.callTool({ name: "drop", arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Error UPSTREAM_UNAVAILABLE/);
    expect(await leftovers(out)).toEqual(before);
    // and the shim keeps serving: the next call reconnects
    const bytes = Buffer.from("after the drop");
    await writeFile(join(allow, "after.txt"), bytes);
    const next = await client.callTool({ name: "digest", arguments: { file: join(allow, "after.txt") } });
    expect(next.structuredContent).toMatchObject({ sha256: sha256(bytes) });
  });
});

describe("mcp-file-bridge connect in front of a plain SDK server (data: URLs)", () => {
  let remote: Remote;
  let allow: string;
  let out: string;
  let client: Client;

  beforeAll(async () => {
    remote = await startPlainRemote();
    allow = await tempDir("shim-plain-allow-");
    out = await tempDir("shim-plain-out-");
    client = await startShim([
      "--url",
      remote.mcpUrl,
      "--allow-dir",
      allow,
      "--output-dir",
      out,
      "--file-arg",
      "hash_data_url=file",
    ]);
  });

  afterAll(async () => {
    await client?.close();
    await remote?.close();
    await removeDirs(allow, out);
  });

  it("sends a local file as a data: URL with its name; the remote gets the exact sha256", async () => {
    const bytes = Buffer.from(Array.from({ length: 100_000 }, (_, i) => (i * 13) % 256));
    await writeFile(join(allow, "scan 1.pdf"), bytes);
    const result = await client.callTool({
      name: "hash_data_url",
      arguments: { file: join(allow, "scan 1.pdf") },
    });
    expect(textOf(result)).toBe(`sha256 ${sha256(bytes)} name scan 1.pdf`);
    // a relative path is relative to the first allowed folder
    const relative = await client.callTool({ name: "hash_data_url", arguments: { file: "scan 1.pdf" } });
    expect(textOf(relative)).toBe(`sha256 ${sha256(bytes)} name scan 1.pdf`);
  });

  it("refuses an outside path before calling the remote", async () => {
    const result = await client.callTool({ name: "hash_data_url", arguments: { file: "/etc/hostname" } });
    expect(textOf(result)).toMatch(/^Error PATH_NOT_ALLOWED/);
    expect(remote.seen.filter((s) => s === "tool:hash_data_url")).toHaveLength(2);
  });

  it("saves an embedded file from the result locally", async () => {
    const result = await client.callTool({ name: "embedded", arguments: {} });
    expect(textOf(result)).toContain(`Saved to ${join(out, "result.csv")}`);
    expect(await readFile(join(out, "result.csv"), "utf8")).toBe("a,b\n1,2\n");
    // Saved, so not forwarded as bytes too.
    expect(result.content).not.toContainEqual(expect.objectContaining({ type: "resource" }));
  });

  it("puts the saved path into structuredContent.files when the result has structuredContent", async () => {
    const result = await client.callTool({ name: "embedded_structured", arguments: {} });
    const path = join(out, "data.bin");
    expect(textOf(result)).toContain(`Saved to ${path}`);
    expect(result.content).not.toContainEqual(expect.objectContaining({ type: "resource" }));
    expect(result.structuredContent).toEqual({
      rows: 2,
      files: [
        {
          uri: "file:///out/data.bin",
          name: "data.bin",
          mimeType: "application/octet-stream",
          size: 4,
          localPath: path,
        },
      ],
    });
    expect(await readFile(path)).toEqual(Buffer.from([0, 1, 2, 3]));
  });
});
