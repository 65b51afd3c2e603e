import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import type { FileSourceResolver } from "../../src/bridge/types.js";
import { processSpaceId } from "../../src/internal/process-space.js";
import { codeOf } from "../support/helpers.js";
import { base, bridge, root, scope, tempEntries, tmp, useBridgeSandbox } from "./bridge-sandbox.js";

useBridgeSandbox();

describe("other strings and values", () => {
  it.each(["ftp://example.com/x.pdf", "s3://bucket/key", "gopher://x"])(
    "refuses %s with UNSUPPORTED_INPUT naming the forms",
    async (input) => {
      try {
        await bridge().resolve(input, { scope });
        expect.unreachable();
      } catch (error) {
        expect((error as { code?: string }).code).toBe("UNSUPPORTED_INPUT");
        expect((error as { data?: { forms?: string[] } }).data?.forms).toContain("data: URL");
      }
    },
  );

  it("refuses http:// with FORM_DISABLED and https:// without allowHosts with FORM_DISABLED", async () => {
    expect(await codeOf(bridge().resolve("http://example.com/a.pdf", { scope }))).toBe("FORM_DISABLED");
    expect(await codeOf(bridge().resolve("https://example.com/a.pdf", { scope }))).toBe("FORM_DISABLED");
  });

  it("refuses lists, numbers, null and empty strings with INVALID_INPUT", async () => {
    const b = bridge();
    for (const input of [["data:,a"], 42, null, undefined, ""]) {
      expect(await codeOf(b.resolve(input, { scope }))).toBe("INVALID_INPUT");
    }
  });

  it("decodes bare base64 only when enabled, strictly", async () => {
    // Off, content that is surely base64 gets the form to send instead, not "no file at that path".
    const off = bridge();
    const refusal = await off.resolve("aGVsbG8gd29ybGQ=", { scope }).catch((error: unknown) => error);
    expect(refusal).toMatchObject({ code: "FORM_DISABLED", data: { form: "bare base64" } });
    expect((refusal as Error).message).toContain('"data:<media type>;name=<file name>;base64,');
    const noPaths = new FileBridge({ tmpDir: tmp });
    expect(await codeOf(noPaths.resolve("aGVsbG8gd29ybGQ=", { scope }))).toBe("FORM_DISABLED");
    // A name is not mistaken for base64: a missing file is still NOT_FOUND.
    expect(await codeOf(off.resolve("docs/missing-report.pdf", { scope }))).toBe("NOT_FOUND");
    const on = new FileBridge({ tmpDir: tmp, forms: { base64: true } });
    const file = await on.resolve("aGVsbG8gd29ybGQ=", { scope, name: "hello.txt" });
    expect([file.name, (await file.bytes()).toString(), file.source.kind]).toEqual([
      "hello.txt",
      "hello world",
      "base64",
    ]);
    await file.dispose();
    expect(await codeOf(on.resolve("aGVsbG8gd29ybGR=", { scope }))).toBe("INVALID_BASE64");
    expect(await codeOf(on.resolve("aGVsbG8gd29ybGQ==", { scope }))).toBe("INVALID_BASE64");
    expect(await codeOf(on.resolve("not base64 at all!", { scope }))).toBe("INVALID_BASE64");
    // With paths on too, an existing file wins and a missing one falls through to base64.
    const both = bridge({ forms: { base64: true } });
    const asPath = await both.resolve("docs/report.pdf", { scope });
    expect(asPath.source.kind).toBe("path");
    const asBase64 = await both.resolve("aGVsbG8gd29ybGQ=", { scope });
    expect(asBase64.source.kind).toBe("base64");
    await Promise.all([asPath.dispose(), asBase64.dispose()]);
  });

  it("refuses an already aborted call with ABORTED and leaves nothing", async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await codeOf(bridge().resolve("data:,x", { scope, signal: controller.signal }))).toBe("ABORTED");
    expect(await tempEntries()).toEqual([]);
  });
});

