/**
 * Issue 41 item 2, the upload routes: the stored media type is what the bytes show where the check
 * can tell, not only the client's `Content-Type`. Text sent as `image/png` is stored as
 * `text/plain`; a PNG sent as `application/octet-stream` is stored as `image/png`. The first bytes
 * are taken from the stream as it passes (a body over the small-body limit streams), for the raw
 * body and the multipart form, on the memory and the fs store.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { createFileRoutes, type FileRoutes } from "../../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { fsStore } from "../../src/storage/fs-store.js";
import { memoryState } from "../../src/storage/memory-state.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import type { FileStore } from "../../src/storage/types.js";
import { UploadHandleResolver } from "../../src/uploads/upload-handle-resolver.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const SCOPE = "sniffed-type";
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);
const TEXT = Buffer.from("plain text, not an image.\n".repeat(40));
/** Over the routes' small-body limit, so the body streams into the store. */
const BIG_TEXT = Buffer.from("plain text, not an image.\n".repeat(100_000));

let dir: string;
let store: FileStore;
let routes: FileRoutes;
let uploads: UploadHandleResolver;

describe.each(["memory", "fs"] as const)("%s store", (kind) => {
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "mfb-sniffed-"));
    store = kind === "memory" ? memoryStore() : fsStore(join(dir, "store"), { sweepInterval: 0 });
    const state = memoryState();
    const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: "http://127.0.0.1:9", state });
    routes = createFileRoutes({ store, minter, state });
    const bridge = new FileBridge({ tmpDir: join(dir, "bridge") });
    uploads = new UploadHandleResolver({ store, minter, state, bridge, tmpDir: join(dir, "tmp") });
  });

  afterEach(async () => {
    await store.close?.();
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  });

  async function stored(reply: Response): Promise<string | undefined> {
    expect(reply.status, await reply.clone().text()).toBe(201);
    const body = (await reply.json()) as { files: Array<{ id: string }> };
    const id = body.files[0]?.id as string;
    return (await store.head(SCOPE, id))?.mimeType;
  }

  async function raw(bytes: Buffer, type: string): Promise<string | undefined> {
    const ticket = await uploads.createTicket(SCOPE);
    return stored(
      (await routes(
        new Request(`${ticket.upload_url}?filename=picture.png`, {
          method: "PUT",
          body: new Uint8Array(bytes),
          headers: { "content-type": type },
        }),
      )) as Response,
    );
  }

  async function form(bytes: Buffer, type: string): Promise<string | undefined> {
    const ticket = await uploads.createTicket(SCOPE);
    const body = new FormData();
    body.append(ticket.field, new Blob([new Uint8Array(bytes)], { type }), "picture.png");
    return stored((await routes(new Request(ticket.upload_url, { method: "POST", body }))) as Response);
  }

  it("raw body: text sent as image/png is stored as text/plain", async () => {
    expect(await raw(TEXT, "image/png")).toBe("text/plain");
  });

  it("raw body, streamed: text sent as image/png is stored as text/plain", async () => {
    expect(await raw(BIG_TEXT, "image/png")).toBe("text/plain");
  });

  it("multipart: text sent as image/png is stored as text/plain", async () => {
    expect(await form(TEXT, "image/png")).toBe("text/plain");
  });

  it("keeps what the bytes agree with, and names what a generic type hid", async () => {
    expect(await raw(PNG, "image/png")).toBe("image/png");
    expect(await raw(PNG, "application/octet-stream")).toBe("image/png");
    expect(await raw(TEXT, "text/csv; charset=utf-8")).toBe("text/csv; charset=utf-8");
    expect(await form(PNG, "image/png")).toBe("image/png");
  });

  it("a store.put of the server's own keeps the declared type (only uploads are checked)", async () => {
    const file = await store.put(TEXT, { scope: SCOPE, name: "x.png", mimeType: "image/png" });
    expect(file.mimeType).toBe("image/png");
  });
});

describe("tus (fs staging, adopted at commit)", () => {
  it("text declared image/png is stored as text/plain; a PNG declared octet-stream as image/png", async () => {
    const { startTus } = await import("./tus/harness.js");
    const harness = await startTus();
    try {
      const upload = async (bytes: Buffer, type: string) => {
        const endpoint = await harness.endpoint("tus-scope");
        const meta = `filename ${Buffer.from("picture.png").toString("base64")},filetype ${Buffer.from(type).toString("base64")}`;
        const created = await fetch(endpoint, {
          method: "POST",
          headers: {
            "tus-resumable": "1.0.0",
            "upload-length": String(bytes.length),
            "upload-metadata": meta,
          },
        });
        expect(created.status).toBe(201);
        const patched = await fetch(created.headers.get("location") as string, {
          method: "PATCH",
          headers: {
            "tus-resumable": "1.0.0",
            "upload-offset": "0",
            "content-type": "application/offset+octet-stream",
          },
          body: new Uint8Array(bytes),
        });
        expect(patched.status).toBe(204);
        return harness.stored.at(-1)?.mimeType;
      };
      expect(await upload(BIG_TEXT, "image/png")).toBe("text/plain");
      expect(await upload(PNG, "application/octet-stream")).toBe("image/png");
    } finally {
      await harness.close();
    }
  });
});
