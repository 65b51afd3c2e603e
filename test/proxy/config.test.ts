import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isFileBridgeError } from "../../src/errors/file-bridge-error.js";
import { loadProxyConfig, parseProxyConfig } from "../../src/proxy/index.js";
import { codeOf } from "../support/helpers.js";
import { removeDirs, tempDir } from "./support.js";

function issuesOf(run: () => unknown): Array<{ key: string; message: string }> {
  try {
    run();
  } catch (error) {
    if (isFileBridgeError(error, "INVALID_OPTION"))
      return error.data?.issues as Array<{ key: string; message: string }>;
    throw error;
  }
  throw new Error("expected INVALID_OPTION");
}

describe("proxy config", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await tempDir("proxy-config-");
  });
  afterAll(async () => {
    await removeDirs(dir);
  });

  it("accepts a client's mcpServers block as it is (stdio and HTTP entries)", () => {
    const config = parseProxyConfig({
      mcpServers: {
        files: {
          command: "npx",
          args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv"],
          env: { A: "1" },
        },
        remote: { type: "http", url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer x" } },
      },
    });
    expect(Object.keys(config.mcpServers)).toEqual(["files", "remote"]);
  });

  it("names the bad key in every error", () => {
    expect(
      issuesOf(() =>
        parseProxyConfig({
          mcpServers: { files: { command: "x" } },
          servers: {
            files: {
              handoffDir: "/tmp/in",
              tools: {
                convert: { upload: { args: ["ok", ""] }, artifacts: { locator: "regex", pattern: "(" } },
                other: { artifacts: { locator: "structured" } },
              },
            },
          },
          proxy: { port: 70000, colour: "blue" },
        }),
      ).map((issue) => issue.key),
    ).toEqual(
      expect.arrayContaining([
        "servers.files.tools.convert.upload.args[1]",
        "servers.files.tools.convert.artifacts.pattern",
        "servers.files.tools.other.artifacts.pointer",
        "proxy.port",
        "proxy.colour",
      ]),
    );
    expect(
      issuesOf(() => parseProxyConfig({ mcpServers: { a: { command: "x" } }, servers: { b: {} } })),
    ).toEqual([{ key: "servers.b", message: expect.stringContaining("mcpServers") }]);
    expect(
      issuesOf(() =>
        parseProxyConfig({
          mcpServers: { a: { command: "x" } },
          servers: { a: { tools: { t: { upload: { args: ["file"] } } } } },
        }),
      ),
    ).toEqual([{ key: "servers.a.handoffDir", message: expect.stringContaining("t") }]);
    expect(issuesOf(() => parseProxyConfig({ mcpServers: { a: { url: "ftp://x" } } }))[0]?.key).toMatch(
      /^mcpServers\.a/,
    );
    expect(issuesOf(() => parseProxyConfig({ mcpServers: {} }))).toEqual([
      { key: "mcpServers", message: "lists no server" },
    ]);
  });

  it("outputDirArg: an argument name, on regex and structured rules, never beside relativeTo", () => {
    const rules = (artifacts: Record<string, unknown>) => ({
      mcpServers: { a: { command: "x" } },
      servers: { a: { outputDirs: ["/srv/out"], tools: { t: { artifacts } } } },
    });
    const config = parseProxyConfig(
      rules({ locator: "structured", pointer: "/path", outputDirArg: "out_dir" }),
    );
    expect(config.servers?.a?.tools?.t?.artifacts).toMatchObject({ outputDirArg: "out_dir" });
    expect(
      issuesOf(() => parseProxyConfig(rules({ locator: "regex", pattern: "(.+)", outputDirArg: "a b" }))),
    ).toEqual([{ key: "servers.a.tools.t.artifacts.outputDirArg", message: expect.any(String) }]);
    expect(
      issuesOf(() =>
        parseProxyConfig(
          rules({ locator: "regex", pattern: "(.+)", outputDirArg: "dir", relativeTo: "/srv/out" }),
        ),
      ),
    ).toEqual([
      {
        key: "servers.a.tools.t.artifacts.relativeTo",
        message: expect.stringContaining("outputDirArg"),
      },
    ]);
    expect(
      issuesOf(() => parseProxyConfig(rules({ locator: "none", outputArg: "o", outputDirArg: "dir" })))[0]
        ?.key,
    ).toMatch(/^servers\.a\.tools\.t\.artifacts/);
  });

  it("loads YAML and JSON files; relative folders are relative to the file", async () => {
    const yamlFile = join(dir, "proxy.yaml");
    await writeFile(
      yamlFile,
      [
        "mcpServers:",
        "  files:",
        "    command: npx",
        '    args: ["-y", "@modelcontextprotocol/server-filesystem", "./work"]',
        "servers:",
        "  files:",
        "    handoffDir: ./work/inbox",
        "    outputDirs: [./work/out]",
        "    tools:",
        "      read_text_file: { upload: { args: [path] } }",
        "",
      ].join("\n"),
    );
    const config = await loadProxyConfig(yamlFile);
    expect(config.servers?.files?.handoffDir).toBe(join(dir, "work/inbox"));
    expect(config.servers?.files?.outputDirs).toEqual([join(dir, "work/out")]);
    expect(config.servers?.files?.tools?.read_text_file?.upload).toEqual({ args: ["path"], as: "path" });

    const jsonFile = join(dir, "proxy.json");
    await writeFile(jsonFile, JSON.stringify({ mcpServers: { r: { url: "http://127.0.0.1:1/mcp" } } }));
    expect((await loadProxyConfig(jsonFile)).mcpServers.r).toEqual({ url: "http://127.0.0.1:1/mcp" });

    await writeFile(join(dir, "broken.yaml"), "mcpServers: [\n");
    expect(await codeOf(loadProxyConfig(join(dir, "broken.yaml")))).toBe("INVALID_OPTION");
    expect(await codeOf(loadProxyConfig(join(dir, "missing.json")))).toBe("INVALID_OPTION");
  });
});