describe("resolveAll", () => {
  it("refuses more than maxFiles inputs with TOO_MANY_FILES before reading any", async () => {
    const b = bridge({ maxFiles: 3 });
    const four = ["data:,1", "data:,2", "data:,3", "data:,4"];
    expect(await codeOf(b.resolveAll(four, { scope }))).toBe("TOO_MANY_FILES");
    expect(await tempEntries()).toEqual([]);
    const three = await b.resolveAll(four.slice(0, 3), { scope });
    expect(three).toHaveLength(3);
    await Promise.all(three.map((f) => f.dispose()));
    expect(
      await codeOf(
        bridge().resolveAll(
          Array.from({ length: 33 }, () => "data:,x"),
          { scope },
        ),
      ),
    ).toBe("TOO_MANY_FILES");
    for (const maxFiles of [0, -1, 1.5, "3"]) {
      expect(() => bridge({ maxFiles: maxFiles as number })).toThrowError(
        expect.objectContaining({ code: "INVALID_OPTION" }),
      );
    }
  });

  it("resolves a mixed list in order", async () => {
    const files = await bridge({ concurrency: 2 }).resolveAll(
      ["docs/report.pdf", "data:text/plain;name=a.txt,A", { name: "b.txt", content: "Qg==" }, "data:,C"],
      { scope },
    );
    expect(await Promise.all(files.map(async (f) => (await f.bytes()).toString()))).toEqual([
      "%PDF-1.7 fake pdf body",
      "A",
      "B",
      "C",
    ]);
    await Promise.all(files.map((f) => f.dispose()));
    expect(await tempEntries()).toEqual([]);
  });

  it("is all-or-nothing: one failure disposes the others and throws its code", async () => {
    const b = bridge({ concurrency: 1 });
    const inputs = ["data:,one", "data:,two", "../secret.txt", "data:,four"];
    expect(await codeOf(b.resolveAll(inputs, { scope }))).toBe("PATH_NOT_ALLOWED");
    expect(await tempEntries()).toEqual([]);
    expect(await codeOf(b.resolveAll("data:,x" as never, { scope }))).toBe("INVALID_INPUT");
  });
});

describe("sweep", () => {
  it("removes folders of dead processes and old folders, keeps live ones", async () => {
    let now = Date.now();
    const b = bridge({ now: () => now });
    const live = await b.resolve("data:,keep", { scope });
    // pid 2^22 + 1 is above Linux's pid_max: that process cannot be alive.
    const crashed = `call-4194305.${processSpaceId()}-deadbeef`;
    await mkdir(join(tmp, crashed));
    await writeFile(join(tmp, crashed, "x.bin"), "left by a crash");
    expect(await b.sweep()).toBe(1);
    now += 3 * 3_600_000;
    expect(await b.sweep({ olderThan: "1h" })).toBe(0); // the live file's folder is in use
    expect((await live.bytes()).toString()).toBe("keep");
    await live.dispose();
    expect(await tempEntries()).toEqual([]);
  });
});

describe("audit: media types", () => {
  const magic: Array<[string, number[], string, string]> = [
    ["PDF", [0x25, 0x50, 0x44, 0x46, 0x2d, 0x31, 0x2e, 0x37], "application/pdf", "file.pdf"],
    ["PNG", [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0], "image/png", "file.png"],
    ["JPEG", [0xff, 0xd8, 0xff, 0xe0, 0, 0x10], "image/jpeg", "file.jpg"],
    ["GIF", [0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 1, 0], "image/gif", "file.gif"],
    ["ZIP / DOCX", [0x50, 0x4b, 0x03, 0x04, 0x14, 0], "application/zip", "file.zip"],
    ["GZIP", [0x1f, 0x8b, 0x08, 0, 0, 0], "application/gzip", "file.gz"],
    ["unknown bytes", [0x00, 0x01, 0x02, 0x03], "application/octet-stream", "file"],
  ];

  it.each(magic)("sniffs %s when neither a type nor a name is given", async (_label, bytes, type, name) => {
    const file = await bridge().resolve(`data:;base64,${Buffer.from(bytes).toString("base64")}`, { scope });
    expect([file.mimeType, file.name]).toEqual([type, name]);
    expect((await file.bytes()).equals(Buffer.from(bytes))).toBe(true);
    await file.dispose();
  });

  it("prefers a valid declared type, then the name, then the bytes", async () => {
    const pdf = Buffer.from("%PDF-1.7 body").toString("base64");
    const b = bridge();
    const cases: Array<[unknown, string]> = [
      [`data:image/png;name=a.txt;base64,${pdf}`, "image/png"], // declared wins over name and bytes
      [`data:;name=a.txt;base64,${pdf}`, "text/plain"], // name wins over bytes
      [{ name: "a.csv", content: pdf, mimeType: "not a type" }, "text/csv"], // invalid declared: name
      [{ name: "noext", content: pdf, mimeType: "application/octet-stream" }, "application/pdf"],
    ];
    for (const [input, type] of cases) {
      const file = await b.resolve(input, { scope });
      expect(file.mimeType).toBe(type);
      await file.dispose();
    }
  });

  it("sniffs local files without a known extension", async () => {
    await writeFile(join(root, "scan"), Buffer.from([0xff, 0xd8, 0xff, 0xdb, 1, 2]));
    const file = await bridge().resolve("scan", { scope });
    expect(file.mimeType).toBe("image/jpeg");
    await file.dispose();
  });
});

