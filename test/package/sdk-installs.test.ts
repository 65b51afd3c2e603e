/**
 * The BUILT package installed as a user installs it, with only some of its optional peers: a project
 * folder whose `node_modules` has `mcp-file-bridge` (its `package.json` and `dist`, copied) and its
 * dependencies, plus either the SDK v2 packages alone (no `@modelcontextprotocol/sdk` anywhere Node
 * can find it) or no SDK at all. The proxy must run end to end on SDK v2 alone, in ESM and CJS, and
 * with no SDK the CLI must say what to install.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURE } from "../proxy/support.js";
import { ensureBuilt, repoRoot } from "../support/helpers.js";

const run = promisify(execFile);
const SLOW = { timeout: 120_000 };
const V2_PACKAGES = [
  "@modelcontextprotocol/server",
  "@modelcontextprotocol/client",
  "@modelcontextprotocol/core",
];

/** A project folder with the built package, its dependencies and `peers` in `node_modules`. */
async function project(peers: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "mfb-install-"));
  const modules = join(dir, "node_modules");
  const own = join(modules, "mcp-file-bridge");
  await mkdir(own, { recursive: true });
  await cp(join(repoRoot, "package.json"), join(own, "package.json"));
  await cp(join(repoRoot, "dist"), join(own, "dist"), { recursive: true });
  const manifest = JSON.parse(await readFile(join(repoRoot, "package.json"), "utf8")) as {
    /** None since issue 39 (the package has no hard dependencies); kept for any that come back. */
    dependencies?: Record<string, string>;
    peerDependencies: Record<string, string>;
    peerDependenciesMeta: Record<string, { optional?: boolean }>;
  };
  // npm installs the peers that are not optional (zod) as it installs dependencies.
  const requiredPeers = Object.keys(manifest.peerDependencies).filter(
    (name) => manifest.peerDependenciesMeta[name]?.optional !== true,
  );
  // Dependencies are linked: Node resolves a linked package's own dependencies from its real
  // location, while this package's `dist` resolves only from this folder.
  for (const name of new Set([...Object.keys(manifest.dependencies ?? {}), ...requiredPeers, ...peers])) {
    const target = join(modules, name);
    await mkdir(dirname(target), { recursive: true });
    await symlink(join(repoRoot, "node_modules", name), target, "dir");
  }
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "app", private: true }));
  return dir;
}

async function node(dir: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, args, { cwd: dir, timeout: 90_000 });
    return { code: 0, stdout: stdout.trim(), stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

/** A script that runs a v2 proxy in front of the stdio fixture and calls it with a 2026-07-28 client. */
function proxyScript(format: "esm" | "cjs"): string {
  const load =
    format === "esm"
      ? `const { createFileProxy, bearerTokens, parseBearerTokens } = await import("mcp-file-bridge/proxy");
         const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");`
      : `const { createFileProxy, bearerTokens, parseBearerTokens } = require("mcp-file-bridge/proxy");
         const { Client, StreamableHTTPClientTransport } = require("@modelcontextprotocol/client");`;
  const body = `
    let sdkV1 = "missing";
    try { require.resolve("@modelcontextprotocol/sdk/types.js"); sdkV1 = "found"; } catch {}
    const token = "install-test-token-0123456789";
    const proxy = await createFileProxy({
      config: {
        mcpServers: { up: { command: process.execPath, args: ["--import", ${JSON.stringify(join(repoRoot, "node_modules/tsx/dist/loader.mjs"))}, ${JSON.stringify(FIXTURE)}], cwd: ${JSON.stringify(repoRoot)} } },
        servers: { up: { handoffDir: require("node:path").join(process.cwd(), "handoff"), tools: { read_file: { upload: { args: ["path"] } } } } },
      },
      authenticate: bearerTokens(parseBearerTokens("me:" + token, "test")),
      upstreamStderr: "ignore",
    });
    const { mcpUrl } = await proxy.listen();
    const client = new Client({ name: "c", version: "1" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { authorization: "Bearer " + token } } }));
    const echo = await client.callTool({ name: "echo", arguments: { text: "installed" } });
    const read = await client.callTool({ name: "read_file", arguments: { path: "data:text/plain;name=a.txt;base64," + Buffer.from("installed bytes").toString("base64") } });
    const era = client.getProtocolEra();
    await client.close();
    await proxy.close();
    console.log(JSON.stringify({ sdk: proxy.sdk, sdkV1, era, echo: echo.content[0].text, sha256: read.structuredContent.sha256 }));`;
  return format === "esm"
    ? `import { createRequire } from "node:module"; const require = createRequire(import.meta.url); ${load} ${body}`
    : `(async () => { ${load} ${body} })().catch((e) => { console.error(e); process.exit(1); });`;
}

describe("installed with SDK v2 only", () => {
  let dir: string;

  beforeAll(async () => {
    ensureBuilt();
    dir = await project(V2_PACKAGES);
    await writeFile(join(dir, "run.mjs"), proxyScript("esm"));
    await writeFile(join(dir, "run.cjs"), proxyScript("cjs"));
  }, 180_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  });

  it.each(["run.mjs", "run.cjs"])("runs the proxy on SDK v2 end to end (%s)", SLOW, async (script) => {
    const result = await node(dir, [script]);
    expect(result.stderr).toBe("");
    expect(JSON.parse(result.stdout)).toEqual({
      sdk: "v2",
      sdkV1: "missing",
      era: "modern",
      echo: "echo: installed",
      sha256: createHash("sha256").update("installed bytes").digest("hex"),
    });
  });

  it("refuses --sdk v1 with the package to install", SLOW, async () => {
    const result = await node(dir, [
      "node_modules/mcp-file-bridge/dist/cli.js",
      "proxy",
      "--sdk",
      "v1",
      "--upstream-cmd",
      "true",
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("npm install @modelcontextprotocol/sdk");
  });
});

describe("installed with no SDK", () => {
  let dir: string;

  beforeAll(async () => {
    ensureBuilt();
    dir = await project([]);
  }, 180_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  });

  it("the CLI says which packages to install, and exits 2", SLOW, async () => {
    for (const command of [
      ["proxy", "--upstream-cmd", "true"],
      ["connect", "--url", "http://127.0.0.1:9/mcp"],
    ]) {
      const result = await node(dir, ["node_modules/mcp-file-bridge/dist/cli.js", ...command]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        /npm install @modelcontextprotocol\/sdk .*@modelcontextprotocol\/server @modelcontextprotocol\/client/,
      );
      // The message names the command that was run, and how to run it with npx.
      expect(result.stderr).toContain(`mcp-file-bridge ${command[0]} needs an MCP SDK installed next to it`);
      expect(result.stderr).toContain(
        `npx -y -p mcp-file-bridge -p @modelcontextprotocol/sdk mcp-file-bridge ${command[0]}`,
      );
    }
  });

  it("the root entry still loads", SLOW, async () => {
    const result = await node(dir, ["-e", 'console.log(typeof require("mcp-file-bridge").ResourceRegistry)']);
    expect(result.stdout).toBe("function");
  });
});
