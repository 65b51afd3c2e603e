/**
 * Issue 40, items 8 and 9: folders the bridge and the proxy make for one call, in shared places.
 * - Item 8: the bridge's temp folder is checked on every call, not once per process. Removed (a temp
 *   cleaner) and made again by another local user (uid 1002) while the server runs, it was used as
 *   is: the attacker swapped the call folder for one of its own whose link fed the tool a server-only
 *   file. Now the next call is refused (`STORAGE_ERROR`) before any file goes there.
 * - Item 9: a killed proxy's call folders (`out-*`, with the caller's outputs) are swept at the next
 *   start and on a timer — only real folders of this user, never through a symlink; and a call
 *   folder swapped while the call runs is refused at capture.
 * The server is this process (root); the attacker a child run as uid 1002; the shared folder a test
 * root with mode 1777.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { processSpaceId } from "../../src/internal/process-space.js";
import { sweepCallDirs } from "../../src/internal/temp-dir.js";
import { makeCallFolder, sweepCallFolders } from "../../src/proxy/call-outputs.js";
import { createFileProxy } from "../../src/proxy/index.js";
import { fixtureCommand } from "../proxy/support.js";
import { codeOf, waitUntil } from "../support/helpers.js";
import { asAttacker, IS_ROOT, SKIP_REASON, sharedTempRoot } from "./two-uids.js";

const SERVER_SECRET = "server-only: signing key";
const UPLOAD = "the caller's own report";
const DATA_URL = `data:text/plain;name=report.txt;base64,${Buffer.from(UPLOAD).toString("base64")}`;

/** The attacker makes a folder (mode 0777, theirs) at `argv[1]`. */
const MAKE_OPEN_FOLDER = `
import { mkdirSync, chmodSync } from "node:fs";
mkdirSync(process.argv[1]);
chmodSync(process.argv[1], 0o777);
`;

/** The attacker moves folder `argv[1]` aside and puts one of its own there, `argv[2]` in it a link to `argv[3]`. */
const SWAP_FOLDER = `
import { mkdirSync, renameSync, symlinkSync } from "node:fs";
const [dir, name, target] = process.argv.slice(1);
renameSync(dir, dir + ".moved");
mkdirSync(dir);
symlinkSync(target, dir + "/" + name);
`;

/** The attacker plants folder `argv[1]` (theirs) and a symlink `argv[2]` to `argv[3]`. */
const PLANT = `
import { mkdirSync, writeFileSync, symlinkSync } from "node:fs";
const [dir, link, target] = process.argv.slice(1);
mkdirSync(dir);
writeFileSync(dir + "/mine.txt", "attacker's");
symlinkSync(target, link);
`;