describe("audit: bare base64 next to paths", () => {
  it("decodes base64 that looks like an absolute path outside the roots (JPEG is /9j/…)", async () => {
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1]);
    const b = bridge({ forms: { base64: true } });
    const file = await b.resolve(jpeg.toString("base64"), { scope });
    expect(jpeg.toString("base64").startsWith("/9j/")).toBe(true);
    expect([file.source.kind, file.mimeType]).toEqual(["base64", "image/jpeg"]);
    expect((await file.bytes()).equals(jpeg)).toBe(true);
    await file.dispose();
  });

  it("keeps PATH_NOT_ALLOWED for an outside path that is not valid base64", async () => {
    const b = bridge({ forms: { base64: true } });
    expect(await codeOf(b.resolve("/etc/passwd", { scope }))).toBe("PATH_NOT_ALLOWED");
    expect(await codeOf(b.resolve(join(base, "secret.txt"), { scope }))).toBe("PATH_NOT_ALLOWED");
    // Without the base64 form the absolute path is refused as before.
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]).toString("base64");
    expect(await codeOf(bridge().resolve(jpeg, { scope }))).toBe("PATH_NOT_ALLOWED");
    expect(await tempEntries()).toEqual([]);
  });
});

describe("audit: resolveAll concurrency and disposal", () => {
  it("never runs more than `concurrency` resolutions at once", async () => {
    let inFlight = 0;
    let most = 0;
    const slow: FileSourceResolver = {
      name: "slow",
      matches: (input) => input.startsWith("slow:"),
      resolve: async (input) => {
        inFlight++;
        most = Math.max(most, inFlight);
        for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
        return {
          name: "s.txt",
          open: async () => {
            inFlight--;
            return Readable.from([Buffer.from(input)]);
          },
        };
      },
    };
    const files = await bridge({ resolvers: [slow], concurrency: 3 }).resolveAll(
      Array.from({ length: 10 }, (_, i) => `slow:${i}`),
      { scope },
    );
    expect(most).toBe(3);
    expect(await Promise.all(files.map(async (f) => (await f.bytes()).toString()))).toEqual(
      Array.from({ length: 10 }, (_, i) => `slow:${i}`),
    );
    await Promise.all(files.map((f) => f.dispose()));
    expect(await tempEntries()).toEqual([]);
  });

  it("Symbol.asyncDispose removes the temp folder like dispose()", async () => {
    const file = await bridge().resolve("data:text/plain;name=a.txt,hello", { scope });
    expect(await tempEntries()).toHaveLength(1);
    await file[Symbol.asyncDispose]();
    expect(await tempEntries()).toEqual([]);
    {
      await using scoped = await bridge().resolve("data:,bye", { scope });
      expect((await readFile(scoped.path)).toString()).toBe("bye");
    }
    expect(await tempEntries()).toEqual([]);
  });
});

