import { describe, expect, it } from "vitest";
import { z } from "zod";
import { fileInput, MCP_FILE_KEYWORD } from "../../src/bridge/file-input.js";

describe("fileInput", () => {
  it("accepts strings and file objects, refuses other values", () => {
    const schema = fileInput();
    expect(schema.safeParse("data:,x").success).toBe(true);
    expect(schema.safeParse({ name: "a.txt", content: "aGk=" }).success).toBe(true);
    expect(schema.safeParse({ uri: "upload://x", size: 3, digest: "sha256:00" }).success).toBe(true);
    expect(schema.safeParse({ download_url: "https://x", file_name: "y" }).success).toBe(true);
    expect(schema.safeParse("").success).toBe(false);
    expect(schema.safeParse(42).success).toBe(false);
    expect(schema.safeParse({ name: "a", size: -1 }).success).toBe(false);
  });

  it("describes the forms and carries the x-mcp-file marker into JSON Schema", () => {
    const json = z.toJSONSchema(
      fileInput({ description: "The PDF.", accept: ["application/pdf"], maxBytes: 1024, https: true }),
    ) as Record<string, unknown>;
    expect(json[MCP_FILE_KEYWORD]).toEqual({ accept: ["application/pdf"], maxSize: 1024 });
    expect(String(json.description)).toMatch(/^The PDF\. Send it as a data URL/);
    expect(String(json.description)).toContain("https://");
  });

  it("joins a description without a full stop to the forms as a sentence", () => {
    const json = z.toJSONSchema(fileInput({ description: "The PDF to summarize" })) as Record<
      string,
      unknown
    >;
    expect(String(json.description)).toMatch(/^The PDF to summarize\. Send it as /);
  });

  it.each([{ description: 3 }, { accept: "application/pdf" }, { maxBytes: 0 }])(
    "refuses %j with INVALID_OPTION",
    (options) => {
      expect(() => fileInput(options as never)).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
    },
  );
});
