/**
 * Issue 26 over tus: a `files/authorizeUpload` descriptor names the ticket's tus endpoint, and the
 * tus path holds the ticket's declared size, sha-256 and media type exactly as the `PUT` does
 * (same codes, same `reason`s), before the first byte where it can and at commit otherwise.
 */
import { randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { serveHttp } from "../../../examples/shared/serve-http.js";
import { filesApp, newV1Server, rpcError } from "../../mcp/v2/harness.js";
import {
  DRAFT_CLIENT_CAPABILITY,
  draftFiles,
  type RequestingClient,
  sha256Hex,
} from "../../support/draft-files-client.js";

const TUS = { "tus-resumable": "1.0.0" };
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function filesClient() {
  const app = await filesApp({ files: true });
  cleanups.push(() => app.close());
  const http = await serveHttp({
    createServer: () => {
      const server = newV1Server();
      app.mount(server);
      return server;
    },
    routes: app.routes,
  });
  app.setOrigin(http.url);
  cleanups.push(() => http.close());
  const client = new Client(
    { name: "draft-tus", version: "1.0.0" },
    { capabilities: DRAFT_CLIENT_CAPABILITY as never },
  );
  await client.connect(new StreamableHTTPClientTransport(http.mcpUrl));
  cleanups.push(() => client.close());
  return draftFiles(client as unknown as RequestingClient);
}

function tusEndpointOf(upload: Record<string, unknown>): string {
  expect(upload).toMatchObject({ transport: "https", method: "PUT", tus: { version: "1.0.0" } });
  return (upload.tus as { endpoint: string }).endpoint;
}

function create(endpoint: string, length: number, metadata = "filename YS5iaW4="): Promise<Response> {
  return fetch(endpoint, {
    method: "POST",
    headers: { ...TUS, "upload-length": String(length), "upload-metadata": metadata },
  });
}

function patch(url: string, offset: number, bytes: Uint8Array): Promise<Response> {
  return fetch(url, {
    method: "PATCH",
    headers: { ...TUS, "content-type": "application/offset+octet-stream", "upload-offset": String(offset) },
    body: new Uint8Array(bytes),
  });
}

async function reasonOf(response: Response): Promise<string | undefined> {
  return ((await response.json()) as { error: { reason?: string } }).error.reason;
}

describe("files extension over tus", () => {
  it("describes the tus endpoint next to the PUT, and commits the declared file in two PATCHes", async () => {
    const files = await filesClient();
    const bytes = randomBytes(100_000);
    const digest = { algorithm: "sha-256", value: sha256Hex(bytes) };
    const { file, upload } = await files.authorizeUpload({ name: "a.bin", size: bytes.length, digest });
    const created = await create(tusEndpointOf(upload), bytes.length);
    expect(created.status).toBe(201);
    const url = created.headers.get("location") as string;
    expect((await patch(url, 0, bytes.subarray(0, 40_000))).status).toBe(204);
    expect((await patch(url, 40_000, bytes.subarray(40_000))).status).toBe(204);
    expect((await files.completeUpload(file.uri)).file).toMatchObject({ size: bytes.length });
  });

  it("refuses a wrong Upload-Length before any byte, with the PUT's codes and reasons", async () => {
    const files = await filesClient();
    const { upload } = await files.authorizeUpload({ name: "a.bin", size: 100 });
    const endpoint = tusEndpointOf(upload);
    const over = await create(endpoint, 101);
    expect(over.status).toBe(413);
    expect(await reasonOf(over)).toBe("maxSizeExceeded");
    const under = await create(endpoint, 99);
    expect(under.status).toBe(400);
    expect(await reasonOf(under)).toBe("sizeMismatch");
    // A deferred length is held to the declared size when it is set.
    const deferred = await fetch(endpoint, {
      method: "POST",
      headers: { ...TUS, "upload-defer-length": "1" },
    });
    const url = deferred.headers.get("location") as string;
    const late = await fetch(url, {
      method: "PATCH",
      headers: {
        ...TUS,
        "content-type": "application/offset+octet-stream",
        "upload-offset": "0",
        "upload-length": "50",
      },
      body: new Uint8Array(50),
    });
    expect(late.status).toBe(400);
    expect(await reasonOf(late)).toBe("sizeMismatch");
  });

  it("refuses at commit a file whose sha-256 or media type is not the declared one: nothing stored, upload gone", async () => {
    const files = await filesClient();
    const bytes = randomBytes(5000);
    const digest = { algorithm: "sha-256", value: sha256Hex(randomBytes(5000)) };
    const wrongDigest = await files.authorizeUpload({ name: "a.bin", size: bytes.length, digest });
    const created = await create(tusEndpointOf(wrongDigest.upload), bytes.length);
    const url = created.headers.get("location") as string;
    const refused = await patch(url, 0, bytes);
    expect(refused.status).toBe(422);
    expect(await reasonOf(refused)).toBe("digestMismatch");
    expect((await fetch(url, { method: "HEAD", headers: TUS })).status).toBe(404);
    expect((await rpcError(files.completeUpload(wrongDigest.file.uri))).data).toMatchObject({
      reason: "fileNotFound",
    });

    const png = await files.authorizeUpload({ name: "a.png", mimeType: "image/png", size: bytes.length });
    const pdf = await create(
      tusEndpointOf(png.upload),
      bytes.length,
      "filename YS5wZGY=,filetype YXBwbGljYXRpb24vcGRm",
    );
    // Bytes that are no PNG (whatever the upload declares, the bytes are checked against the ticket's type).
    const wrongType = await patch(pdf.headers.get("location") as string, 0, bytes);
    expect(wrongType.status).toBe(415);
    expect(await reasonOf(wrongType)).toBe("mimeTypeNotAccepted");
    // The ticket was not used up: the declared file still goes through.
    const again = await create(
      tusEndpointOf(png.upload),
      bytes.length,
      "filename YS5wbmc=,filetype aW1hZ2UvcG5n",
    );
    expect(again.status).toBe(201);
    const png8 = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const pngBytes = Buffer.concat([png8, bytes.subarray(png8.length)]);
    expect((await patch(again.headers.get("location") as string, 0, pngBytes)).status).toBe(204);
    expect((await files.completeUpload(png.file.uri)).file).toMatchObject({ size: bytes.length });
  });
});
