import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import type { FileBridgeOptions } from "../../src/bridge/options.js";
import { codeOf } from "../support/helpers.js";
import { base, bridge, scope, tmp, useBridgeSandbox } from "./bridge-sandbox.js";

useBridgeSandbox();

describe("FileBridge options", () => {
  it.each<[string, FileBridgeOptions]>([
    ["maxBytes", { maxBytes: 0 }],
    ["maxBytes", { maxBytes: 1.5 }],
    ["concurrency", { concurrency: -1 }],
    ["forms.path", { roots: [], forms: { path: true } }],
    ["forms.https", { forms: { https: true } }],
    ["forms.nope", { forms: { nope: true } as never }],
    ["https.allowHosts", { https: { allowHosts: [] } }],
    ["https.timeout", { https: { allowHosts: ["a.example"], timeout: "soon" as never } }],
    ["https.maxRedirects", { https: { allowHosts: ["a.example"], maxRedirects: -1 } }],
    ["roots", { roots: [""] }],
    ["tmpDir", { tmpDir: "" }],
  ])("refuses a bad %s with INVALID_OPTION", (_name, options) => {
    expect(() => new FileBridge(options)).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
  });

  it("refuses roots that do not exist when a path is first resolved", async () => {
    const b = new FileBridge({ tmpDir: tmp, roots: [join(base, "missing")] });
    expect(await codeOf(b.resolve("x.txt", { scope }))).toBe("INVALID_OPTION");
  });

  it("validates the call options", async () => {
    const b = bridge();
    expect(await codeOf(b.resolve("data:,x", { scope: "" }))).toBe("INVALID_INPUT");
    expect(await codeOf(b.resolve("data:,x", { scope, maxBytes: 0 }))).toBe("INVALID_INPUT");
  });
});
