/**
 * `FileBridge` loads its input forms on the first resolve (issue 39): a load that fails is the
 * resolve's error, and nothing is left behind.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { countLoads } from "../support/first-use.js";

describe("FileBridge's input forms, loaded on first use", () => {
  it("a failed load of the forms fails the resolve with that error, and the next resolve loads them", async () => {
    const tmp = await mkdtemp(join(tmpdir(), "mfb-first-use-"));
    try {
      const failure = Object.assign(new Error("forms could not load"), { code: "ERR_MODULE_NOT_FOUND" });
      const { loads } = countLoads("src/bridge/sources/forms.js", { failFirst: failure });
      const { FileBridge } = await import("../../src/bridge/file-bridge.js");
      const bridge = new FileBridge({ tmpDir: tmp, sweepOnStart: false });
      const input = "data:text/plain;name=a.txt;base64,aGk=";
      const error = await bridge.resolve(input, { scope: "s1" }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(loads.attempts).toBe(1);
      // Under vitest a mocked module's failure arrives wrapped, with the load's error as its cause.
      expect(error === failure || (error as Error | undefined)?.cause === failure).toBe(true);
      expect(await readdir(tmp)).toEqual([]);
      await using file = await bridge.resolve(input, { scope: "s1" });
      expect(file.name).toBe("a.txt");
      expect(file.size).toBe(2);
      await bridge.close();
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });
});
