/**
 * `Artifacts` loads what a call does (reading, storing, signing, fitting, shaping) on its first
 * `capture`, `fit`, `image` or wrapped call (issue 39, artifacts-work.ts): option and argument errors
 * come before the load (the constructor's and `withArtifacts`' synchronously), two first calls share
 * one load, and a load that fails is the call's error while the next call loads again.
 */
import { describe, expect, it, vi } from "vitest";
import { countLoads } from "../support/first-use.js";
import { codeOf, codeOfSync } from "../support/helpers.js";

/** A fresh `Artifacts` module whose work module's loads are counted; the first fails when `failFirst`. */
async function loadArtifacts(failFirst: Error | undefined) {
  const { loads } = countLoads("src/artifacts/artifacts-work.js", { failFirst: failFirst ?? false });
  const { Artifacts } = await import("../../src/artifacts/artifacts.js");
  const { memoryStore } = await import("../../src/storage/memory-store.js");
  const { FileBridgeError } = await import("../../src/errors/file-bridge-error.js");
  const store = memoryStore();
  const artifacts = new Artifacts({ store, scope: () => "s1", images: false });
  return { Artifacts, FileBridgeError, artifacts, store, loads };
}

describe("Artifacts' work, loaded on first use", () => {
  it("two first calls at once share one load; each stores its artifact", async () => {
    const { artifacts, store, loads } = await loadArtifacts(undefined);
    const [a, b] = await Promise.all([
      artifacts.capture({ scope: "s1", bytes: new Uint8Array([1, 2, 3]), name: "a.bin" }),
      artifacts.fit(
        { content: [{ type: "text", text: "x".repeat(200_000) }] },
        { scope: "s1", name: "long.txt" },
      ),
    ]);
    expect(loads.attempts).toBe(1);
    expect(a.file.name).toBe("a.bin");
    expect(a.uri).toMatch(/^artifact:\/\/sessions\//);
    const stored = (await store.list("s1"))?.files.map((file) => file.name).sort();
    expect(stored).toEqual(["a.bin", "long.txt"]);
    expect(JSON.stringify(b.content)).toContain("long.txt");
  });

  it("checks options and arguments before the load; a failed load fails the call, and the next call loads again", async () => {
    const failure = Object.assign(new Error("work could not load"), { code: "ERR_MODULE_NOT_FOUND" });
    const { Artifacts, FileBridgeError, artifacts, store, loads } = await loadArtifacts(failure);
    // Synchronous, as before the split.
    expect(codeOfSync(() => new Artifacts({ store, ttl: "forever" as never }))).toBe("INVALID_OPTION");
    expect(codeOfSync(() => new Artifacts({ store, maxBytes: 0 }))).toBe("INVALID_OPTION");
    expect(
      codeOfSync(() => artifacts.withArtifacts(async () => ({ content: [] }), { outputPathArg: "" })),
    ).toBe("INVALID_OPTION");
    // Refused before anything loads: the same codes as before the split.
    const scope = "s1";
    const refused = [
      artifacts.capture(null as never),
      artifacts.capture({ scope: "", bytes: new Uint8Array(1) }),
      artifacts.capture({ scope, bytes: new Uint8Array(1), path: "/tmp/x" }),
      artifacts.capture({ scope, path: "" }),
      artifacts.capture({ scope, path: "/tmp/x", root: "" }),
      artifacts.capture({ scope, bytes: "abc" as never }),
      artifacts.capture({ scope, resource: { uri: 1 } as never }),
      artifacts.capture({ scope, resource: { uri: "mem://a", text: "a", blob: "YQ==" } }),
      artifacts.fit({ content: [] }, null as never),
      artifacts.fit({ content: [] }, { scope: "" }),
      artifacts.image({ scope, path: "" }),
    ];
    expect(await Promise.all(refused.map((call) => codeOf(call)))).toEqual(Array(11).fill("INVALID_INPUT"));
    // A wrapped call without a scope is refused as a tool error; the handler does not run.
    const unscoped = new Artifacts({
      store,
      scope: () => {
        throw new FileBridgeError("FORBIDDEN", "no scope");
      },
    });
    const handler = vi.fn(async () => ({ content: [] }));
    const wrapped = unscoped.withArtifacts(handler, { outputPathArg: "out" });
    expect(await wrapped({}, {})).toMatchObject({ isError: true });
    expect(handler).not.toHaveBeenCalled();
    expect(loads.attempts).toBe(0);

    const error = await artifacts.capture({ scope, bytes: new Uint8Array([1]), name: "a.bin" }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(loads.attempts).toBe(1);
    // Under vitest a mocked module's failure arrives wrapped, with the load's error as its cause.
    expect(error === failure || (error as Error | undefined)?.cause === failure).toBe(true);
    expect(await store.list("s1")).toMatchObject({ files: [] });
    const captured = await artifacts.capture({ scope, bytes: new Uint8Array([1]), name: "a.bin" });
    expect(captured.file.name).toBe("a.bin");
    expect(loads.attempts).toBe(2);
  });
});
