/**
 * Issue 40, item 4: the default fs tus staging folder (`<os temp>/mcp-file-bridge-tus-<uid>`) and the
 * S3 staging's local spool folder live in a shared temp folder. Another local user (uid 1002) who
 * makes the folder first must not read the uploads, nor make the server write or read through
 * symlinks planted there; a folder removed and made again by that user while the server runs is
 * refused at its next use. The server is this process (root); the shared temp folder is a private
 * test root with mode 1777 (`TMPDIR` points at it while the default folder's name is taken).
 */
import { spawnSync } from "node:child_process";
import { mkdir, readdir, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { text } from "node:stream/consumers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { processSpaceId } from "../../src/internal/process-space.js";
import { Spool, sweepSpools } from "../../src/s3/s3-spool.js";
import { fsTusStaging, type TusStaging } from "../../src/uploads/tus/fs-staging.js";
import { codeOf } from "../support/helpers.js";
import { asAttacker, IS_ROOT, SKIP_REASON, sharedTempRoot } from "./two-uids.js";

const UPLOAD = "alice's upload: the q3 salaries";
const ID = "0123456789abcdef0123456789abcdef";
const SERVER_SECRET = "server-only: signing key";

/** The attacker makes a folder (mode 0777, theirs) at `argv[1]`. */
const MAKE_OPEN_FOLDER = `
import { mkdirSync, chmodSync } from "node:fs";
const dir = process.argv[1];
mkdirSync(dir);
chmodSync(dir, 0o777);
`;

/** The attacker reads every file in the folder at `argv[1]` (what it can) and prints them. */
const READ_ALL = `
import { readdirSync, readFileSync } from "node:fs";
const dir = process.argv[1];
const out = {};
for (const name of readdirSync(dir)) { try { out[name] = readFileSync(dir + "/" + name, "utf8"); } catch {} }
console.log(JSON.stringify(out));
`;

/** The attacker plants a symlink at `argv[1]` to `argv[2]`. */
const PLANT_LINK = `
import { symlinkSync, rmSync } from "node:fs";
rmSync(process.argv[1], { force: true });
symlinkSync(process.argv[2], process.argv[1]);
`;

describe.skipIf(!IS_ROOT)(`the default tus staging folder in a shared temp folder (${SKIP_REASON})`, () => {
  let shared: string;
  let privateDir: string;
  let secret: string;
  const savedTmp = process.env.TMPDIR;

  beforeEach(async () => {
    shared = await sharedTempRoot("fb-shared-tus-");
    // A file only the server's user may read, in a folder of its own.
    privateDir = `${shared}-private`;
    await mkdir(privateDir, { mode: 0o700 });
    secret = join(privateDir, "secret.txt");
    await writeFile(secret, SERVER_SECRET, { mode: 0o600 });
  });
  afterEach(async () => {
    process.env.TMPDIR = savedTmp;
    if (savedTmp === undefined) delete process.env.TMPDIR;
    await rm(shared, { recursive: true, force: true });
    await rm(privateDir, { recursive: true, force: true });
  });

  /** The staging with its default folder, under the shared root. */
  function defaultStaging(): { staging: TusStaging; dir: string } {
    process.env.TMPDIR = shared;
    try {
      return { staging: fsTusStaging(), dir: join(shared, `mcp-file-bridge-tus-${process.getuid?.()}`) };
    } finally {
      process.env.TMPDIR = savedTmp;
      if (savedTmp === undefined) delete process.env.TMPDIR;
    }
  }

  /** Creates upload ID and writes UPLOAD: the server's side of one upload. */
  async function stageUpload(staging: TusStaging): Promise<string> {
    try {
      await staging.create(ID, Date.now() + 60_000);
      const { error } = await staging.write(ID, 0, Readable.from([Buffer.from(UPLOAD)]));
      if (error) throw error;
      return "STAGED";
    } catch (error) {
      return (error as { code?: string }).code ?? String(error);
    }
  }

  it("refuses a staging folder another user made first: the uploads are not written where it reads them", async () => {
    const { staging, dir } = defaultStaging();
    asAttacker(MAKE_OPEN_FOLDER, dir);
    expect(await stageUpload(staging)).toBe("STORAGE_ERROR");
    // What the attacker can read there: nothing of the upload.
    expect(asAttacker(READ_ALL, dir)).not.toContain(UPLOAD);
    expect(await readdir(dir)).toEqual([]);
  });

  it("writes nothing through a symlink planted in such a folder (the server's own file stays as it was)", async () => {
    const { staging, dir } = defaultStaging();
    asAttacker(MAKE_OPEN_FOLDER, dir);
    // An upload id the attacker learned (a Location header): its expiry sidecar points at the secret.
    asAttacker(PLANT_LINK, join(dir, `${ID}.expires`), secret);
    expect(await codeOf(staging.create(ID, Date.now() + 60_000))).toBe("STORAGE_ERROR");
    expect(await readFile(secret, "utf8")).toBe(SERVER_SECRET);
  });

  it("refuses a folder removed and made again by another user while the server runs, at its next use", async () => {
    const { staging, dir } = defaultStaging();
    expect(await stageUpload(staging)).toBe("STAGED");
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    // A temp cleaner removes it; the attacker makes it again and swaps the staged file for a link
    // to a server-only file, so that the commit would read (and store) the secret as the upload.
    await rm(dir, { recursive: true });
    asAttacker(MAKE_OPEN_FOLDER, dir);
    asAttacker(PLANT_LINK, join(dir, ID), secret);
    const read = await text(staging.read(ID, SERVER_SECRET.length)).catch(
      (error: { code?: string }) => error.code,
    );
    expect(read).toBe("STORAGE_ERROR");
    expect(
      await codeOf(
        staging.write(ID, 0, Readable.from([Buffer.from("x")])).then((w) => {
          if (w.error) throw w.error;
        }),
      ),
    ).toBe("STORAGE_ERROR");
  });

  it("makes its own folder private (0700) and stages there as before", async () => {
    const { staging, dir } = defaultStaging();
    expect(await stageUpload(staging)).toBe("STAGED");
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect(await text(staging.read(ID, UPLOAD.length))).toBe(UPLOAD);
    await staging.remove(ID);
  });
});

describe.skipIf(!IS_ROOT)(`the S3 staging's spool folder in a shared temp folder (${SKIP_REASON})`, () => {
  let shared: string;
  beforeEach(async () => {
    shared = await sharedTempRoot("fb-shared-spool-");
  });
  afterEach(async () => {
    await rm(shared, { recursive: true, force: true });
  });

  it("refuses a spool folder another user made first: no body is spooled where it can read it", async () => {
    const dir = join(shared, "mcp-file-bridge-tus-s3-0");
    asAttacker(MAKE_OPEN_FOLDER, dir);
    const outcome = await Spool.open(dir).then(
      async (spool) => {
        await spool.append(Buffer.from(UPLOAD));
        return asAttacker(READ_ALL, dir);
      },
      (error: { code?: string }) => error.code,
    );
    expect(outcome).toBe("STORAGE_ERROR");
  });

  it("sweeps the spool files of a killed process and day-old ones of the older layout, keeps live ones", async () => {
    const dir = join(shared, "spool");
    const live = await Spool.open(dir);
    await live.append(Buffer.from(UPLOAD));
    // A killed process's spool (its pid is gone), and a spool of the layout before (random name
    // only) untouched for two days: both crash leftovers.
    const dead = spawnSync(process.execPath, ["-e", ""]).pid as number;
    const killed = join(dir, `spool-${dead}.${processSpaceId()}-AAAAAAAAAAAAAAAA`);
    await writeFile(killed, UPLOAD, { mode: 0o600 });
    const leftover = join(dir, "AAAAAAAAAAAAAAAA");
    await writeFile(leftover, UPLOAD, { mode: 0o600 });
    const old = new Date(Date.now() - 2 * 24 * 60 * 60_000);
    await utimes(leftover, old, old);
    expect(await sweepSpools(dir, Date.now())).toBe(2);
    expect(await readdir(dir)).toEqual([live.path.slice(dir.length + 1)]);
    await live.close();
    expect(await readdir(dir)).toEqual([]);
  });
});
