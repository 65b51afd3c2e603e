/**
 * Issue 21, part 1: an artifact producer captures only what that call produced. Alice and Bob
 * (bearer tokens) share one proxy (SDK v1 and v2) in front of the real stdio fixture upstream, whose
 * output folder every caller's results can name. Bob names Alice's file — absolute, relative, through
 * `structuredContent`, through a symlink or a hardlink, or by making the `none` locator's
 * pre-allocated output a link to it — and must never get it as his artifact.
 */
import { link, readdir, readFile, symlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearerTokens, parseBearerTokens } from "../../src/proxy/bearer-tokens.js";
import { createFileProxy, type FileProxy } from "../../src/proxy/index.js";
import { type AnyClient, connectHttp, type ToolResult } from "../mcp/v2/harness.js";
import { fixtureCommand, removeDirs, tempDir, textOf } from "../proxy/support.js";

const ALICE = "alice-token-capture-0123";
const BOB = "bob-token-capture-0123456";
const SECRET_TEXT = "alice's q3 salaries: 1,000,000";
const saved = { locator: "regex" as const, pattern: "Saved to (?<path>\\S+)" };

describe.each(["v1", "v2"] as const)("proxy on SDK %s: a call captures only its own outputs", (sdk) => {
  let out: string;
  let proxy: FileProxy;
  let mcpUrl: URL;
  let alice: AnyClient;
  let bob: AnyClient;

  beforeAll(async () => {
    out = await tempDir("proxy-capture-out-");
    proxy = await createFileProxy({
      sdk,
      authenticate: bearerTokens(parseBearerTokens(`alice:${ALICE},bob:${BOB}`, "test")),
      config: {
        mcpServers: { up: fixtureCommand({ OUTPUT_DIR: out, MARKER_DIR: out }) },
        servers: {
          up: {
            outputDirs: [out],
            tools: {
              write_file: { artifacts: saved },
              say_path: { artifacts: saved },
              echo: { artifacts: { locator: "structured", pointer: "/echoed", relativeTo: out } },
              write_to: { artifacts: { locator: "none", outputArg: "output", outputName: "out.txt" } },
              link_output: { artifacts: { locator: "none", outputArg: "output", outputName: "link.txt" } },
            },
          },
        },
      },
      upstreamStderr: "ignore",
    });
    mcpUrl = new URL((await proxy.listen()).mcpUrl);
    const kind = sdk === "v2" ? "v2-modern" : "v1";
    alice = await connectHttp(kind, mcpUrl, ALICE);
    bob = await connectHttp(kind, mcpUrl, BOB);
  });

  afterAll(async () => {
    await alice?.close().catch(() => undefined);
    await bob?.close().catch(() => undefined);
    await proxy?.close({ timeoutMs: 1000 });
    await removeDirs(out);
  });

  const call = async (client: AnyClient, name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as ToolResult;

  /** A file Alice's earlier call left in the shared folder (an upstream that keeps its outputs). */
  async function aliceLeftover(name: string): Promise<string> {
    const path = join(out, name);
    await writeFile(path, SECRET_TEXT);
    const past = new Date(Date.now() - 60_000);
    await utimes(path, past, past);
    return path;
  }

  function expectNothingOf(result: ToolResult): void {
    expect(result._meta?.artifact_uri).toBeUndefined();
    expect(JSON.stringify(result)).not.toContain(SECRET_TEXT);
  }

  it("regression: the caller's own fresh output is captured with exact bytes and leaves the shared folder", async () => {
    const body = `alice's own ${sdk} output ✓`;
    const result = await call(alice, "write_file", { name: `own-${sdk}.txt`, text: body });
    expect(result.isError).toBeFalsy();
    const meta = result._meta as { artifact_uri: string; download_url: string };
    expect(await (await fetch(meta.download_url)).text()).toBe(body);
    expect(await readdir(out)).not.toContain(`own-${sdk}.txt`);
    const own = await call(alice, "write_to", { text: body });
    expect(await (await fetch((own._meta as { download_url: string }).download_url)).text()).toBe(body);
    expect(
      (await readdir(out)).filter((name) => name.startsWith("out-") || name.startsWith(".call-")),
    ).toEqual([]);
  });

  it("Bob naming Alice's file by absolute path (the docs' regex locator) gets NOT_FOUND, as for no file", async () => {
    const leftover = await aliceLeftover(`q3-salaries-${sdk}.txt`);
    const taken = await call(bob, "say_path", { path: leftover });
    expect(taken.isError).toBe(true);
    expect(textOf(taken)).toMatch(/^Error NOT_FOUND/);
    expectNothingOf(taken);
    const missing = await call(bob, "say_path", { path: join(out, `no-such-${sdk}.txt`) });
    // The same answer as for a file that does not exist: no existence oracle on others' files.
    expect(textOf(missing).replace(join(out, `no-such-${sdk}.txt`), "P")).toBe(
      textOf(taken).replace(leftover, "P"),
    );
    expect(await readFile(leftover, "utf8")).toBe(SECRET_TEXT);
  });

  it("a relative path is refused without relativeTo, and with it must still be this call's file", async () => {
    const leftover = await aliceLeftover(`rel-${sdk}.txt`);
    const relative = await call(bob, "say_path", { path: `rel-${sdk}.txt` });
    expect(relative.isError).toBe(true);
    expect(textOf(relative)).toMatch(/^Error PATH_NOT_ALLOWED.*relative path/);
    expectNothingOf(relative);
    // The structured locator with relativeTo: resolved in the output folder, then refused as stale.
    const structured = await call(bob, "echo", { text: `rel-${sdk}.txt` });
    expect(structured.isError).toBe(true);
    expect(textOf(structured)).toMatch(/^Error NOT_FOUND/);
    expectNothingOf(structured);
    expect(await readFile(leftover, "utf8")).toBe(SECRET_TEXT);
  });

  it("a symlink or a hardlink in the output folder to Alice's file is not Bob's output", async () => {
    const leftover = await aliceLeftover(`linked-${sdk}.txt`);
    await symlink(leftover, join(out, `sym-${sdk}.txt`));
    await link(leftover, join(out, `hard-${sdk}.txt`));
    for (const name of [`sym-${sdk}.txt`, `hard-${sdk}.txt`]) {
      const taken = await call(bob, "say_path", { path: join(out, name) });
      expect(taken.isError).toBe(true);
      expect(textOf(taken)).toMatch(/^Error NOT_FOUND/);
      expectNothingOf(taken);
    }
  });

  it("the none locator: a pre-allocated output linked to Alice's file is refused (own folder, fresh inode)", async () => {
    const leftover = await aliceLeftover(`none-${sdk}.txt`);
    for (const hard of [false, true]) {
      const taken = await call(bob, "link_output", { target: leftover, hard });
      expectNothingOf(taken);
      if (!hard) expect(textOf(taken)).toMatch(/^Error PATH_NOT_ALLOWED/);
      else expect(textOf(taken)).toMatch(/^Error NOT_FOUND/);
    }
    expect(await readFile(leftover, "utf8")).toBe(SECRET_TEXT);
    expect((await readdir(out)).filter((name) => name.startsWith("out-"))).toEqual([]);
  });
});