describe("audit: temp folders", () => {
  it("one bridge's sweep keeps a folder another bridge is still using", async () => {
    const user = bridge();
    const sweeper = bridge();
    const file = await user.resolve("data:,in use", { scope });
    const old = new Date(Date.now() - 5 * 3_600_000);
    await utimes(dirname(file.path), old, old);
    expect(await sweeper.sweep({ olderThan: "1h" })).toBe(0);
    expect((await readFile(file.path)).toString()).toBe("in use");
    await file.dispose();
  });

  it("refuses a temp dir anyone can write to (no sticky bit) with STORAGE_ERROR", async () => {
    await mkdir(tmp, { recursive: true });
    await chmod(tmp, 0o777);
    expect(await codeOf(bridge().resolve("data:,x", { scope }))).toBe("STORAGE_ERROR");
    expect(await tempEntries()).toEqual([]);
  });
});

describe("start-up sweep", () => {
  it("removes folders left by a crashed process once, in the background; sweepOnStart: false keeps them", async () => {
    const folder = await mkdtemp(join(tmpdir(), "startup-sweep-"));
    try {
      const off = join(folder, "off");
      const on = join(folder, "on");
      for (const dir of [off, on]) {
        await mkdir(dir, { mode: 0o700 });
        await chmod(dir, 0o700);
        // pid 2^22 + 1 is above Linux's pid_max: that process cannot be alive.
        await mkdir(join(dir, `call-4194305.${processSpaceId()}-AbCdEf`));
        await mkdir(join(dir, `call-${process.pid}.${processSpaceId()}-Live01`));
      }
      const kept = new FileBridge({ tmpDir: off, sweepOnStart: false });
      expect(await kept.startupSweep).toBe(0);
      expect((await readdir(off)).sort()).toEqual(
        [`call-4194305.${processSpaceId()}-AbCdEf`, `call-${process.pid}.${processSpaceId()}-Live01`].sort(),
      );
      const swept = new FileBridge({ tmpDir: on });
      expect(await swept.startupSweep).toBe(1);
      expect(await readdir(on)).toEqual([`call-${process.pid}.${processSpaceId()}-Live01`]);
      expect(await new FileBridge({ tmpDir: on }).startupSweep).toBe(0); // once per folder and process
      expect(() => new FileBridge({ sweepOnStart: "yes" as never })).toThrow(/sweepOnStart/);
    } finally {
      await rm(folder, { recursive: true, force: true, maxRetries: 3 });
    }
  });

  it("sweeps after the constructor has returned, without anyone reading startupSweep", async () => {
    const folder = await mkdtemp(join(tmpdir(), "startup-sweep-"));
    try {
      await chmod(folder, 0o700);
      const dead = `call-4194305.${processSpaceId()}-AbCdEf`;
      await mkdir(join(folder, dead));
      const bridge = new FileBridge({ tmpDir: folder });
      expect(readdirSync(folder)).toEqual([dead]);
      await vi.waitFor(() => expect(readdirSync(folder)).toEqual([]), { timeout: 5000, interval: 20 });
      expect(await bridge.startupSweep).toBe(1);
    } finally {
      await rm(folder, { recursive: true, force: true, maxRetries: 3 });
    }
  });

  /**
   * Runs a Node process (sources through tsx) that makes a bridge on `folder` (with `options`, a
   * source text) and then runs `after`; resolves on its exit.
   */
  function bridgeProcess(folder: string, keepRunning: boolean, options = "", after = "") {
    const source = resolve("src/bridge/file-bridge.ts");
    const script = `import { FileBridge } from ${JSON.stringify(source)};
const bridge = new FileBridge({ tmpDir: ${JSON.stringify(folder)}, ${options} });
console.log("made");
${after}
${keepRunning ? "process.stdin.resume(); // a stdio server: reads until its client goes" : ""}`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk) => {
      out += String(chunk);
    });
    child.stderr.on("data", (chunk) => {
      err += String(chunk);
    });
    const made = new Promise<void>((done) => child.stdout.once("data", () => done()));
    const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
    return { child, made, exited, output: () => ({ out, err }) };
  }

  async function deadFolder(): Promise<{ folder: string; dead: string }> {
    const folder = await mkdtemp(join(tmpdir(), "startup-sweep-"));
    await chmod(folder, 0o700);
    const dead = `call-4194305.${processSpaceId()}-AbCdEf`;
    await mkdir(join(folder, dead));
    return { folder, dead };
  }

  it("a process that ends right after making the bridge exits without sweeping", async () => {
    const { folder, dead } = await deadFolder();
    try {
      const { exited } = bridgeProcess(folder, false);
      expect(await exited).toBe(0);
      expect(readdirSync(folder)).toEqual([dead]);
    } finally {
      await rm(folder, { recursive: true, force: true, maxRetries: 3 });
    }
  });

  it("a clock (`now`) that throws does not crash the process from the sweep's timer; startupSweep resolves 0", async () => {
    const { folder, dead } = await deadFolder();
    // The sweep's timer fires after about a second; the process reports at 2.5 s, then ends.
    const { child, exited, output } = bridgeProcess(
      folder,
      false,
      `now: () => { throw new Error("the clock is broken"); }`,
      `setTimeout(async () => { console.log("swept", await bridge.startupSweep); await bridge.close(); console.log("closed"); }, 2500);`,
    );
    try {
      expect(await exited, output().err).toBe(0);
      expect(output().out).toContain("swept 0");
      expect(output().out).toContain("closed");
      expect(readdirSync(folder)).toEqual([dead]); // nothing removed on a clock that cannot be read
    } finally {
      child.kill();
      await rm(folder, { recursive: true, force: true, maxRetries: 3 });
    }
  });

  it("reading startupSweep or closing with a clock that throws neither throws nor rejects", async () => {
    const { folder } = await deadFolder();
    try {
      const broken = new FileBridge({
        tmpDir: folder,
        now: () => {
          throw new Error("the clock is broken");
        },
      });
      expect(await broken.startupSweep).toBe(0);
      await expect(broken.close()).resolves.toBeUndefined();
    } finally {
      await rm(folder, { recursive: true, force: true, maxRetries: 3 });
    }
  });

  it("a process that keeps running (a stdio server) sweeps without anyone reading startupSweep", async () => {
    const { folder } = await deadFolder();
    const { child, made, exited } = bridgeProcess(folder, true);
    try {
      await made;
      await vi.waitFor(() => expect(readdirSync(folder)).toEqual([]), { timeout: 10_000, interval: 20 });
      child.stdin.end();
      expect(await exited).toBe(0);
    } finally {
      child.kill();
      await rm(folder, { recursive: true, force: true, maxRetries: 3 });
    }
  });
});

