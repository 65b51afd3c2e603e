/**
 * The MCP server the client matrix drives (stdio, SDK v1): one tool per output shape. Run with
 * `node --import tsx`. Every tool builds its result with the package's own output helpers, except
 * `legacy_structured`, the shape tools returned before the output contract (text link + unrelated
 * `structuredContent`), kept to record what a client drops.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import {
  Artifacts,
  fileOutputFields,
  memoryStore,
  ResourceRegistry,
  SignedUrlMinter,
  withFileOutputs,
} from "../../../src/index.js";
import { clientNameOf } from "../../../src/mcp/index.js";

const SCOPE = "matrix";
const store = memoryStore();
const registry = new ResourceRegistry({ store });
const minter = new SignedUrlMinter({ secret: "m".repeat(32), baseUrl: "http://127.0.0.1:9/files" });
const artifacts = new Artifacts({ store, registry, minter });
const server = new McpServer({ name: "files", version: "1.0.0" });

/** A deterministic text of `chars` characters whose first and last lines are recognisable. */
export function bigText(chars: number): string {
  const head = "BIG-TEXT-HEAD\n";
  const tail = "\nBIG-TEXT-TAIL";
  return head + "x".repeat(chars - head.length - tail.length) + tail;
}

async function table() {
  return registry.add(Buffer.from("a,b\n1,2\n"), { scope: SCOPE, name: "table.csv", mimeType: "text/csv" });
}

server.registerTool("whoami", { description: "Name of the client" }, async () => ({
  content: [{ type: "text", text: `client=${clientNameOf(server) ?? "unknown"}` }],
}));

server.registerTool("link_structured", { description: "A file output with structuredContent" }, async () =>
  withFileOutputs(
    { content: [{ type: "text", text: "One table." }], structuredContent: { rows: 1 } },
    await registry.link(await table()),
  ),
);

server.registerTool("link_plain", { description: "A file output without structuredContent" }, async () =>
  withFileOutputs({ content: [{ type: "text", text: "One table." }] }, await registry.link(await table())),
);

server.registerTool(
  "link_schema",
  {
    description: "A file output of a tool with an outputSchema",
    outputSchema: { rows: (await import("zod")).z.number(), ...fileOutputFields },
  },
  async () =>
    withFileOutputs(
      { content: [{ type: "text", text: "One table." }], structuredContent: { rows: 1 } },
      await registry.link(await table()),
    ),
);

server.registerTool("legacy_structured", { description: "The pre-contract shape" }, async () => {
  const link = await registry.link(await table());
  return { content: [{ type: "text", text: "One table." }, ...link.content], structuredContent: { rows: 1 } };
});

server.registerTool("big_text", { description: "60,000 characters of text" }, async () =>
  artifacts.fit(
    { content: [{ type: "text", text: bigText(60_000) }] },
    { scope: SCOPE, client: clientNameOf(server), name: "big.txt" },
  ),
);

server.registerTool("big_text_raw", { description: "60,000 characters of text, not fitted" }, async () => ({
  content: [{ type: "text", text: bigText(60_000) }],
}));

// Claude Code's own knob: a tools/list entry with `anthropic/maxResultSizeChars` raises its
// 50,000-character cap for that tool, so the tool passes a matching budget to fit().
server.registerTool(
  "big_text_raised",
  {
    description: "60,000 characters of text, cap raised",
    _meta: { "anthropic/maxResultSizeChars": 100_000 },
  },
  async () =>
    artifacts.fit(
      { content: [{ type: "text", text: bigText(60_000) }] },
      { scope: SCOPE, client: clientNameOf(server), name: "big.txt", budget: { text: 90_000 } },
    ),
);

server.registerTool("blob", { description: "A 200 KB non-media embedded blob" }, async () =>
  artifacts.fit(
    {
      content: [
        { type: "text", text: "Archive built." },
        {
          type: "resource",
          resource: {
            uri: "mem://archive.bin",
            mimeType: "application/octet-stream",
            blob: Buffer.alloc(200 * 1024, 7).toString("base64"),
          },
        },
      ],
      structuredContent: { ok: true },
    },
    { scope: SCOPE, client: clientNameOf(server) },
  ),
);

// resources/list_changed: a registry of its own (the link tools' adds must not notify), one file
// listed from the start; `add_resource` adds one and reports whether the client listed again.
const listed = new ResourceRegistry({ store: memoryStore(), scope: () => "listed", notifyDelayMs: 0 });
listed.attach(server, { scope: "listed" });
await listed.add(Buffer.from("first\n"), { scope: "listed", name: "first.txt", mimeType: "text/plain" });
let lists = 0;
let onList: (() => void) | undefined;

/** How long `add_resource` waits for the client to list again before it reports that it did not. */
const RELIST_DEADLINE_MS = 3_000;

server.registerTool("add_resource", { description: "Adds a resource (list_changed)" }, async () => {
  const before = lists;
  const relisted = new Promise<boolean>((resolve) => {
    const deadline = setTimeout(() => resolve(false), RELIST_DEADLINE_MS);
    onList = () => {
      clearTimeout(deadline);
      resolve(true);
    };
  });
  await listed.add(Buffer.from("second\n"), { scope: "listed", name: "second.txt", mimeType: "text/plain" });
  const again = await relisted;
  onList = undefined;
  return {
    content: [
      {
        type: "text",
        text: `resources/list before=${before} relisted=${again ? "yes" : "no"} after=${lists}`,
      },
    ],
  };
});

const transport = new StdioServerTransport();
await server.connect(transport);
const receive = transport.onmessage;
transport.onmessage = (message: JSONRPCMessage) => {
  if ("method" in message && message.method === "resources/list") {
    lists += 1;
    // Answer first, then report the re-list (the client may wait for this answer).
    setImmediate(() => onList?.());
  }
  receive?.(message);
};
