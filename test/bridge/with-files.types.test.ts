import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import type { WithFilesArgs } from "../../src/bridge/with-files.js";
import { FileBridge, fileInput, type ResolvedFile } from "../../src/index.js";

// These assertions are checked by `tsc` (npm run typecheck); at run time they do nothing.
describe("withFiles handler argument types", () => {
  it("rewrites the named fields to paths or ResolvedFiles and keeps the rest", () => {
    type Args = { file: string | { name: string }; files?: Array<string | object>; doc: { inner?: string } };
    expectTypeOf<WithFilesArgs<Args, ["file"], "path">>().toEqualTypeOf<{
      file: string;
      files?: Array<string | object>;
      doc: { inner?: string };
    }>();
    expectTypeOf<WithFilesArgs<Args, ["files[]", "doc.inner"], "file">>().toEqualTypeOf<{
      file: string | { name: string };
      files?: ResolvedFile[];
      doc: { inner?: ResolvedFile };
    }>();
    // A field list that is not literal leaves the arguments as they are.
    expectTypeOf<WithFilesArgs<Args, string[], "path">>().toEqualTypeOf<Args>();
  });

  it("infers the handler's arguments from the tool's input schema", () => {
    const server = new McpServer({ name: "types", version: "1.0.0" });
    const bridge = new FileBridge({});
    server.registerTool(
      "one",
      { inputSchema: { file: fileInput(), note: z.string().optional() } },
      bridge.withFiles(
        async ({ file, note }) => {
          expectTypeOf(file).toEqualTypeOf<string>();
          expectTypeOf(note).toEqualTypeOf<string | undefined>();
          // @ts-expect-error a path is not a ResolvedFile
          file.sha256;
          return { content: [] };
        },
        { fields: ["file"] },
      ),
    );
    server.registerTool(
      "many",
      { inputSchema: { files: z.array(fileInput()) } },
      bridge.withFiles(
        async ({ files }) => {
          expectTypeOf(files).toEqualTypeOf<ResolvedFile[]>();
          return { content: [] };
        },
        { fields: ["files[]"], pass: "file" },
      ),
    );
  });
});