/** A process id that is certainly gone: a child that has exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ["-e", ""]).pid as number;
}

let shared: string;
let privateDir: string;
let secret: string;
beforeEach(async () => {
  shared = await sharedTempRoot("fb-shared-calls-");
  privateDir = `${shared}-private`;
  await mkdir(privateDir, { mode: 0o700 });
  secret = join(privateDir, "report.txt");
  await writeFile(secret, SERVER_SECRET, { mode: 0o600 });
});
afterEach(async () => {
  await rm(shared, { recursive: true, force: true });
  await rm(privateDir, { recursive: true, force: true });
});

describe.skipIf(!IS_ROOT)(`item 8: the bridge's temp folder, checked on each call (${SKIP_REASON})`, () => {
  it("refuses the temp folder once another user made it again: the tool is never fed a server-only file", async () => {
    const tmpDir = join(shared, "mcp-file-bridge");
    const bridge = new FileBridge({ tmpDir, sweepOnStart: false });
    const first = await bridge.resolve(DATA_URL, { scope: "s" });
    expect(await readFile(first.path, "utf8")).toBe(UPLOAD);
    await first.dispose();
    await bridge.close();
    // A temp cleaner removes it; the attacker makes it again.
    await rm(tmpDir, { recursive: true, force: true });
    asAttacker(MAKE_OPEN_FOLDER, tmpDir);
    const outcome = await bridge.resolve(DATA_URL, { scope: "s" }).then(
      async (file) => {
        // Before the tool reads: the call folder swapped for the attacker's, holding a link.
        asAttacker(SWAP_FOLDER, dirname(file.path), basename(file.path), secret);
        try {
          return await readFile(file.path, "utf8");
        } finally {
          await file.dispose();
        }
      },
      (error: { code?: string }) => error.code,
    );
    expect(outcome).toBe("STORAGE_ERROR");
    // Nothing of the call went into the attacker's folder.
    expect(await readdir(tmpDir)).toEqual([]);
    await bridge.close();
  });

  it("refuses a temp folder that is a symlink (to a folder of the server's user, planted by another)", async () => {
    const tmpDir = join(shared, "linked");
    asAttacker(
      `import { symlinkSync } from "node:fs"; symlinkSync(process.argv[2], process.argv[1]);`,
      tmpDir,
      privateDir,
    );
    const bridge = new FileBridge({ tmpDir, sweepOnStart: false });
    expect(await codeOf(bridge.resolve(DATA_URL, { scope: "s" }))).toBe("STORAGE_ERROR");
    expect(await readdir(privateDir)).toEqual(["report.txt"]);
  });
});

describe.skipIf(!IS_ROOT)(`item 9: a killed proxy's call folders (out-*) (${SKIP_REASON})`, () => {
  it("sweeps this user's out-* of a gone process, never another user's, never through a link", async () => {
    const out = join(shared, "outputs");
    await mkdir(out, { mode: 0o700 });
    await chmod(out, 0o1777);
    const tag = `${deadPid()}.${processSpaceId()}`;
    const killed = join(out, `out-${tag}-Abc123`);
    await mkdir(killed, { mode: 0o700 });
    await writeFile(join(killed, "salaries.csv"), "the caller's output");
    const theirs = join(out, `out-${tag}-Xyz789`);
    const link = join(out, `out-${tag}-Lnk456`);
    asAttacker(PLANT, theirs, link, privateDir);
    const live = await makeCallFolder(out);
    expect(await sweepCallFolders(out)).toBe(1);
    expect((await readdir(out)).sort()).toEqual(
      [basename(link), basename(live.dir), basename(theirs)].sort(),
    );
    expect(await readdir(privateDir)).toEqual(["report.txt"]);
    expect(await readFile(join(theirs, "mine.txt"), "utf8")).toBe("attacker's");
    await live.remove();
  });

  it("a proxy that starts removes the out-* a killed proxy left in its output folder", async () => {
    const out = join(shared, "proxy-out");
    await mkdir(out, { mode: 0o700 });
    const killed = join(out, `out-${deadPid()}.${processSpaceId()}-Def456`);
    await mkdir(killed, { mode: 0o700 });
    await writeFile(join(killed, "salaries.csv"), "the caller's output");
    const proxy = await createFileProxy({
      sdk: "v1",
      config: {
        mcpServers: { up: fixtureCommand({ OUTPUT_DIR: out }) },
        servers: {
          up: {
            outputDirs: [out],
            tools: {
              write_file: {
                artifacts: { locator: "regex", pattern: "Saved to (?<path>\\S+)", outputDirArg: "dir" },
              },
            },
          },
        },
      },
      upstreamStderr: "ignore",
    });
    try {
      await waitUntil(() => !existsSync(killed), 10_000);
      expect(await readdir(out)).toEqual([]);
    } finally {
      await proxy.close({ timeoutMs: 1000 });
    }
  });

  it("refuses to capture from a call folder swapped while the call ran (a shared, non-sticky parent)", async () => {
    const out = join(shared, "open-outputs");
    await mkdir(out);
    await chmod(out, 0o777);
    const own = await makeCallFolder(out);
    await writeFile(join(own.dir, "report.txt"), UPLOAD);
    asAttacker(SWAP_FOLDER, own.dir, "report.txt", secret);
    expect(await codeOf(own.check())).toBe("STORAGE_ERROR");
    await own.remove();
    await rm(`${own.dir}.moved`, { recursive: true, force: true });
  });
});

describe.skipIf(!IS_ROOT)(
  `the bridge's call-folder sweep, with another user's entries (${SKIP_REASON})`,
  () => {
    it("removes this user's call-* of a gone process; never another user's, never through a link", async () => {
      const tmpDir = join(shared, "bridge-tmp");
      await mkdir(tmpDir, { mode: 0o700 });
      await chmod(tmpDir, 0o1777);
      const tag = `${deadPid()}.${processSpaceId()}`;
      const killed = join(tmpDir, `call-${tag}-a1b2c3`);
      await mkdir(killed, { mode: 0o700 });
      await writeFile(join(killed, "report.txt"), UPLOAD);
      const theirs = join(tmpDir, `call-${tag}-d4e5f6`);
      const link = join(tmpDir, `call-${tag}-0a0b0c`);
      asAttacker(PLANT, theirs, link, privateDir);
      expect(await sweepCallDirs(tmpDir, { olderThanMs: 0, now: Date.now() + 1000, active: new Set() })).toBe(
        1,
      );
      expect((await readdir(tmpDir)).sort()).toEqual([basename(link), basename(theirs)].sort());
      expect(await readdir(privateDir)).toEqual(["report.txt"]);
    });
  },
);
