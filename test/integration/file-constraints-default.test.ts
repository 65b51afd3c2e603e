/**
 * Issue 41 item 2, by default: a tool registered with
 * `inputSchema: { file: bridge.fileInput({ accept: ["image/png"], maxBytes: 1024 }) }` and
 * `bridge.withFiles(handler, { fields: ["file"] })` (no `inputSchema` option) never runs its handler
 * on a file its `x-mcp-file { accept, maxSize }` refuses, whatever form the file comes in. The
 * client is the real SDK `Client` of each generation (v1 `@modelcontextprotocol/sdk`, v2
 * `@modelcontextprotocol/client`) over its in-memory transport, written from the draft's rule
 * (SEP-2631: servers MUST validate `accept` and `maxSize` of `x-mcp-file` fields). Three set-ups:
 * - `pieces attached`: the registry and the uploads piece are attached to the server (the
 *   set-up the docs teach for uploads), nothing else done for the check;
 * - `bridge.attach`: only `bridge.attach(server)`;
 * - `nothing attached`: the server knows nothing of the bridge: the call is refused (fail closed,
 *   `INVALID_OPTION`), the handler never runs.
 */
import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client as V2Client, InMemoryTransport as V2InMemory } from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport as V1InMemory } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer as V1McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { McpServer as V2McpServer } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { ResourceRegistry } from "../../src/registry/resource-registry.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { memoryState } from "../../src/storage/memory-state.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import { UploadHandleResolver } from "../../src/uploads/upload-handle-resolver.js";
import { type HttpsOrigin, hasOpenssl, startHttpsOrigin } from "../support/https-origin.js";

const SCOPE = "default-constraints";
const MAX = 1024;
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);
/** A PNG by its bytes, 4,096 bytes long: over maxSize. */
const BIG_PNG = Buffer.concat([PNG, Buffer.alloc(4096 - PNG.length, 0)]);
/** 4,096 bytes of text/plain: over maxSize and not a PNG (the case). */
const BIG_TEXT = Buffer.from("plain text, not an image.\n".repeat(200)).subarray(0, 4096);
/** 300 bytes of text/plain: within maxSize, not a PNG. */
const TEXT = BIG_TEXT.subarray(0, 300);

type Form = "resource URI" | "upload handle" | "data URL" | "object" | "local path" | "https" | "fileParams";
const FORMS: Form[] = [
  "resource URI",
  "upload handle",
  "data URL",
  "object",
  "local path",
  "https",
  "fileParams",
];
type Generation = "v1" | "v2";
type Setup = "pieces attached" | "bridge.attach" | "nothing attached";

type Result = { isError?: boolean; content: Array<{ type: string; text?: string }> };
const textOf = (result: Result) => result.content.map((block) => block.text ?? "").join("\n");
const codeOf = (result: Result) => /^Error ([A-Z_]+):/.exec(textOf(result))?.[1];

let base: string;
let roots: string;
let origin: HttpsOrigin | undefined;
const served = new Map<string, { body: Buffer; type: string }>();

beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "fb-default-constraints-")));
  roots = join(base, "roots");
  await mkdir(roots);
  if (hasOpenssl()) {
    origin = await startHttpsOrigin((req, res) => {
      const file = served.get(req.url ?? "");
      res.writeHead(file ? 200 : 404, { "content-type": file?.type ?? "text/plain" });
      res.end(file?.body);
    });
  }
}, 60_000);

afterAll(async () => {
  await origin?.close();
  await rm(base, { recursive: true, force: true, maxRetries: 3 });
});

interface App {
  call(file: unknown): Promise<Result>;
  argumentFor(form: Form, bytes: Buffer, type: string): Promise<unknown>;
  runs(): number;
  close(): Promise<void>;
}

