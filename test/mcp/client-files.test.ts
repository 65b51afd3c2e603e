/**
 * `clientFilesCapability()` over the three spellings of the files extension a client may declare,
 * and `requestClientCapabilities()` reading a 2026-07-28 request's own `_meta`.
 */
import { describe, expect, it } from "vitest";
import { clientFilesCapability, requestClientCapabilities } from "../../src/mcp/index.js";

const KEY = "io.modelcontextprotocol/files";

describe("clientFilesCapability", () => {
  it("reads the draft: capabilities.files with booleans (and the extension entry with booleans)", () => {
    expect(clientFilesCapability({ files: { upload: true, download: true, transports: ["https"] } })).toEqual(
      {
        upload: true,
        download: true,
        spelling: "draft",
      },
    );
    expect(clientFilesCapability({ files: { upload: true } })).toEqual({
      upload: true,
      download: false,
      spelling: "draft",
    });
    expect(clientFilesCapability({ extensions: { [KEY]: { upload: true, download: false } } })).toEqual({
      upload: true,
      download: false,
      spelling: "draft",
    });
    // A declared object with no flags means both.
    expect(clientFilesCapability({ files: {} })).toEqual({ upload: true, download: true, spelling: "draft" });
  });

  it("reads the variant's names (inputTransfer / input / output)", () => {
    expect(clientFilesCapability({ files: { inputTransfer: true, output: true } })).toEqual({
      upload: true,
      download: true,
      spelling: "variant",
    });
    expect(clientFilesCapability({ extensions: { [KEY]: { input: {} } } })).toEqual({
      upload: true,
      download: false,
      spelling: "variant",
    });
  });

  it("reads the revision Claude Code ships: upload / download objects under extensions, no revision", () => {
    expect(clientFilesCapability({ extensions: { [KEY]: { upload: {} } } })).toEqual({
      upload: true,
      download: false,
      spelling: "upload_required",
    });
    expect(clientFilesCapability({ extensions: { [KEY]: { upload: {}, download: {} } } })).toEqual({
      upload: true,
      download: true,
      spelling: "upload_required",
    });
    // A newer revision is not this one.
    expect(clientFilesCapability({ extensions: { [KEY]: { upload: {}, revision: 2 } } })?.spelling).toBe(
      "draft",
    );
  });

  it("is undefined when nothing is declared", () => {
    expect(clientFilesCapability(undefined)).toBeUndefined();
    expect(clientFilesCapability({})).toBeUndefined();
    expect(clientFilesCapability({ extensions: { other: {} } })).toBeUndefined();
  });
});

describe("requestClientCapabilities", () => {
  const caps = { extensions: { [KEY]: { upload: {} } } };
  it("reads an SDK v2 context's envelope or _meta, and an SDK v1 extra's _meta", () => {
    const meta = { "io.modelcontextprotocol/clientCapabilities": caps };
    expect(requestClientCapabilities({ mcpReq: { envelope: meta } })).toEqual(caps);
    expect(requestClientCapabilities({ mcpReq: { _meta: meta } })).toEqual(caps);
    expect(requestClientCapabilities({ _meta: meta })).toEqual(caps);
    expect(requestClientCapabilities({ mcpReq: {} })).toBeUndefined();
    expect(requestClientCapabilities(undefined)).toBeUndefined();
  });
});
