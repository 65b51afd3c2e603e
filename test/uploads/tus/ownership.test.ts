/**
 * The ownership rules of tus uploads: another ticket or scope cannot see, resume or terminate an
 * upload (the same 404 as an unknown one); one writer at a time (a second PATCH at the same offset
 * gets 423, nothing corrupted); a committed upload never reopens; an expired one is gone (410) and
 * its staging swept.
 */
import { createHash, randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { fsTusStaging } from "../../../src/uploads/tus/fs-staging.js";
import { sha256, waitUntil } from "../../support/helpers.js";
import { startTus, type TusHarness } from "./harness.js";

const TUS = { "tus-resumable": "1.0.0" };
const OCTETS = { ...TUS, "content-type": "application/offset+octet-stream" };

let harness: TusHarness;
afterEach(async () => {
  await harness.close();
});

async function create(endpoint: string, length: number): Promise<string> {
  const response = await fetch(endpoint, {
    method: "POST",
    headers: { ...TUS, "upload-length": String(length), "upload-metadata": `filename ${btoa("a.bin")}` },
  });
  expect(response.status).toBe(201);
  return response.headers.get("location") as string;
}

function patch(url: string, offset: number, body: BodyInit): Promise<Response> {
  return fetch(url, {
    method: "PATCH",
    headers: { ...OCTETS, "upload-offset": String(offset) },
    body,
    duplex: "half",
  } as RequestInit);
}

describe("tus ownership", () => {
  it("another scope's or ticket's request cannot see, resume or terminate an upload: 404 like an unknown id", async () => {
    harness = await startTus();
    const endpointA = await harness.endpoint("scope-a");
    const endpointB = await harness.endpoint("scope-b");
    const endpointA2 = await harness.endpoint("scope-a");
    const url = await create(endpointA, 10);
    const id = url.slice(url.lastIndexOf("/") + 1);
    const unknown = `${endpointB}/${"x".repeat(22)}`;
    for (const foreign of [`${endpointB}/${id}`, `${endpointA2}/${id}`]) {
      const head = await fetch(foreign, { method: "HEAD", headers: TUS });
      const write = await patch(foreign, 0, "abc");
      const remove = await fetch(foreign, { method: "DELETE", headers: TUS });
      const asUnknown = await fetch(unknown, { method: "DELETE", headers: TUS });
      expect([head.status, write.status, remove.status]).toEqual([404, 404, 404]);
      expect(await remove.json()).toEqual(await asUnknown.json());
    }
    const own = await fetch(url, { method: "HEAD", headers: TUS });
    expect(own.status).toBe(200);
    expect(own.headers.get("upload-offset")).toBe("0");
    expect(url).not.toContain("scope-a");
  });

  it("a second PATCH at the same offset while one runs gets 423; exactly one wins and the bytes are exact", async () => {
    harness = await startTus();
    const first = randomBytes(6 * 1024 * 1024);
    const url = await create(await harness.endpoint("scope-a"), first.length);
    let push!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (controller) => (push = controller) });
    const running = patch(url, 0, body);
    push.enqueue(first.subarray(0, 5 * 1024 * 1024));
    // The progress hook hears of the first 4 MiB once they passed the writer, lock held.
    await waitUntil(() => harness.progress.length > 0);
    const second = await patch(url, 0, randomBytes(1024));
    expect(second.status).toBe(423);
    push.enqueue(first.subarray(5 * 1024 * 1024));
    push.close();
    expect((await running).status).toBe(204);
    expect(harness.stored).toHaveLength(1);
    expect(harness.stored[0]?.sha256).toBe(sha256(first));
  });

  it("a committed upload never reopens: PATCH, DELETE and a new creation answer 410; its owner's HEAD shows it complete", async () => {
    harness = await startTus();
    const endpoint = await harness.endpoint("scope-a");
    const url = await create(endpoint, 3);
    expect((await patch(url, 0, "abc")).status).toBe(204);
    expect(harness.stored).toHaveLength(1);
    expect((await patch(url, 3, "")).status).toBe(410);
    // The ticket is used up, but the token that completed the upload still reads its outcome.
    const head = await fetch(url, { method: "HEAD", headers: TUS });
    expect(head.status).toBe(200);
    expect(head.headers.get("upload-offset")).toBe("3");
    expect(head.headers.get("upload-sha256")).toBe(sha256(Buffer.from("abc")));
    expect((await fetch(url, { method: "DELETE", headers: TUS })).status).toBe(410);
    const again = await fetch(endpoint, { method: "POST", headers: { ...TUS, "upload-length": "3" } });
    expect(again.status).toBe(410);
    expect(await harness.stagingFiles()).toEqual([]);
  });

  it("a reusable ticket's committed upload still refuses more bytes and a second file (one ticket, one file)", async () => {
    harness = await startTus();
    const endpoint = await harness.endpoint("scope-a", { singleUse: false });
    const url = await create(endpoint, 3);
    expect((await patch(url, 0, "abc")).status).toBe(204);
    expect((await patch(url, 3, "d")).status).toBe(410);
    const head = await fetch(url, { method: "HEAD", headers: TUS });
    expect(head.headers.get("upload-offset")).toBe("3");
    const again = await fetch(endpoint, { method: "POST", headers: { ...TUS, "upload-length": "3" } });
    expect(again.status).toBe(410);
    expect(harness.stored).toHaveLength(1);
  });

  it("an expired upload answers 410 and its staging is swept; nothing is stored", async () => {
    let now = Date.UTC(2030, 0, 1);
    harness = await startTus({}, () => now);
    const endpoint = await harness.endpoint("scope-a", { ttl: "10m" });
    const url = await create(endpoint, 10);
    expect((await patch(url, 0, "abcde")).status).toBe(204);
    expect(await harness.stagingFiles()).toHaveLength(2);
    const head = await fetch(url, { method: "HEAD", headers: TUS });
    expect(head.headers.get("upload-expires")).toBe(new Date(now + 600_000).toUTCString());
    now += 601_000;
    expect((await fetch(url, { method: "HEAD", headers: TUS })).status).toBe(410);
    expect((await patch(url, 5, "fghij")).status).toBe(410);
    expect(await fsTusStaging(harness.stagingDir).sweep(now)).toBe(1);
    expect(await harness.stagingFiles()).toEqual([]);
    expect(harness.stored).toHaveLength(0);
  });

  it("a checksum covers the body: a matching sha256 is accepted", async () => {
    harness = await startTus();
    const bytes = randomBytes(4000);
    const url = await create(await harness.endpoint("scope-a"), bytes.length);
    const digest = createHash("sha256").update(bytes).digest("base64");
    const response = await fetch(url, {
      method: "PATCH",
      headers: { ...OCTETS, "upload-offset": "0", "upload-checksum": `sha256 ${digest}` },
      body: bytes,
    });
    expect(response.status).toBe(204);
    expect(harness.stored[0]?.sha256).toBe(sha256(bytes));
  });
});
