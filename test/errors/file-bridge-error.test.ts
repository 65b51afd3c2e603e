import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  FILE_BRIDGE_ERROR_CODES,
  FileBridgeError,
  isFileBridgeError,
  JSONRPC_INTERNAL_ERROR,
  JSONRPC_INVALID_PARAMS,
  statusForCode,
  toJsonRpcError,
  toToolErrorResult,
} from "../../src/errors/file-bridge-error.js";

describe("FileBridgeError", () => {
  it("carries code, status, data and cause", () => {
    const cause = new Error("disk");
    const error = new FileBridgeError("FILE_TOO_LARGE", "too big", { cause, data: { limit: 10 } });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("FileBridgeError");
    expect(error.code).toBe("FILE_TOO_LARGE");
    expect(error.status).toBe(413);
    expect(error.data).toEqual({ limit: 10 });
    expect(error.cause).toBe(cause);
  });

  it("maps every code to an HTTP status and a hint", () => {
    for (const code of FILE_BRIDGE_ERROR_CODES) {
      const error = new FileBridgeError(code, "x");
      expect(error.status).toBe(statusForCode(code));
      expect(error.status).toBeGreaterThanOrEqual(400);
      expect(error.hint.length).toBeGreaterThan(10);
    }
  });

  it("is recognised across realms by name and code, and not otherwise", () => {
    const foreign = { name: "FileBridgeError", code: "NOT_FOUND", message: "gone" };
    expect(isFileBridgeError(foreign)).toBe(true);
    expect(isFileBridgeError(foreign, "NOT_FOUND")).toBe(true);
    expect(isFileBridgeError(foreign, "FORBIDDEN")).toBe(false);
    expect(isFileBridgeError({ name: "FileBridgeError", code: "NOPE" })).toBe(false);
    expect(isFileBridgeError(new Error("x"))).toBe(false);
    expect(isFileBridgeError(null)).toBe(false);
    expect(isFileBridgeError("NOT_FOUND")).toBe(false);
  });
});

describe("toToolErrorResult", () => {
  it("names the code and what to do", () => {
    const result = toToolErrorResult(new FileBridgeError("PATH_NOT_ALLOWED", "outside roots"));
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toBe(
      "Error PATH_NOT_ALLOWED: outside roots. Use a path inside the server's allowed folders, or upload the file instead.",
    );
  });

  it("uses an error's own hint when it was given one", () => {
    const error = new FileBridgeError("PATH_NOT_ALLOWED", "outside", { hint: "Use --allow-dir." });
    expect(error.hint).toBe("Use --allow-dir.");
    expect(toToolErrorResult(error).content[0]?.text).toBe(
      "Error PATH_NOT_ALLOWED: outside. Use --allow-dir.",
    );
  });

  it("hides the message of unknown errors", () => {
    const result = toToolErrorResult(new Error("/secret/path/leaked"));
    expect(result.content[0]?.text).toContain("STORAGE_ERROR");
    expect(result.content[0]?.text).not.toContain("/secret/path");
  });
});

describe("toJsonRpcError", () => {
  it("is -32602 with data.uri and data.code for caller errors", () => {
    const rpc = toJsonRpcError(new FileBridgeError("NOT_FOUND", "no such resource"), { uri: "file://x" });
    expect(rpc).toEqual({
      code: JSONRPC_INVALID_PARAMS,
      message: "no such resource",
      data: { uri: "file://x", code: "NOT_FOUND" },
    });
  });

  it("is -32603 without details for server errors", () => {
    const rpc = toJsonRpcError(new Error("ENOSPC /var/x"), { uri: "file://x" });
    expect(rpc.code).toBe(JSONRPC_INTERNAL_ERROR);
    expect(rpc.message).not.toContain("ENOSPC");
  });
});

describe("README error table", () => {
  it("documents exactly the codes the code has", () => {
    const readme = readFileSync(join(import.meta.dirname, "..", "..", "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Error codes"));
    const documented = [...section.matchAll(/^\|\s*`([A-Z0-9_]+)`\s*\|\s*(\d{3})\s*\|/gm)].map((m) => [
      m[1],
      Number(m[2]),
    ]);
    expect(documented).toEqual(FILE_BRIDGE_ERROR_CODES.map((code) => [code, statusForCode(code)]));
  });
});
