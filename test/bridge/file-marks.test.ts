/**
 * `descriptorMarksOnly`: the copy of a listed input schema the revision Claude Code ships is shown,
 * with each union's `x-mcp-file` marks on its file-descriptor object alone.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { descriptorMarksOnly, MARK_KEYWORD } from "../../src/bridge/file-marks.js";
import { fileInput, MCP_FILE_KEYWORD } from "../../src/index.js";

type Json = Record<string, unknown>;
const marks = (schema: unknown) => JSON.stringify(schema).split('"x-mcp-file"').length - 1;
const listed = (shape: z.ZodRawShape) => z.toJSONSchema(z.object(shape)) as Json;

describe("descriptorMarksOnly", () => {
  it("moves the default fileInput()'s marks onto the descriptor, keeps every branch, copies", () => {
    const schema = listed({ document: fileInput({ accept: ["application/pdf"] }), n: z.number() });
    const before = structuredClone(schema);
    expect(marks(schema)).toBe(3);
    const tailored = descriptorMarksOnly(schema);
    expect(schema).toEqual(before);
    expect(marks(tailored)).toBe(1);
    const document = (tailored.properties as Record<string, Json>).document as Json;
    const branches = document.anyOf as Json[];
    const original = (before.properties as Record<string, Json>).document as Json;
    expect(branches).toHaveLength((original.anyOf as Json[]).length);
    const marked = branches.filter((branch) => "x-mcp-file" in branch);
    expect(marked).toHaveLength(1);
    expect(marked[0]?.required).toEqual(["id", "mimeType", "size"]);
    // What the author published (accept) stays on the mark that is left.
    expect(marked[0]?.["x-mcp-file"]).toEqual({ accept: ["application/pdf"] });
  });

  it("reaches list items and descriptors behind a local $ref", () => {
    const list = listed({ files: z.array(fileInput()) });
    expect(marks(descriptorMarksOnly(list))).toBe(1);
    const descriptor = { type: "object", required: ["id", "mimeType", "size"], "x-mcp-file": {} };
    const referenced = {
      type: "object",
      $defs: { D: descriptor },
      properties: {
        f: { "x-mcp-file": {}, anyOf: [{ type: "string", "x-mcp-file": {} }, { $ref: "#/$defs/D" }] },
      },
    };
    const tailored = descriptorMarksOnly(referenced);
    expect(marks(tailored)).toBe(1);
    expect(tailored.$defs.D).toEqual(descriptor);
  });

  it("marks with the keyword fileInput() publishes", () => {
    expect(MARK_KEYWORD).toBe(MCP_FILE_KEYWORD);
  });

  it("returns the same object when there is nothing to move", () => {
    const objectOnly = listed({ document: fileInput({ marks: "object" }) });
    expect(descriptorMarksOnly(objectOnly)).toBe(objectOnly);
    // A mark with no descriptor beside it is the author's: left where it is.
    const foreign = { type: "object", properties: { f: { type: "string", "x-mcp-file": {} } } };
    expect(descriptorMarksOnly(foreign)).toBe(foreign);
  });
});
