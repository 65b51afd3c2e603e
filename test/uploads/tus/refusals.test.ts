/**
 * The refusals of the tus endpoint, each request sent the same way to ours and to @tus/server 2.4.5
 * with @tus/file-store 2.1.1: the statuses agree where both implement the rule; where they differ
 * (a wrong PATCH content type: the spec's 415 against @tus/server's 400; checksum: @tus/server has no
 * checksum extension; a second concurrent PATCH) the test pins both answers, as the docs list them.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileStore } from "@tus/file-store";
import { Server as TusServer } from "@tus/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { close, listen } from "../../http/server-helpers.js";
import { startTus, type TusHarness } from "./harness.js";

const MAX = 1024 * 1024;
const TUS = { "tus-resumable": "1.0.0" };
const OCTETS = { ...TUS, "content-type": "application/offset+octet-stream" };

let ours: TusHarness;
let theirs: { server: Server; origin: string; dir: string };

beforeAll(async () => {
  ours = await startTus({ maxBytes: MAX });
  const dir = await mkdtemp(join(tmpdir(), "mfb-tus-ref-"));
  const tus = new TusServer({ path: "/files", datastore: new FileStore({ directory: dir }), maxSize: MAX });
  const server = createServer((req, res) => void tus.handle(req, res));
  theirs = { server, origin: await listen(server), dir };
});
afterAll(async () => {
  await ours.close();
  await close(theirs.server);
  await rm(theirs.dir, { recursive: true, force: true, maxRetries: 3 });
});

/** Both endpoints, each a fresh creation URL. */
async function endpoints(): Promise<Array<{ name: string; endpoint: string }>> {
  return [
    { name: "ours", endpoint: await ours.endpoint("scope-r", { maxBytes: MAX }) },
    { name: "@tus/server", endpoint: `${theirs.origin}/files` },
  ];
}

async function create(endpoint: string, length: number): Promise<string> {
  const response = await fetch(endpoint, {
    method: "POST",
    headers: { ...TUS, "upload-length": String(length) },
  });
  expect(response.status).toBe(201);
  return new URL(response.headers.get("location") as string, endpoint).href;
}

/** Runs `request` against both and answers their statuses by name. */
async function statuses(request: (endpoint: string) => Promise<Response>): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const { name, endpoint } of await endpoints()) {
    const response = await request(endpoint);
    await response.arrayBuffer().catch(() => undefined);
    out[name] = response.status;
  }
  return out;
}

describe("tus refusals, ours next to @tus/server", () => {
  it("missing Tus-Resumable: 412 from both", async () => {
    const result = await statuses((endpoint) =>
      fetch(endpoint, { method: "POST", headers: { "upload-length": "10" } }),
    );
    expect(result).toEqual({ ours: 412, "@tus/server": 412 });
  });

  it("Upload-Length over the configured size: 413 from both", async () => {
    const result = await statuses((endpoint) =>
      fetch(endpoint, { method: "POST", headers: { ...TUS, "upload-length": String(MAX + 1) } }),
    );
    expect(result).toEqual({ ours: 413, "@tus/server": 413 });
  });

  it("a PATCH at the wrong offset: 409 from both, nothing written", async () => {
    const result = await statuses(async (endpoint) => {
      const url = await create(endpoint, 10);
      return fetch(url, { method: "PATCH", headers: { ...OCTETS, "upload-offset": "3" }, body: "abcdefg" });
    });
    expect(result).toEqual({ ours: 409, "@tus/server": 409 });
  });

  it("a PATCH body past the declared length: 413 from both", async () => {
    const result = await statuses(async (endpoint) => {
      const url = await create(endpoint, 4);
      return fetch(url, { method: "PATCH", headers: { ...OCTETS, "upload-offset": "0" }, body: "abcdefgh" });
    });
    expect(result).toEqual({ ours: 413, "@tus/server": 413 });
  });

  it("a terminated upload: 204 then 404 from both", async () => {
    const deleted: Record<string, number> = {};
    const result = await statuses(async (endpoint) => {
      const url = await create(endpoint, 10);
      const gone = await fetch(url, { method: "DELETE", headers: TUS });
      deleted[endpoint.includes("/files/tus/") ? "ours" : "@tus/server"] = gone.status;
      return fetch(url, { method: "PATCH", headers: { ...OCTETS, "upload-offset": "0" }, body: "abc" });
    });
    expect(deleted).toEqual({ ours: 204, "@tus/server": 204 });
    expect(result).toEqual({ ours: 404, "@tus/server": 404 });
  });

  it("a wrong PATCH content type: the spec's 415 from ours, 400 from @tus/server", async () => {
    const result = await statuses(async (endpoint) => {
      const url = await create(endpoint, 10);
      return fetch(url, {
        method: "PATCH",
        headers: { ...TUS, "content-type": "text/plain", "upload-offset": "0" },
        body: "abc",
      });
    });
    expect(result).toEqual({ ours: 415, "@tus/server": 400 });
  });

  it("a checksum mismatch: 460 from ours and the bytes cut off; @tus/server has no checksum (204)", async () => {
    const bytes = randomBytes(1000);
    const wrong = createHash("sha256").update("not these bytes").digest("base64");
    const urls: Record<string, string> = {};
    const result = await statuses(async (endpoint) => {
      const url = await create(endpoint, 2000);
      urls[endpoint.includes("/files/tus/") ? "ours" : "@tus/server"] = url;
      return fetch(url, {
        method: "PATCH",
        headers: { ...OCTETS, "upload-offset": "0", "upload-checksum": `sha256 ${wrong}` },
        body: bytes,
      });
    });
    expect(result).toEqual({ ours: 460, "@tus/server": 204 });
    const head = await fetch(urls.ours as string, { method: "HEAD", headers: TUS });
    expect(head.headers.get("upload-offset")).toBe("0");
    const right = createHash("sha1").update(bytes).digest("base64");
    const retry = await fetch(urls.ours as string, {
      method: "PATCH",
      headers: { ...OCTETS, "upload-offset": "0", "upload-checksum": `sha1 ${right}` },
      body: bytes,
    });
    expect(retry.status).toBe(204);
    expect(retry.headers.get("upload-offset")).toBe("1000");
  });

  it("OPTIONS discovery: version, extensions, max size, checksum algorithms", async () => {
    const endpoint = await ours.endpoint("scope-r");
    const response = await fetch(endpoint, { method: "OPTIONS" });
    expect(response.status).toBe(204);
    expect(response.headers.get("tus-version")).toBe("1.0.0");
    expect(response.headers.get("tus-extension")?.split(",")).toEqual([
      "creation",
      "creation-with-upload",
      "creation-defer-length",
      "expiration",
      "termination",
      "checksum",
      "concatenation",
    ]);
    expect(response.headers.get("tus-max-size")).toBe(String(MAX));
    expect(response.headers.get("tus-checksum-algorithm")).toBe("sha256,sha1");
  });
});
