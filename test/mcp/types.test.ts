import type * as Sdk from "@modelcontextprotocol/sdk/types.js";
import { describe, expectTypeOf, it } from "vitest";
import type * as Ours from "../../src/mcp/types.js";

// The structural wire types of src/mcp must be interchangeable with SDK v1's, both ways: pieces
// return ours to SDK callbacks, and users hand the SDK's to pieces (withArtifacts handlers).
describe("structural MCP types", () => {
  it("are assignable to and from SDK v1's", () => {
    expectTypeOf<Ours.CallToolResult>().toExtend<Sdk.CallToolResult>();
    expectTypeOf<Sdk.CallToolResult>().toExtend<Ours.CallToolResult>();
    expectTypeOf<Ours.ResourceLink>().toExtend<Sdk.ResourceLink>();
    expectTypeOf<Sdk.ResourceLink>().toExtend<Ours.ResourceLink>();
    expectTypeOf<Ours.TextContent>().toExtend<Sdk.TextContent>();
    expectTypeOf<Sdk.TextContent>().toExtend<Ours.TextContent>();
    expectTypeOf<Ours.ReadResourceResult>().toExtend<Sdk.ReadResourceResult>();
    expectTypeOf<Sdk.ReadResourceResult>().toExtend<Ours.ReadResourceResult>();
    expectTypeOf<Ours.ListResourcesResult>().toExtend<Sdk.ListResourcesResult>();
    expectTypeOf<Ours.ListResourceTemplatesResult>().toExtend<Sdk.ListResourceTemplatesResult>();
    expectTypeOf<Ours.CompleteResult>().toExtend<Sdk.CompleteResult>();
    expectTypeOf<Sdk.CompleteRequest["params"]>().toExtend<Ours.CompleteParams>();
  });
});
