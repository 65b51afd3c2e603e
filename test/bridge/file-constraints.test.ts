/**
 * Issue 41 part 2: what a tool publishes through `fileInput({ accept, maxBytes })` (on the wire
 * `x-mcp-file { accept, maxSize }`) is enforced before its handler runs, for every input form: a
 * resource URI, an `upload://` handle, a `data:` URL, a `{name, content}` object, a local path, an
 * `https://` URL and an `openai/fileParams` host attachment. The tool is a real SDK v1 `McpServer`
 * tool called by a real client; text declared as `image/png` is refused on its bytes; a file over
 * `maxSize` is refused with the limit named. The handler never runs on a refused file.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { ResourceRegistry } from "../../src/registry/resource-registry.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { memoryState } from "../../src/storage/memory-state.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import { UploadHandleResolver } from "../../src/uploads/upload-handle-resolver.js";
import { type HttpsOrigin, hasOpenssl, startHttpsOrigin } from "../support/https-origin.js";
import { connectInMemory } from "../support/in-memory-client.js";
import { tempLeftovers } from "../support/temp-leftovers.js";

const SCOPE = "constraints-scope";
const MAX = 1024;
/** A real PNG header and chunk, then padding: a PNG by its bytes, 4 KiB long. */
const PNG_HEAD = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);
const BIG_PNG = Buffer.concat([PNG_HEAD, Buffer.alloc(4096 - PNG_HEAD.length, 0)]);
/** Text, 300 bytes, sent everywhere as `image/png` under a `.png` name. */
const TEXT = Buffer.from("this is plain text, not an image\n".repeat(10).slice(0, 300));

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

let base: string;
let roots: string;
let origin: HttpsOrigin | undefined;
let store: ReturnType<typeof memoryStore>;
let registry: ResourceRegistry;
let uploads: UploadHandleResolver;
let client: Client;
let handlerRuns: number;

async function setup(): Promise<void> {
  base = await realpath(await mkdtemp(join(tmpdir(), "fb-constraints-")));
  roots = join(base, "roots");
  await rm(roots, { recursive: true, force: true });
  await import("node:fs/promises").then((fs) => fs.mkdir(roots));
  if (hasOpenssl()) {
    const served = new Map([
      ["/fake.png", TEXT],
      ["/big.png", BIG_PNG],
    ]);
    origin = await startHttpsOrigin((req, res) => {
      const body = served.get(req.url ?? "");
      res.writeHead(body ? 200 : 404, { "content-type": "image/png" });
      res.end(body);
    });
  }
  store = memoryStore();
  const state = memoryState();
  const minter = new SignedUrlMinter({ secret: "s".repeat(32), baseUrl: "http://127.0.0.1:1", state });
  registry = new ResourceRegistry({ store, minter });
  const https = origin
    ? {
        allowHosts: ["127.0.0.1"],
        downloadOrigins: [origin.origin],
        allowPrivateAddresses: true,
        ca: origin.ca,
      }
    : undefined;
  const bridge = new FileBridge({ tmpDir: join(base, "tmp"), roots: [roots], ...(https ? { https } : {}) });
  uploads = new UploadHandleResolver({ store, minter, state, bridge });
  bridge.addResolver(registry.resolver());
  bridge.addResolver(uploads.fileSourceResolver());

  const server = new McpServer({ name: "constraints", version: "1.0.0" });
  const inputSchema = {
    image: bridge.fileInput({ accept: ["image/png"], maxBytes: MAX, fileParams: true }),
    note: z.string().optional(),
  };
  server.registerTool(
    "take_png",
    { inputSchema, _meta: bridge.fileParamsMeta(inputSchema) },
    bridge.withFiles(
      async ({ image }) => {
        handlerRuns++;
        return { content: [{ type: "text" as const, text: `ran on ${image}` }] };
      },
      { fields: ["image"], inputSchema, scope: () => SCOPE },
    ),
  );
  ({ client } = await connectInMemory(server, { name: "c", version: "1.0.0" }));
}

