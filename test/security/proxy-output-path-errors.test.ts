/**
 * Issue 40, item 11: the error for a located output path names only the path the upstream's result
 * gave (what the caller saw), never the proxy's absolute output folder or call folder — the model must
 * not receive a server path it was never sent. Relative paths with `outputDirArg` (relative to the
 * call's own `out-*` folder) and with `relativeTo` (relative to a configured folder), a missing file
 * and one that leads outside.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFileProxy, type FileProxy } from "../../src/proxy/index.js";
import { type AnyClient, connectHttp, type ToolResult } from "../mcp/v2/harness.js";
import { fixtureCommand, removeDirs, tempDir, textOf } from "../proxy/support.js";

const saved = { locator: "regex" as const, pattern: "Saved to (?<path>\\S+)" };

describe("proxy: errors about a located output path name only the path given", () => {
  let ownOut: string;
  let sharedOut: string;
  let proxy: FileProxy;
  let client: AnyClient;

  beforeAll(async () => {
    ownOut = await tempDir("proxy-path-errors-own-");
    sharedOut = await tempDir("proxy-path-errors-shared-");
    proxy = await createFileProxy({
      sdk: "v1",
      config: {
        mcpServers: {
          own: fixtureCommand({ OUTPUT_DIR: ownOut }),
          rel: fixtureCommand({ OUTPUT_DIR: sharedOut }),
        },
        servers: {
          own: {
            outputDirs: [ownOut],
            tools: { say_path: { artifacts: { ...saved, outputDirArg: "dir" } } },
          },
          rel: {
            prefix: "rel_",
            outputDirs: [sharedOut],
            tools: { say_path: { artifacts: { ...saved, relativeTo: sharedOut } } },
          },
        },
      },
      upstreamStderr: "ignore",
    });
    client = await connectHttp("v1", new URL((await proxy.listen()).mcpUrl));
  });

  afterAll(async () => {
    await client?.close().catch(() => undefined);
    await proxy?.close({ timeoutMs: 1000 });
    await removeDirs(ownOut, sharedOut);
  });

  async function say(tool: string, path: string): Promise<{ result: ToolResult; text: string }> {
    const result = (await client.callTool({ name: tool, arguments: { path } })) as ToolResult;
    return { result, text: JSON.stringify(result) };
  }

  it.each([
    ["say_path", "missing-report.txt", "NOT_FOUND"],
    ["say_path", "sub/../missing.txt", "NOT_FOUND"],
    ["say_path", "../../../etc/hostname", "PATH_NOT_ALLOWED"],
    ["rel_say_path", "missing-report.txt", "NOT_FOUND"],
    ["rel_say_path", "../elsewhere/x.txt", "PATH_NOT_ALLOWED"],
  ])("%s %s: %s naming the given path only", async (tool, path, code) => {
    const { result, text } = await say(tool, path);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(new RegExp(`^Error ${code}`));
    expect(textOf(result)).toContain(path);
    expect(text).not.toContain(ownOut);
    expect(text).not.toContain(sharedOut);
    expect(text).not.toContain("/out-");
  });
});