describe("the default temp folder", () => {
  it.skipIf(process.getuid === undefined)(
    "making a bridge, a file input and a wrapped handler touches no file: the folder is worked out on first use",
    async () => {
      const parent = await mkdtemp(join(tmpdir(), "mfb-lazy-tmp-"));
      const saved = process.env.TMPDIR;
      try {
        process.env.TMPDIR = parent;
        // The per-user name is taken by something that is not this user's folder: the bridge makes
        // a private folder of its own instead, and that is what shows when it was worked out.
        const taken = `mcp-file-bridge-${process.getuid?.()}`;
        await writeFile(join(parent, taken), "not a folder");
        const lazy = new FileBridge();
        lazy.fileInput();
        lazy.withFiles(async () => ({ content: [] }), { fields: ["file"] });
        expect(await readdir(parent)).toEqual([taken]);
        const file = await lazy.resolve("data:text/plain;name=a.txt;base64,aGk=", { scope: "s1" });
        try {
          const made = (await readdir(parent)).filter((name) => name !== taken);
          expect(made).toHaveLength(1);
          expect(made[0]?.startsWith(`${taken}-`)).toBe(true);
          expect(lazy.tmpDir).toBe(join(parent, made[0] as string));
          expect(dirname(dirname(file.path))).toBe(lazy.tmpDir);
          expect(await readFile(file.path, "utf8")).toBe("hi");
        } finally {
          await file.dispose();
          await lazy.close();
        }
      } finally {
        if (saved === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = saved;
        await rm(parent, { recursive: true, force: true, maxRetries: 3 });
      }
    },
  );
});
