/**
 * Every union in the proxy config (issue 23): when no branch fits, the error names what is missing or
 * expected and shows a valid entry, at the key that is wrong — never zod's bare "Invalid input".
 */
import { describe, expect, it } from "vitest";
import { isFileBridgeError } from "../../src/errors/file-bridge-error.js";
import { parseProxyConfig } from "../../src/proxy/index.js";

function issuesOf(config: unknown): Array<{ key: string; message: string }> {
  try {
    parseProxyConfig(config);
  } catch (error) {
    if (isFileBridgeError(error, "INVALID_OPTION"))
      return error.data?.issues as Array<{ key: string; message: string }>;
    throw error;
  }
  throw new Error("expected INVALID_OPTION");
}

const upstream = { mcpServers: { up: { command: "node", args: ["server.js"] } } };
const withRule = (artifacts: unknown) => ({
  ...upstream,
  servers: { up: { outputDirs: ["/tmp/out"], tools: { t: { artifacts } } } },
});

describe("proxy config unions name what is missing and show a valid entry", () => {
  it.each([
    [
      "an mcpServers entry with neither command nor url",
      { mcpServers: { up: { args: ["x"] } } },
      "mcpServers.up",
      [
        'needs "command"',
        'e.g. {"command": "npx"',
        'or "url"',
        'e.g. {"url": "https://mcp.example.com/mcp"}',
      ],
    ],
    [
      "an artifacts rule without a locator",
      withRule({ pattern: "saved to (.+)" }),
      "servers.up.tools.t.artifacts.locator",
      [
        'needs "locator": "regex" (with "pattern")',
        '"structured" (with "pointer")',
        '"none" (with "outputArg")',
      ],
    ],
    [
      "an artifacts rule with an unknown locator",
      withRule({ locator: "magic" }),
      "servers.up.tools.t.artifacts.locator",
      ['needs "locator": "regex" (with "pattern")'],
    ],
    [
      "a structured pointer that is neither a pointer nor a list of them",
      withRule({ locator: "structured", pointer: 5 }),
      "servers.up.tools.t.artifacts.pointer",
      ['a JSON pointer like "/file"', 'e.g. ["/result/path"]'],
    ],
    [
      "a duration that is neither seconds nor a duration string",
      { ...upstream, proxy: { limits: { callTimeout: "soon" } } },
      "proxy.limits.callTimeout",
      ['a duration like "90s", "5m", "1h"'],
    ],
    [
      "a duration of the wrong type",
      { ...upstream, proxy: { limits: { callTimeout: true } } },
      "proxy.limits.callTimeout",
      ['a duration like "90s", "5m", "1h", or a number of seconds'],
    ],
  ])("%s", (_, config, key, parts) => {
    const issues = issuesOf(config);
    const issue = issues.find((candidate) => candidate.key === key);
    expect(issue, JSON.stringify(issues)).toBeDefined();
    for (const part of parts) expect(issue?.message).toContain(part);
    expect(issues.map((candidate) => candidate.message)).not.toContain("Invalid input");
  });
});
