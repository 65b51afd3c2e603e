/**
 * The default temp folder is per user. On a shared machine the OS temp folder (`/tmp`) is open to
 * every local user; with one fixed name (`/tmp/mcp-file-bridge`), another user who made that folder
 * first stopped every server of ours on the machine: the folder is not ours, so each call was refused
 * (`STORAGE_ERROR`, as it must be). The default now carries the user id
 * (`<tmpdir>/mcp-file-bridge-<uid>`), so a folder made by someone else under the old name is never
 * ours to use or to refuse. The OS temp folder here is a test root with mode 1777 (`TMPDIR`), never
 * the real `/tmp`; the other user is a child run as uid 1002.
 */
import { existsSync } from "node:fs";
import { readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Artifacts } from "../../src/artifacts/artifacts.js";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { memoryState } from "../../src/storage/memory-state.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import { asAttacker, IS_ROOT, SKIP_REASON, sharedTempRoot } from "./two-uids.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const TEXT = "the caller's own report";
const DATA_URL = `data:text/plain;name=report.txt;base64,${Buffer.from(TEXT).toString("base64")}`;

/** The other user makes folder `argv[1]` (theirs, mode 0777). */
const MAKE_OPEN_FOLDER = `
import { mkdirSync, chmodSync } from "node:fs";
mkdirSync(process.argv[1]);
chmodSync(process.argv[1], 0o777);
`;

let shared: string;
let savedTmp: string | undefined;
beforeEach(async () => {
  shared = await sharedTempRoot("fb-default-tmp-");
  savedTmp = process.env.TMPDIR;
  process.env.TMPDIR = shared;
});
afterEach(async () => {
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
  await rm(shared, { recursive: true, force: true });
});

describe.skipIf(!IS_ROOT)(`the default temp folder belongs to this user (${SKIP_REASON})`, () => {
  it("a FileBridge without tmpDir works although another user made <tmpdir>/mcp-file-bridge first", async () => {
    asAttacker(MAKE_OPEN_FOLDER, join(shared, "mcp-file-bridge"));
    const bridge = new FileBridge({ sweepOnStart: false });
    const file = await bridge.resolve(DATA_URL, { scope: "s" });
    expect(await readFile(file.path, "utf8")).toBe(TEXT);
    const mine = join(shared, `mcp-file-bridge-${process.getuid?.()}`);
    expect(file.path.startsWith(`${mine}/`)).toBe(true);
    expect((await stat(mine)).mode & 0o777).toBe(0o700);
    // Nothing of ours went into the other user's folder.
    expect(await readdir(join(shared, "mcp-file-bridge"))).toEqual([]);
    await file.dispose();
    expect(existsSync(file.path)).toBe(false);
  });

  it("a FileBridge without tmpDir works although another user made the folder under this user's name", async () => {
    // The user id is no secret: the per-user name can be taken first on purpose.
    const taken = join(shared, `mcp-file-bridge-${process.getuid?.()}`);
    asAttacker(MAKE_OPEN_FOLDER, taken);
    const bridge = new FileBridge({ sweepOnStart: false });
    const file = await bridge.resolve(DATA_URL, { scope: "s" });
    expect(await readFile(file.path, "utf8")).toBe(TEXT);
    expect(file.path.startsWith(`${taken}/`)).toBe(false);
    expect(file.path.startsWith(`${shared}/`)).toBe(true);
    const folder = join(file.path, "..", "..");
    expect(folder.startsWith(`${taken}-`)).toBe(true);
    const info = await stat(folder);
    expect(info.uid).toBe(process.getuid?.());
    expect(info.mode & 0o777).toBe(0o700);
    expect(await readdir(taken)).toEqual([]);
    await file.dispose();
    expect(existsSync(file.path)).toBe(false);
  });

  it("Artifacts without tmpDir capture a tool's file although another user made the old folder", async () => {
    asAttacker(MAKE_OPEN_FOLDER, join(shared, "mcp-file-bridge"));
    const store = memoryStore();
    const minter = new SignedUrlMinter({
      secret: SECRET,
      baseUrl: "http://127.0.0.1:9",
      state: memoryState(),
    });
    const artifacts = new Artifacts({ store, minter, scope: () => "s1" });
    const handler = artifacts.withArtifacts(
      async (args: { out?: string }) => {
        await writeFile(args.out as string, TEXT);
        return { content: [] };
      },
      { outputPathArg: "out" },
    );
    const result = await handler({}, {});
    expect(result.isError).not.toBe(true);
    const uri = result._meta?.artifact_uri as string;
    expect(typeof uri).toBe("string");
    const listed = await store.list("s1");
    expect(listed.files).toHaveLength(1);
    const stream = await store.read("s1", (listed.files[0] as { id: string }).id);
    const chunks: Buffer[] = [];
    for await (const chunk of stream ?? []) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe(TEXT);
    expect(await readdir(join(shared, "mcp-file-bridge"))).toEqual([]);
  });
});
