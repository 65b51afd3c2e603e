/**
 * `withFilesOutput`: the listed output schema allows exactly what the proxy and the shim add
 * (`structuredContent.files`), checked with ajv as the SDK clients validate.
 */
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { withFilesOutput } from "../../src/proxy/output-schema.js";

const closed = {
  type: "object",
  properties: { content: { type: "string" } },
  required: ["content"],
  additionalProperties: false,
};
const output = { uri: "artifact://sessions/x/1/a.txt", name: "a.txt", mimeType: "text/plain", size: 3 };

const validate = (schema: unknown, data: unknown) =>
  new Ajv({ strict: false }).compile(schema as object)(data);

describe("withFilesOutput", () => {
  it("adds a files property to a closed schema: the rewritten result validates, the upstream's own still does", () => {
    const listed = withFilesOutput({ name: "t", outputSchema: closed });
    expect(validate(closed, { content: "x", files: [output] })).toBe(false);
    expect(validate(listed.outputSchema, { content: "x", files: [output] })).toBe(true);
    expect(
      validate(listed.outputSchema, { content: "x", files: [{ ...output, localPath: "/tmp/a.txt" }] }),
    ).toBe(true);
    expect(validate(listed.outputSchema, { content: "x" })).toBe(true);
    // Still the upstream's contract otherwise.
    expect(validate(listed.outputSchema, { files: [output] })).toBe(false);
    expect(validate(listed.outputSchema, { content: "x", other: 1 })).toBe(false);
    expect(closed.properties).not.toHaveProperty("files");
  });

  it("keeps an upstream's own files property valid and allows the entries we append to it", () => {
    const theirs = {
      ...closed,
      properties: {
        ...closed.properties,
        files: {
          type: "array",
          items: { type: "object", properties: { p: { type: "string" } }, additionalProperties: false },
        },
      },
    };
    const listed = withFilesOutput({ name: "t", outputSchema: theirs });
    expect(validate(listed.outputSchema, { content: "x", files: [{ p: "a" }] })).toBe(true);
    expect(validate(listed.outputSchema, { content: "x", files: [{ p: "a" }, output] })).toBe(true);
    expect(validate(listed.outputSchema, { content: "x", files: [{ p: "a", localPath: "/tmp/a" }] })).toBe(
      true,
    );
  });

  it("leaves a tool without an outputSchema alone", () => {
    const tool = { name: "t", inputSchema: { type: "object" } };
    expect(withFilesOutput(tool)).toBe(tool);
  });
});
