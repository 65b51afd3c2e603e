/**
 * Issue 21, part 1 (the residual): two users' calls running at the same time. Alice and Bob (bearer
 * tokens) share one proxy (SDK v1 and v2) in front of the real stdio fixture upstream. The fixture's
 * `write_held` writes Alice's file only once Bob's `say_held` call has arrived, lets it name the file,
 * and returns only on `release`: Bob names Alice's fresh file while both calls run.
 * - With `outputDirArg` every call gets a folder of its own: Bob never gets Alice's file (absolute or
 *   bare name), his own same-named output is captured with exact bytes, hers too, and no call folder
 *   is left behind.
 * - Without it (a shared output folder) the bound: Alice's fresh file is exposed only to a call that
 *   ran while it was written; it leaves the folder once captured (the writer's call then fails
 *   instead of linking it a second time), and no later call gets it.
 */
import { readdir, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearerTokens, parseBearerTokens } from "../../src/proxy/bearer-tokens.js";
import { createFileProxy, type FileProxy } from "../../src/proxy/index.js";
import { type AnyClient, connectHttp, type ToolResult } from "../mcp/v2/harness.js";
import { fixtureCommand, removeDirs, tempDir, textOf } from "../proxy/support.js";

const ALICE = "alice-token-folders-0123";
const BOB = "bob-token-folders-0123456";
const SECRET_TEXT = "alice's q3 salaries: 1,000,000";
const BOB_TEXT = "bob's own report ✓";
const saved = { locator: "regex" as const, pattern: "Saved to (?<path>\\S+)" };
const own = { artifacts: { ...saved, outputDirArg: "dir" } };
const shared = { artifacts: saved };

describe.each(["v1", "v2"] as const)("proxy on SDK %s: concurrent calls of two users", (sdk) => {
  let ownOut: string;
  let sharedOut: string;
  let proxy: FileProxy;
  let alice: AnyClient;
  let bob: AnyClient;

  beforeAll(async () => {
    ownOut = await tempDir("proxy-folders-own-");
    sharedOut = await tempDir("proxy-folders-shared-");
    proxy = await createFileProxy({
      sdk,
      authenticate: bearerTokens(parseBearerTokens(`alice:${ALICE},bob:${BOB}`, "test")),
      config: {
        mcpServers: {
          up: fixtureCommand({ OUTPUT_DIR: ownOut }),
          sh: fixtureCommand({ OUTPUT_DIR: sharedOut }),
        },
        servers: {
          up: { outputDirs: [ownOut], tools: { write_held: own, say_held: own, write_file: own } },
          sh: {
            prefix: "shared_",
            outputDirs: [sharedOut],
            tools: { write_held: shared, say_held: shared, say_path: shared },
          },
        },
      },
      upstreamStderr: "ignore",
    });
    const mcpUrl = new URL((await proxy.listen()).mcpUrl);
    const kind = sdk === "v2" ? "v2-modern" : "v1";
    alice = await connectHttp(kind, mcpUrl, ALICE);
    bob = await connectHttp(kind, mcpUrl, BOB);
  });

  afterAll(async () => {
    await alice?.close().catch(() => undefined);
    await bob?.close().catch(() => undefined);
    await proxy?.close({ timeoutMs: 1000 });
    await removeDirs(ownOut, sharedOut);
  });

  const call = async (client: AnyClient, name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as ToolResult;
  const downloaded = async (result: ToolResult) =>
    await (await fetch((result._meta as { download_url: string }).download_url)).text();

  function expectNothingOf(result: ToolResult): void {
    expect(result.isError).toBe(true);
    expect(result._meta?.artifact_uri).toBeUndefined();
    expect(JSON.stringify(result)).not.toContain(SECRET_TEXT);
  }

  it("outputDirArg is filled by the proxy and hidden from callers", async () => {
    const listed = await bob.listTools();
    const schema = listed.tools.find((tool) => tool.name === "write_file")?.inputSchema as {
      properties: Record<string, unknown>;
      required?: string[];
    };
    expect(Object.keys(schema.properties).sort()).toEqual(["name", "text"]);
    expect(schema.required ?? []).not.toContain("dir");
    // A folder the caller names is replaced by the call's own.
    const result = await call(bob, "write_file", { name: `chosen-${sdk}.txt`, text: BOB_TEXT, dir: ownOut });
    expect(await downloaded(result)).toBe(BOB_TEXT);
    expect(await readdir(ownOut)).toEqual([]);
  });

  it("own call folders: Bob never gets Alice's fresh file; both get their own exact bytes", async () => {
    const key = `own-${sdk}`;
    const held = call(alice, "write_held", { key, name: "report.txt", text: SECRET_TEXT });
    // Alice's call is running and her file is written: Bob names it by its absolute path …
    const absolute = await call(bob, "say_held", { key });
    expectNothingOf(absolute);
    expect(textOf(absolute)).toMatch(/^Error PATH_NOT_ALLOWED/);
    // … and by its bare name (relative to Bob's own folder, where there is no such file).
    const bare = await call(bob, "say_held", { key, bare: true });
    expectNothingOf(bare);
    expect(textOf(bare)).toMatch(/^Error NOT_FOUND/);
    // Regression: Bob's own output of the same name, written while Alice's call runs, is his.
    const bobs = await call(bob, "write_file", { name: "report.txt", text: BOB_TEXT });
    expect(bobs.isError).toBeFalsy();
    expect(await downloaded(bobs)).toBe(BOB_TEXT);
    expect((await readdir(ownOut)).filter((name) => name.startsWith("out-"))).toHaveLength(1);
    await call(alice, "release", { key });
    const alices = await held;
    expect(alices.isError).toBeFalsy();
    expect(await downloaded(alices)).toBe(SECRET_TEXT);
    expect(JSON.stringify(alices)).not.toContain(ownOut);
    expect(await readdir(ownOut)).toEqual([]);
  });

  it("a shared output folder (no outputDirArg): the bound of the residual", async () => {
    const key = `shared-${sdk}`;
    const held = call(alice, "shared_write_held", { key, name: "report.txt", text: SECRET_TEXT });
    // Residual: Bob's call ran while Alice's file was written in the shared folder, so it counts as
    // fresh for him (docs/proxy.md says so and points to outputDirArg).
    const taken = await call(bob, "shared_say_held", { key });
    expect(await downloaded(taken)).toBe(SECRET_TEXT);
    // Bound 1: once captured it left the shared folder, and the writer's later capture fails rather
    // than linking it a second time.
    expect(await readdir(sharedOut)).toEqual([]);
    await call(alice, "shared_release", { key });
    const alices = await held;
    expect(alices.isError).toBe(true);
    expect(textOf(alices)).toMatch(/^Error NOT_FOUND/);
    // Bound 2: after the calls end, naming it again finds nothing.
    const again = await call(bob, "shared_say_held", { key });
    expectNothingOf(again);
    expect(textOf(again)).toMatch(/^Error NOT_FOUND/);
    // Bound 3: a file written before the call started is never captured.
    const before = join(sharedOut, `before-${sdk}.txt`);
    await writeFile(before, SECRET_TEXT);
    const past = new Date(Date.now() - 5_000);
    await utimes(before, past, past);
    const stale = await call(bob, "shared_say_path", { path: before });
    expectNothingOf(stale);
    expect(textOf(stale)).toMatch(/^Error NOT_FOUND/);
    expect(await readdir(sharedOut)).toEqual([`before-${sdk}.txt`]);
  });
});