/** The argument for `form` carrying `bytes` declared as `image/png` (name `<stem>.png`). */
async function argumentFor(form: Form, bytes: Buffer, stem: string): Promise<unknown> {
  const name = `${stem}.png`;
  const base64 = bytes.toString("base64");
  switch (form) {
    case "resource URI": {
      const file = await registry.add(bytes, { scope: SCOPE, name, mimeType: "image/png" });
      return registry.uriFor(file);
    }
    case "upload handle": {
      const file = await store.put(bytes, { scope: SCOPE, name, mimeType: "image/png" });
      return uploads.handleFor(file);
    }
    case "data URL":
      return `data:image/png;name=${name};base64,${base64}`;
    case "object":
      return { name, content: base64, mimeType: "image/png" };
    case "local path": {
      const path = join(roots, `${stem}-${randomUUID()}.png`);
      await writeFile(path, bytes);
      return path;
    }
    case "https":
      return `${origin?.origin}/${stem === "fake" ? "fake" : "big"}.png`;
    case "fileParams":
      return {
        download_url: `${origin?.origin}/${stem === "fake" ? "fake" : "big"}.png`,
        file_id: `file_${stem}`,
        file_name: name,
        mime_type: "image/png",
      };
  }
}

type Result = { isError?: boolean; content: Array<{ type: string; text?: string }> };
const call = async (image: unknown) =>
  (await client.callTool({ name: "take_png", arguments: { image } })) as Result;
const textOf = (result: Result) => result.content.map((block) => block.text ?? "").join("\n");
const codeOf = (result: Result) => /^Error ([A-Z_]+):/.exec(textOf(result))?.[1];

beforeAll(setup, 60_000);
afterAll(async () => {
  await client?.close();
  await origin?.close();
  await rm(base, { recursive: true, force: true, maxRetries: 3 });
});

describe.each(FORMS)("x-mcp-file enforced: %s", (form) => {
  const needsOrigin = form === "https" || form === "fileParams";

  it.skipIf(needsOrigin && !hasOpenssl())(
    "refuses text declared as image/png (mimeTypeNotAccepted, naming what it accepts)",
    async () => {
      handlerRuns = 0;
      const result = await call(await argumentFor(form, TEXT, "fake"));
      expect(result.isError).toBe(true);
      expect(codeOf(result)).toBe("UNSUPPORTED_MEDIA_TYPE");
      expect(textOf(result)).toContain("mimeTypeNotAccepted");
      expect(textOf(result)).toContain("image/png");
      expect(handlerRuns).toBe(0);
      expect(await tempLeftovers(join(base, "tmp"))).toEqual([]);
    },
  );

  it.skipIf(needsOrigin && !hasOpenssl())(
    "refuses a PNG over maxSize (maxSizeExceeded, naming the limit)",
    async () => {
      handlerRuns = 0;
      const result = await call(await argumentFor(form, BIG_PNG, "big"));
      expect(result.isError).toBe(true);
      expect(codeOf(result)).toBe("FILE_TOO_LARGE");
      expect(textOf(result)).toContain("maxSizeExceeded");
      expect(textOf(result)).toContain(String(MAX));
      expect(handlerRuns).toBe(0);
      expect(await tempLeftovers(join(base, "tmp"))).toEqual([]);
    },
  );
});

describe("x-mcp-file: what passes", () => {
  it("runs the handler on a real PNG within maxSize, whatever type the client declared", async () => {
    handlerRuns = 0;
    const small = PNG_HEAD.toString("base64");
    for (const image of [
      `data:image/png;name=ok.png;base64,${small}`,
      `data:application/octet-stream;name=ok.bin;base64,${small}`,
      { name: "ok", content: small },
    ]) {
      const result = await call(image);
      expect(result.isError, textOf(result)).toBeFalsy();
    }
    expect(handlerRuns).toBe(3);
  });

  it("takes accept case-insensitively and with wildcards", async () => {
    const { acceptsMediaType } = await import("../../src/media/content-type.js");
    expect(acceptsMediaType(["IMAGE/PNG"], "image/png")).toBe(true);
    expect(acceptsMediaType(["image/*"], "Image/WebP")).toBe(true);
    expect(acceptsMediaType(["*/*"], "text/plain")).toBe(true);
    expect(acceptsMediaType(["image/*"], "text/plain")).toBe(false);
    expect(acceptsMediaType(["text/plain; charset=utf-8"], "text/plain")).toBe(true);
  });
});