async function app(generation: Generation, setup: Setup): Promise<App> {
  const store = memoryStore();
  const state = memoryState();
  const minter = new SignedUrlMinter({ secret: "s".repeat(32), baseUrl: "http://127.0.0.1:1", state });
  const registry = new ResourceRegistry({ store, minter });
  const https = origin
    ? {
        allowHosts: ["127.0.0.1"],
        downloadOrigins: [origin.origin],
        allowPrivateAddresses: true,
        ca: origin.ca,
      }
    : undefined;
  const bridge = new FileBridge({ tmpDir: join(base, "tmp"), roots: [roots], ...(https ? { https } : {}) });
  const uploads = new UploadHandleResolver({ store, minter, state, bridge });
  bridge.addResolver(registry.resolver());
  bridge.addResolver(uploads.fileSourceResolver());
  const server =
    generation === "v1"
      ? new V1McpServer({ name: "constraints", version: "1.0.0" })
      : new V2McpServer({ name: "constraints", version: "1.0.0" });
  if (setup === "pieces attached") {
    registry.attach(server);
    uploads.attach(server);
  }
  if (setup === "bridge.attach") bridge.attach(server);
  let runs = 0;
  const inputSchema = {
    file: bridge.fileInput({ accept: ["image/png"], maxBytes: MAX, fileParams: true }),
    note: z.string().optional(),
  };
  (server as V1McpServer).registerTool(
    "take_png",
    { inputSchema, _meta: bridge.fileParamsMeta(inputSchema) },
    bridge.withFiles(
      async ({ file }) => {
        runs++;
        return { content: [{ type: "text" as const, text: `ran on ${file}` }] };
      },
      { fields: ["file"], scope: () => SCOPE },
    ),
  );
  let client: { callTool(params: object): Promise<unknown>; close(): Promise<void> };
  if (generation === "v1") {
    const [a, b] = V1InMemory.createLinkedPair();
    await (server as V1McpServer).connect(b);
    const v1 = new V1Client({ name: "c", version: "1.0.0" });
    await v1.connect(a);
    client = v1;
  } else {
    const [a, b] = V2InMemory.createLinkedPair();
    await (server as V2McpServer).connect(b);
    const v2 = new V2Client({ name: "c", version: "1.0.0" });
    await v2.connect(a);
    client = v2 as never;
  }
  return {
    call: async (file) => (await client.callTool({ name: "take_png", arguments: { file } })) as Result,
    runs: () => runs,
    close: () => client.close(),
    async argumentFor(form, bytes, type) {
      const stem = randomUUID();
      const name = `${stem}.${type === "image/png" ? "png" : "txt"}`;
      const base64 = bytes.toString("base64");
      switch (form) {
        case "resource URI":
          return registry.uriFor(await registry.add(bytes, { scope: SCOPE, name, mimeType: type }));
        case "upload handle":
          return uploads.handleFor(await store.put(bytes, { scope: SCOPE, name, mimeType: type }));
        case "data URL":
          return `data:${type};name=${name};base64,${base64}`;
        case "object":
          return { filename: name, content: base64, mimeType: type };
        case "local path": {
          const path = join(roots, name);
          await writeFile(path, bytes);
          return path;
        }
        case "https":
          served.set(`/${name}`, { body: bytes, type });
          return `${origin?.origin}/${name}`;
        case "fileParams":
          served.set(`/${name}`, { body: bytes, type });
          return {
            download_url: `${origin?.origin}/${name}`,
            file_id: `file_${stem}`,
            file_name: name,
            mime_type: type,
          };
      }
    },
  };
}

describe.each(["v1", "v2"] as const)("SDK %s", (generation) => {
  describe.each(["pieces attached", "bridge.attach"] as const)(
    "%s: x-mcp-file enforced by default",
    (setup) => {
      let tool: App;
      beforeAll(async () => {
        tool = await app(generation, setup);
      });
      afterAll(() => tool?.close());

      describe.each(FORMS)("%s", (form) => {
        const skip = (form === "https" || form === "fileParams") && !hasOpenssl();

        it.skipIf(skip)(
          "refuses 4,096 bytes of text/plain (the issue's case); the handler never runs",
          async () => {
            const before = tool.runs();
            const result = await tool.call(await tool.argumentFor(form, BIG_TEXT, "text/plain"));
            expect(result.isError, textOf(result)).toBe(true);
            expect(codeOf(result)).toBe("FILE_TOO_LARGE");
            expect(textOf(result)).toContain("maxSizeExceeded");
            expect(textOf(result)).toContain(String(MAX));
            expect(tool.runs()).toBe(before);
          },
        );

        it.skipIf(skip)(
          "refuses text within maxSize, even declared image/png (mimeTypeNotAccepted)",
          async () => {
            const before = tool.runs();
            for (const type of ["text/plain", "image/png"]) {
              const result = await tool.call(await tool.argumentFor(form, TEXT, type));
              expect(result.isError, textOf(result)).toBe(true);
              expect(codeOf(result)).toBe("UNSUPPORTED_MEDIA_TYPE");
              expect(textOf(result)).toContain("mimeTypeNotAccepted");
              expect(textOf(result)).toContain("image/png");
            }
            expect(tool.runs()).toBe(before);
          },
        );

        it.skipIf(skip)("refuses a PNG over maxSize (maxSizeExceeded, the limit named)", async () => {
          const before = tool.runs();
          const result = await tool.call(await tool.argumentFor(form, BIG_PNG, "image/png"));
          expect(codeOf(result)).toBe("FILE_TOO_LARGE");
          expect(textOf(result)).toContain("maxSizeExceeded");
          expect(textOf(result)).toContain(String(MAX));
          expect(tool.runs()).toBe(before);
        });

        it.skipIf(skip)("runs the handler on a PNG within maxSize", async () => {
          const before = tool.runs();
          const result = await tool.call(await tool.argumentFor(form, PNG, "image/png"));
          expect(result.isError, textOf(result)).toBeFalsy();
          expect(tool.runs()).toBe(before + 1);
        });
      });
    },
  );

  describe("nothing attached: fails closed", () => {
    let tool: App;
    beforeAll(async () => {
      tool = await app(generation, "nothing attached");
    });
    afterAll(() => tool?.close());

    it.each(["resource URI", "data URL", "object", "local path"] as const)(
      "%s: refuses with INVALID_OPTION naming bridge.attach; the handler never runs",
      async (form) => {
        for (const [bytes, type] of [
          [BIG_TEXT, "text/plain"],
          [PNG, "image/png"],
        ] as const) {
          const result = await tool.call(await tool.argumentFor(form, bytes, type));
          expect(result.isError, textOf(result)).toBe(true);
          expect(codeOf(result)).toBe("INVALID_OPTION");
          expect(textOf(result)).toContain("bridge.attach(server)");
        }
        expect(tool.runs()).toBe(0);
      },
    );
  });
});
