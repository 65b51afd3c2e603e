import { mkdtemp, readFile, realpath, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import type { FileSourceResolver, ResolvedFile } from "../../src/bridge/types.js";
import type { WithFilesOptions } from "../../src/bridge/with-files.js";
import { tempLeftovers } from "../support/temp-leftovers.js";

let base: string;
let tmp: string;
let scopesSeen: string[];

/** Resolves `mem:<text>` to a file holding `<text>`, recording the caller's scope. */
const memory: FileSourceResolver = {
  name: "memory",
  matches: (input) => input.startsWith("mem:"),
  resolve: async (input, context) => {
    scopesSeen.push(context.scope);
    return { name: "m.txt", open: async () => Readable.from([Buffer.from(input.slice(4))]) };
  },
};

function bridge(): FileBridge {
  return new FileBridge({ tmpDir: tmp, resolvers: [memory] });
}

async function tempEntries(): Promise<string[]> {
  return tempLeftovers(tmp);
}

function codeIn(result: unknown): string | undefined {
  const text = (result as { content?: Array<{ text?: string }> }).content?.[0]?.text ?? "";
  return /^Error ([A-Z_]+):/.exec(text)?.[1];
}

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "fb-with-files-")));
  tmp = join(base, "tmp");
  scopesSeen = [];
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true, maxRetries: 3 });
});

describe("withFiles options", () => {
  it.each<[string, unknown]>([
    ["no options", undefined],
    ["no fields", {}],
    ["empty fields", { fields: [] }],
    ["an empty field path", { fields: [""] }],
    ["an empty segment", { fields: ["input..doc"] }],
    ["a reserved name", { fields: ["__proto__.x"] }],
    ["a bad pass", { fields: ["file"], pass: "bytes" }],
    ["a scope that is no function", { fields: ["file"], scope: "s" }],
    ["a bad maxBytes", { fields: ["file"], maxBytes: 0 }],
  ])("refuses %s with INVALID_OPTION when wrapping", (_label, options) => {
    expect(() =>
      bridge().withFiles(async () => ({ content: [] }), options as WithFilesOptions & { fields: string[] }),
    ).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
  });

  it("refuses a handler that is not a function", () => {
    expect(() => bridge().withFiles(42 as never, { fields: ["file"] })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION" }),
    );
  });
});

