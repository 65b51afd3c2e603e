import { readFile, symlink } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FileBridge } from "../../../src/bridge/file-bridge.js";
import { codeOf, sha256 } from "../../support/helpers.js";
import { base, bridge, root, scope, tempEntries, tmp, useBridgeSandbox } from "../bridge-sandbox.js";

useBridgeSandbox();

describe("local paths", () => {
  it("hands over a private copy of a file inside a root (read through one descriptor), never touching the original", async () => {
    const b = bridge();
    for (const input of [
      "docs/report.pdf",
      join(root, "docs", "report.pdf"),
      `file://${join(root, "docs", "report.pdf")}`,
    ]) {
      const file = await b.resolve(input, { scope });
      expect(file.path).not.toBe(join(root, "docs", "report.pdf"));
      expect(file.path.endsWith("report.pdf")).toBe(true);
      expect(await readFile(file.path, "utf8")).toBe("%PDF-1.7 fake pdf body");
      expect(file.name).toBe("report.pdf");
      expect(file.mimeType).toBe("application/pdf");
      expect(file.source.kind).toBe("path");
      expect(file.sha256).toBe(sha256("%PDF-1.7 fake pdf body"));
      await file.dispose();
      expect((await readFile(join(root, "docs", "report.pdf"))).toString()).toBe("%PDF-1.7 fake pdf body");
    }
    expect(await tempEntries()).toEqual([]);
  });

  it.each([
    ["../ traversal", () => "../secret.txt", "PATH_NOT_ALLOWED"],
    ["encoded traversal in a file URI", () => `file://${root}/%2e%2e/secret.txt`, "PATH_NOT_ALLOWED"],
    ["absolute path outside the roots", () => join(base, "secret.txt"), "PATH_NOT_ALLOWED"],
    ["NUL byte", () => "docs/report.pdf\0.txt", "PATH_NOT_ALLOWED"],
    ["a folder", () => "docs", "INVALID_INPUT"],
    ["a missing file", () => "docs/missing.pdf", "NOT_FOUND"],
    ["an empty file", () => "empty.txt", "EMPTY_FILE"],
    ["a remote file URI", () => "file://server/share/x.txt", "PATH_NOT_ALLOWED"],
  ])("refuses %s", async (_label, input, code) => {
    expect(await codeOf(bridge().resolve(input(), { scope }))).toBe(code);
  });

  it("refuses a symlink that leaves the root", async () => {
    await symlink(join(base, "secret.txt"), join(root, "link.txt"));
    expect(await codeOf(bridge().resolve("link.txt", { scope }))).toBe("PATH_NOT_ALLOWED");
  });

  it("refuses a file over the cap", async () => {
    expect(await codeOf(bridge({ maxBytes: 5 }).resolve("docs/report.pdf", { scope }))).toBe(
      "FILE_TOO_LARGE",
    );
  });

  it("refuses paths when no roots are configured, or the form is off", async () => {
    const noRoots = new FileBridge({ tmpDir: tmp });
    expect(await codeOf(noRoots.resolve(join(root, "docs", "report.pdf"), { scope }))).toBe("FORM_DISABLED");
    expect(await codeOf(noRoots.resolve(`file://${join(root, "docs", "report.pdf")}`, { scope }))).toBe(
      "FORM_DISABLED",
    );
    expect(await codeOf(bridge({ forms: { path: false } }).resolve("docs/report.pdf", { scope }))).toBe(
      "FORM_DISABLED",
    );
  });
});
