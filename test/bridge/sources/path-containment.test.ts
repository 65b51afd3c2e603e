import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  fileUriToPath,
  isPathInside,
  prepareRoots,
  type Root,
  resolveContainedPath,
} from "../../../src/bridge/sources/path-containment.js";
import { codeOf } from "../../support/helpers.js";

let base: string;
let root: string;
let roots: Root[];

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "fb-contain-")));
  root = join(base, "root");
  await mkdir(join(root, "sub"), { recursive: true });
  await writeFile(join(root, "a.txt"), "inside");
  await writeFile(join(root, "sub", "b.txt"), "nested");
  await writeFile(join(root, "..hidden"), "dots in a name");
  await writeFile(join(base, "secret.txt"), "outside");
  roots = await prepareRoots([root]);
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true, maxRetries: 3 });
});

describe("resolveContainedPath", () => {
  it("accepts absolute and relative paths inside the root", async () => {
    expect((await resolveContainedPath(join(root, "a.txt"), roots)).path).toBe(join(root, "a.txt"));
    const nested = await resolveContainedPath("sub/b.txt", roots);
    expect(nested).toEqual({ path: join(root, "sub", "b.txt"), size: 6 });
    expect((await resolveContainedPath("..hidden", roots)).size).toBe(14);
  });

  it.each([
    ["../ traversal", () => "../secret.txt"],
    ["nested ../", () => "sub/../../secret.txt"],
    ["backslash ..", () => "sub\\..\\..\\secret.txt"],
    ["absolute outside", () => join(base, "secret.txt")],
    ["NUL byte", () => "a.txt\0.png"],
    ["system file", () => "/etc/passwd"],
  ])("refuses %s with PATH_NOT_ALLOWED", async (_label, input) => {
    expect(await codeOf(resolveContainedPath(input(), roots))).toBe("PATH_NOT_ALLOWED");
  });

  it("refuses a symlink that leaves the root, accepts one that stays", async () => {
    await symlink(join(base, "secret.txt"), join(root, "escape.txt"));
    await symlink(join(root, "a.txt"), join(root, "alias.txt"));
    await symlink(base, join(root, "up"));
    expect(await codeOf(resolveContainedPath("escape.txt", roots))).toBe("PATH_NOT_ALLOWED");
    expect(await codeOf(resolveContainedPath("up/secret.txt", roots))).toBe("PATH_NOT_ALLOWED");
    expect((await resolveContainedPath("alias.txt", roots)).path).toBe(join(root, "a.txt"));
  });

  it("reports a folder as INVALID_INPUT and a missing file as NOT_FOUND", async () => {
    expect(await codeOf(resolveContainedPath("sub", roots))).toBe("INVALID_INPUT");
    expect(await codeOf(resolveContainedPath("nope.txt", roots))).toBe("NOT_FOUND");
  });

  it("refuses roots that do not exist", async () => {
    expect(await codeOf(prepareRoots([join(base, "missing")]))).toBe("INVALID_OPTION");
  });

  it("never accepts a path outside the root, whatever the input (property)", async () => {
    const segment = fc.constantFrom("..", ".", "sub", "a.txt", "secret.txt", "", "%2e%2e", "up", "x");
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { maxLength: 6 }), fc.boolean(), async (segments, absolute) => {
        const input = (absolute ? `${root}/` : "") + segments.join("/");
        try {
          const found = await resolveContainedPath(input, roots);
          expect(isPathInside(found.path, root)).toBe(true);
        } catch (error) {
          expect(["PATH_NOT_ALLOWED", "NOT_FOUND", "INVALID_INPUT"]).toContain(
            (error as { code?: string }).code,
          );
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("isPathInside", () => {
  it("compares whole segments", () => {
    expect(isPathInside("/a/b", "/a")).toBe(true);
    expect(isPathInside("/a", "/a")).toBe(true);
    expect(isPathInside("/ab", "/a")).toBe(false);
    expect(isPathInside("/a/..b", "/a")).toBe(true);
    expect(isPathInside("/", "/a")).toBe(false);
  });

  it("agrees with a segment-wise definition (property)", () => {
    const seg = fc.constantFrom("a", "b", "..", ".", "ab", "..b");
    fc.assert(
      fc.property(fc.array(seg, { maxLength: 5 }), fc.array(seg, { maxLength: 5 }), (p, c) => {
        const parent = resolve("/", ...p);
        const child = resolve("/", ...c);
        const parentParts = parent.split("/").filter(Boolean);
        const childParts = child.split("/").filter(Boolean);
        const expected = parentParts.every((part, i) => childParts[i] === part);
        expect(isPathInside(child, parent)).toBe(expected);
      }),
    );
  });
});

describe("fileUriToPath", () => {
  it("decodes file URIs with an empty host or localhost", () => {
    expect(fileUriToPath("file:///srv/a%20b.txt")).toBe("/srv/a b.txt");
    expect(fileUriToPath("file://localhost/srv/x")).toBe("/srv/x");
    expect(fileUriToPath("FILE:///srv/x")).toBe("/srv/x");
  });

  it.each([
    "file:///srv/%2e%2e/etc/passwd",
    "file:///srv/%2E%2e/etc/passwd",
    "file:///srv/../etc/passwd",
    "file:///srv/./x",
    "file:///srv/a%2fb",
    "file:///srv/a%5cb",
    "file:///srv/a%00b",
    "file:///srv/%zz",
    "file://evil.example/share/x",
    "file:///srv/x?y",
    "file:relative",
  ])("refuses %s with PATH_NOT_ALLOWED", (uri) => {
    let code: string | undefined;
    try {
      fileUriToPath(uri);
    } catch (error) {
      code = (error as { code?: string }).code;
    }
    expect(code).toBe("PATH_NOT_ALLOWED");
  });
});
