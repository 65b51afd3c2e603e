import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { callFoldersRefilled } from "../../src/bridge/call-folders.js";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { toToolErrorResult } from "../../src/errors/file-bridge-error.js";
import { defaultScope } from "../../src/scope/scope.js";
import { fsStore } from "../../src/storage/fs-store.js";
import { connect, errorCode, type Harness } from "../registry/support.js";

let dir: string;
let harness: Harness | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "registry-bridge-"));
});

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await callFoldersRefilled(join(dir, "tmp")); // no pool refill racing the removal
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

describe("registry URIs as tool arguments through FileBridge", () => {
  it("resolves a registry URI to the stored file, scope-checked, and cleans up", async () => {
    const bridge = new FileBridge({ tmpDir: join(dir, "tmp") });
    const seenPaths: string[] = [];
    harness = await connect({}, (server, registry) => {
      bridge.addResolver(registry.resolver());
      server.registerTool(
        "convert",
        { description: "Reads a file argument", inputSchema: { file: z.string() } },
        async ({ file }, extra) => {
          try {
            const resolved = await bridge.resolve(file, { scope: defaultScope(extra) });
            try {
              seenPaths.push(resolved.path);
              const bytes = await readFile(resolved.path);
              return {
                content: [{ type: "text", text: `${resolved.name} ${bytes.length}` }],
                structuredContent: { sha256: createHash("sha256").update(bytes).digest("hex") },
              };
            } finally {
              await resolved.dispose();
            }
          } catch (error) {
            return toToolErrorResult(error);
          }
        },
      );
    });
    const { registry, client } = harness;
    const mine = await registry.add(new TextEncoder().encode("quarterly numbers"), {
      scope: "default",
      name: "reports/q3 report.docx",
      kind: "upload",
    });
    const theirs = await registry.add(new TextEncoder().encode("secret"), {
      scope: "someone-else",
      name: "secret.txt",
      kind: "artifact",
    });

    const result = await client.callTool({ name: "convert", arguments: { file: registry.uriFor(mine) } });
    expect(result.isError).toBeFalsy();
    expect((result.content as Array<{ text: string }>)[0]?.text).toBe("q3 report.docx 17");
    expect(result.structuredContent).toEqual({ sha256: mine.sha256 });
    expect(seenPaths).toHaveLength(1);
    expect(existsSync(seenPaths[0] as string)).toBe(false);

    const denied = await client.callTool({ name: "convert", arguments: { file: registry.uriFor(theirs) } });
    expect(denied.isError).toBe(true);
    await expect(bridge.resolve(registry.uriFor(theirs), { scope: "default" })).rejects.toSatisfy(
      (error) => errorCode(error) === "NOT_FOUND",
    );
    const own = await bridge.resolve(registry.uriFor(theirs), { scope: "someone-else" });
    expect((await own.bytes()).toString()).toBe("secret");
    await own.dispose();
  });

  it("works on an fsStore, reading through its local path", async () => {
    const store = fsStore(join(dir, "store"));
    const bridge = new FileBridge({ tmpDir: join(dir, "tmp") });
    harness = await connect({ store });
    bridge.addResolver(harness.registry.resolver());
    const file = await harness.registry.add(Buffer.from([1, 2, 3, 4]), { scope: "s", name: "a.bin" });
    const resolved = await bridge.resolve(harness.registry.uriFor(file), { scope: "s" });
    expect([...(await resolved.bytes())]).toEqual([1, 2, 3, 4]);
    await resolved.dispose();
  });
});