describe("withFiles at run time", () => {
  it("replaces nested and listed fields by paths, copies the arguments and leaves the rest alone", async () => {
    const args = {
      file: "mem:one",
      jobs: [{ attachment: "mem:two", note: "keep" }, { attachment: null }, {}],
      missing: undefined,
      other: "mem:not a file field",
    };
    const original = structuredClone(args);
    let seen: Record<string, unknown> | undefined;
    const contents: string[] = [];
    const wrapped = bridge().withFiles(
      async (a: typeof args) => {
        seen = a as unknown as Record<string, unknown>;
        contents.push(await readFile(a.file as string, "utf8"));
        contents.push(await readFile(a.jobs[0]?.attachment as string, "utf8"));
        return { content: [{ type: "text" as const, text: "ok" }] };
      },
      { fields: ["file", "jobs[].attachment", "optional", "absent[]"] },
    );
    const result = await wrapped(args, {});
    expect(codeIn(result)).toBeUndefined();
    expect(contents).toEqual(["one", "two"]);
    expect(args).toEqual(original); // the caller's object is never changed
    expect(seen?.other).toBe("mem:not a file field");
    const jobs = (seen?.jobs ?? []) as Array<Record<string, unknown>>;
    expect(jobs[0]?.note).toBe("keep");
    expect(jobs[1]?.attachment).toBeNull();
    expect(await tempEntries()).toEqual([]);
  });

  it("calls the handler when every file field is missing (optional files stay optional)", async () => {
    let calls = 0;
    const wrapped = bridge().withFiles(
      async () => {
        calls++;
        return { content: [] };
      },
      { fields: ["file", "files[]"] },
    );
    await wrapped({ note: "no files" }, {});
    await wrapped({ file: null, files: [] }, {});
    expect(calls).toBe(2);
  });

  it("derives the scope from extra: the authenticated user, else the session id, or the author's function", async () => {
    let calls = 0;
    const handler = async () => {
      calls++;
      return { content: [] };
    };
    const wrap = () => bridge().withFiles(handler, { fields: ["file"] });
    await wrap()({ file: "mem:x" }, { sessionId: "sess-9" });
    await wrap()(
      { file: "mem:x" },
      { sessionId: "sess-9", authInfo: { clientId: "app", extra: { sub: "user-3" } } },
    );
    await wrap()({ file: "mem:x" }, {});
    await bridge().withFiles(handler, {
      fields: ["file"],
      scope: (extra) => `chat:${(extra as { sessionId?: string }).sessionId}`,
    })({ file: "mem:x" }, { sessionId: "7" });
    expect(scopesSeen).toEqual(["sess-9", "user-3", "default", "chat:7"]);
    expect(calls).toBe(4);
  });

  it("fails closed: an HTTP or authenticated request with no user and no session is refused (FORBIDDEN)", async () => {
    let calls = 0;
    const handler = async () => {
      calls++;
      return { content: [] };
    };
    const wrap = () => bridge().withFiles(handler, { fields: ["file"] });
    // The OAuth client id names the application shared by all its users: never a scope.
    const appOnly = await wrap()({ file: "mem:x" }, { authInfo: { clientId: "client-3" } });
    const stateless = await wrap()({ file: "mem:x" }, { requestInfo: { headers: {} } });
    // A handle next to inline content still needs an identity.
    const mixed = await wrap()({ file: "mem:x", more: "data:,y" }, { requestInfo: { headers: {} } });
    for (const result of [appOnly, stateless, mixed]) {
      expect(result).toMatchObject({ isError: true });
      // The text speaks to the model or person; the advice to the author goes to the log.
      expect(JSON.stringify(result)).toMatch(
        /Error FORBIDDEN: files on this server belong to a signed-in user/,
      );
      expect(JSON.stringify(result)).not.toMatch(/sessionIdGenerator|authInfo/);
    }
    expect(calls).toBe(0);
    expect(scopesSeen).toEqual([]);
  });

  it("takes inline files (data: URL, object, JSON-encoded object) from a caller with no scope: nothing is stored", async () => {
    const seen: string[] = [];
    const wrapped = bridge().withFiles(
      async ({ files }: { files: string[] }) => {
        for (const path of files) seen.push(await readFile(path, "utf8"));
        return { content: [] };
      },
      { fields: ["files[]"] },
    );
    const files = [
      "data:,one",
      { name: "two.txt", content: Buffer.from("two").toString("base64") },
      JSON.stringify({ filename: "three.txt", content: "three", encoding: "utf8" }),
    ];
    const result = await wrapped({ files: files as unknown as string[] }, { requestInfo: { headers: {} } });
    expect(result).toEqual({ content: [] });
    expect(seen).toEqual(["one", "two", "three"]);
    expect(await tempEntries()).toEqual([]);
  });

  it("passes ResolvedFiles with pass: 'file', removed after the handler", async () => {
    let kept: ResolvedFile[] = [];
    const wrapped = bridge().withFiles(
      async (args: { files: unknown[] }) => {
        kept = args.files as ResolvedFile[];
        for (const file of kept) expect((await stat(file.path)).isFile()).toBe(true);
        return { content: [{ type: "text" as const, text: kept.map((f) => f.size).join(",") }] };
      },
      { fields: ["files[]"], pass: "file" },
    );
    const result = await wrapped({ files: ["mem:ab", "data:,cde"] }, {});
    expect((result as { content: Array<{ text: string }> }).content[0]?.text).toBe("2,3");
    expect(kept.map((f) => f.name)).toEqual(["m.txt", "file"]);
    for (const file of kept) await expect(stat(file.path)).rejects.toMatchObject({ code: "ENOENT" });
    expect(await tempEntries()).toEqual([]);
  });

  it("rethrows what the handler throws, after removing its files", async () => {
    let path = "";
    const wrapped = bridge().withFiles(
      async (args: { file: string }) => {
        path = args.file;
        throw new Error("tool failed");
      },
      { fields: ["file"] },
    );
    await expect(wrapped({ file: "data:,x" }, {})).rejects.toThrow("tool failed");
    expect(path.startsWith(tmp)).toBe(true);
    expect(await tempEntries()).toEqual([]);
  });

  it.each<[string, Record<string, unknown>, Record<string, unknown>, string]>([
    ["a per-tool cap", { file: "data:,toolarge" }, {}, "FILE_TOO_LARGE"],
    ["a list field that is not a list", { files: "mem:x" }, {}, "INVALID_INPUT"],
    ["a nested field under a non-object", { input: "text" }, {}, "INVALID_INPUT"],
    ["an aborted request", { file: "data:,x" }, { signal: AbortSignal.abort() }, "ABORTED"],
    ["one bad file among good ones", { files: ["mem:fine", "ftp://x/y"] }, {}, "UNSUPPORTED_INPUT"],
  ])("returns an isError result for %s without calling the handler", async (_label, args, extra, code) => {
    let calls = 0;
    const wrapped = bridge().withFiles(
      async () => {
        calls++;
        return { content: [] };
      },
      { fields: ["file", "files[]", "input.document"], maxBytes: 4 },
    );
    const result = await wrapped(args, extra);
    expect((result as { isError?: boolean }).isError).toBe(true);
    expect(codeIn(result)).toBe(code);
    expect(calls).toBe(0);
    expect(await tempEntries()).toEqual([]);
  });
});

describe("withFiles and maxFiles", () => {
  it("answers a list over maxFiles with an isError TOO_MANY_FILES result and does not call the handler", async () => {
    let called = false;
    const limited = new FileBridge({ tmpDir: tmp, maxFiles: 2 });
    const handler = limited.withFiles(
      async () => {
        called = true;
        return { content: [] };
      },
      { fields: ["files[]", "extra"] },
    );
    // The limit counts every file of the call, across fields.
    const result = await handler({ files: ["data:,a", "data:,b"], extra: "data:,c" }, {});
    expect(called).toBe(false);
    expect(codeIn(result)).toBe("TOO_MANY_FILES");
    expect(await tempEntries()).toEqual([]);
  });
});
