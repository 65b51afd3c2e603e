import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, realpath, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Artifacts } from "../../src/artifacts/artifacts.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import type { FileStore } from "../../src/storage/types.js";

// Attack: a tool (or anyone who can write to its output folder) plants a symlink at the output path
// that withArtifacts captures, pointing at a secret outside. The old capture stat()ed and re-opened
// the path, so it stored the secret and handed back a download link to it. Now the output is
// opened once (realpath inside the call folder, O_NOFOLLOW, descriptor re-check) and read from
// that descriptor only.

const SECRET = "TOP-SECRET-OUTSIDE-THE-CALL-FOLDER";

function resultText(result: CallToolResult): string {
  return JSON.stringify(result);
}

async function storedBytes(store: FileStore, scope: string): Promise<string[]> {
  const out: string[] = [];
  for (const file of (await store.list(scope)).files) {
    const stream = await store.read(scope, file.id);
    const chunks: Buffer[] = [];
    for await (const chunk of stream ?? []) chunks.push(chunk as Buffer);
    out.push(Buffer.concat(chunks).toString());
  }
  return out;
}

describe.skipIf(process.platform === "win32")("attack: a symlink at an artifact's output path", () => {
  let base: string;
  let outside: string;
  let store: FileStore;
  let artifacts: Artifacts;

  beforeEach(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), "artifact-symlink-")));
    outside = join(base, "outside");
    await mkdir(outside);
    await writeFile(join(outside, "secret.txt"), SECRET);
    await writeFile(join(outside, "out.txt"), SECRET);
    store = memoryStore({ sweepInterval: 0 });
    artifacts = new Artifacts({ store, scope: () => "s1", tmpDir: join(base, "tmp") });
  });
  afterEach(async () => {
    await store.close?.();
    await rm(base, { recursive: true, force: true, maxRetries: 3 });
  });

  it("refuses a symlink planted at the output path: PATH_NOT_ALLOWED, nothing stored", async () => {
    const tool = artifacts.withArtifacts(
      async (args: { out?: string }) => {
        await symlink(join(outside, "secret.txt"), args.out as string);
        return { content: [{ type: "text", text: "done" }] };
      },
      { outputPathArg: "out", outputName: "out.txt" },
    );
    const result = await tool({}, {});
    expect(result.isError).toBe(true);
    expect(resultText(result)).toContain("PATH_NOT_ALLOWED");
    expect(resultText(result)).not.toContain(SECRET);
    expect((await store.list("s1")).files).toEqual([]);
    expect(await readdir(join(base, "tmp"))).toEqual([]);
  });

  it("refuses a call folder swapped for a symlink to an outside folder", async () => {
    const tool = artifacts.withArtifacts(
      async (args: { out?: string }) => {
        const folder = dirname(args.out as string);
        await rm(folder, { recursive: true });
        await symlink(outside, folder); // outside/out.txt now sits at the output path
        return { content: [{ type: "text", text: "done" }] };
      },
      { outputPathArg: "out", outputName: "out.txt" },
    );
    const result = await tool({}, {});
    expect(result.isError).toBe(true);
    expect(resultText(result)).toContain("PATH_NOT_ALLOWED");
    expect(resultText(result)).not.toContain(SECRET);
    expect((await store.list("s1")).files).toEqual([]);
  });

  it("capture({ path }) refuses a symlink that leads out of its folder, and of a given root", async () => {
    const folder = join(base, "outputs");
    await mkdir(folder);
    await symlink(join(outside, "secret.txt"), join(folder, "report.txt"));
    await expect(artifacts.capture({ scope: "s1", path: join(folder, "report.txt") })).rejects.toMatchObject({
      code: "PATH_NOT_ALLOWED",
    });
    await writeFile(join(folder, "real.txt"), "fine");
    await expect(
      artifacts.capture({ scope: "s1", path: join(outside, "secret.txt"), root: folder }),
    ).rejects.toMatchObject({ code: "PATH_NOT_ALLOWED" });
    const ok = await artifacts.capture({ scope: "s1", path: join(folder, "real.txt"), root: folder });
    expect(ok.file.size).toBe(4);
    expect(await storedBytes(store, "s1")).toEqual(["fine"]);
  });
});

// The same, raced: a child process swaps the output between a real file and a symlink to the secret
// as fast as it can while captures run. A capture either stores the real file's bytes or is refused.
const SWAPPER = `
const fs = require("node:fs");
const [target, secret, seconds] = process.argv.slice(1);
const until = Date.now() + Number(seconds) * 1000;
let n = 0;
while (Date.now() < until) {
  n++;
  try {
    fs.symlinkSync(secret, target + ".l" + n);
    fs.renameSync(target + ".l" + n, target);
    fs.writeFileSync(target + ".f" + n, "INSIDE");
    fs.renameSync(target + ".f" + n, target);
  } catch {}
}
`;

describe.skipIf(process.platform === "win32")("attack: output swapped to a symlink during capture", () => {
  let base: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), "artifact-race-")));
    await mkdir(join(base, "outside"));
    await mkdir(join(base, "work"));
    await writeFile(join(base, "outside", "secret.txt"), SECRET);
    await writeFile(join(base, "work", "out.txt"), "INSIDE");
  });
  afterAll(async () => {
    for (const child of children) child.kill("SIGKILL");
    await rm(base, { recursive: true, force: true, maxRetries: 3 });
  });

  it("stores the secret 0 times (at most 1,500 captures or 6 s)", async () => {
    const store = memoryStore({ sweepInterval: 0 });
    const artifacts = new Artifacts({ store });
    const target = join(base, "work", "out.txt");
    const child = spawn(process.execPath, ["-e", SWAPPER, target, join(base, "outside", "secret.txt"), "8"], {
      stdio: "ignore",
    });
    children.push(child);
    const seen = { INSIDE: 0, SECRET: 0, refused: 0, other: 0 };
    const until = Date.now() + 6000;
    for (let i = 0; i < 1500 && Date.now() < until; i++) {
      try {
        const captured = await artifacts.capture({ scope: "race", path: target });
        const [bytes] = await storedBytes(store, "race");
        await store.delete("race", captured.file.id);
        if (bytes === SECRET) seen.SECRET++;
        else if (bytes === "INSIDE") seen.INSIDE++;
        else seen.other++;
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code === "PATH_NOT_ALLOWED" || code === "INVALID_INPUT") seen.refused++;
        else throw error;
      }
    }
    child.kill("SIGKILL");
    await rename(target, `${target}.done`).catch(() => undefined);
    expect(seen.SECRET).toBe(0);
    expect(seen.INSIDE).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0); // the swapper really raced
    await store.close?.();
  }, 20_000);
});
