/**
 * Pins the public surface (issue 20): the names each entry point exports are listed in
 * public-surface.json, so adding, moving or dropping an export is a decision made in review (edit
 * the JSON in the same commit, and say it in CHANGELOG.md), never a side effect of an `export *`.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type EntrySurface, entrySurfaces } from "./public-surface.js";

const here = dirname(fileURLToPath(import.meta.url));
const pinned = JSON.parse(readFileSync(join(here, "public-surface.json"), "utf8")) as Record<
  string,
  EntrySurface
>;
const actual = entrySurfaces();
const packageExports = Object.keys(
  (
    JSON.parse(readFileSync(join(here, "..", "..", "package.json"), "utf8")) as {
      exports: Record<string, unknown>;
    }
  ).exports,
);

describe("public surface", () => {
  it("builds exactly the pinned entry points", () => {
    expect(Object.keys(actual).sort()).toEqual(Object.keys(pinned).sort());
  });

  for (const name of Object.keys(pinned)) {
    it(`${name} exports exactly the pinned names`, () => {
      expect(
        actual[name],
        `${name}: update test/architecture/public-surface.json if this is a decision`,
      ).toEqual(pinned[name]);
    });
  }

  it("keeps the root a front door: about 60 names", () => {
    const root = actual.index as EntrySurface;
    // 58 after the re-housing; the file outputs (issue 22) and tus (issue 25) each added two names
    // a server author calls. Raising this is a decision, made here.
    expect(root.values.length + root.types.length).toBeLessThanOrEqual(62);
  });

  it("publishes every entry point as a package.json subpath, and one name for the storage kit (no ./storage alias)", () => {
    for (const name of Object.keys(actual)) {
      expect(packageExports).toContain(name === "index" ? "." : `./${name}`);
    }
    const pkg = JSON.parse(readFileSync(join(here, "..", "..", "package.json"), "utf8")) as {
      exports: Record<string, unknown>;
    };
    expect(pkg.exports["./storage-kit"]).toBeDefined();
    expect(pkg.exports["./storage"]).toBeUndefined();
  });

  it("./bridge is a part of the root: every name it exports is the root's", () => {
    // The same modules (so the same classes): a server that uses only FileBridge imports less.
    const root = new Set([...(actual.index?.values ?? []), ...(actual.index?.types ?? [])]);
    const bridge = [...(actual.bridge?.values ?? []), ...(actual.bridge?.types ?? [])];
    expect(bridge).toContain("FileBridge");
    expect(bridge.filter((n) => !root.has(n))).toEqual([]);
  });

  it("exports no name from two entries with different meanings: the root's names are not repeated in ./types or ./mcp", () => {
    const root = new Set([...(actual.index?.values ?? []), ...(actual.index?.types ?? [])]);
    for (const entry of ["types", "mcp", "media"]) {
      const names = [...(actual[entry]?.values ?? []), ...(actual[entry]?.types ?? [])];
      expect(names.filter((n) => root.has(n))).toEqual([]);
    }
  });
});
