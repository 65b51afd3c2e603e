import { randomBytes } from "node:crypto";
import { type ClientRequest, request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { memoryState } from "../../src/storage/memory-state.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import type { FileStore, PutOptions, PutSource, StagedFile, StateStore } from "../../src/storage/types.js";
import { close } from "../http/server-helpers.js";
import { type RoutesServer, startRoutes } from "./http-attack-helpers.js";

// Attack: one single-use upload ticket, many uploads at once. Before the fix every one of them staged
// up to `maxBytes` before one won at commit (50 parallel uploads = 50 × maxBytes of staging). Now the
// ticket is claimed when an upload starts: the others get 409 UPLOAD_IN_PROGRESS before a byte is
// staged, and a failed upload releases the claim so the ticket can be used again.

const running: RoutesServer[] = [];

afterEach(async () => {
  for (const server of running.splice(0)) await close(server.server);
});

/** A store that counts how many uploads started staging. */
function countingStore(): { store: FileStore; stages: () => number } {
  const inner = memoryStore({ sweepInterval: 0 });
  let count = 0;
  const store: FileStore = {
    ...inner,
    driver: inner.driver,
    stage(source: PutSource, options: PutOptions): Promise<StagedFile> {
      count++;
      return inner.stage(source, options);
    },
  };
  return { store, stages: () => count };
}

async function start(
  store: FileStore,
  state?: StateStore | undefined,
  noState = false,
): Promise<RoutesServer> {
  const server = await startRoutes(
    noState ? { store, state: undefined } : { store, ...(state ? { state } : {}) },
  );
  running.push(server);
  return server;
}

async function code(response: Response): Promise<string> {
  return ((await response.json()) as { error: { code: string } }).error.code;
}

/** Starts an upload that sends `first` bytes and then waits; `finish()` sends the rest. */
function openUpload(
  url: string,
  total: number,
  first: number,
): { req: ClientRequest; finish: () => Promise<number> } {
  const req = httpRequest(url, { method: "POST", headers: { "content-length": total } });
  const status = new Promise<number>((resolve, reject) => {
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
  });
  status.catch(() => {});
  req.write(randomBytes(first));
  return {
    req,
    finish: async () => {
      req.end(randomBytes(total - first));
      return status;
    },
  };
}

async function until(condition: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("a single-use upload ticket stages one upload at a time", () => {
  it("50 parallel uploads on one ticket: one is stored, the rest are refused before staging", async () => {
    const { store, stages } = countingStore();
    const server = await start(store);
    const { url } = await server.minter.mint({
      scope: "s1",
      fileId: "t1",
      action: "upload",
      singleUse: true,
    });
    const body = randomBytes(256 * 1024);
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => fetch(`${url}?filename=f.bin`, { method: "POST", body })),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(
      statuses.filter((status) => status !== 201).every((status) => status === 409 || status === 410),
    ).toBe(true);
    expect(statuses).toContain(409);
    const refused = responses.filter((response) => response.status === 409);
    expect(await code(refused[0] as Response)).toBe("UPLOAD_IN_PROGRESS");
    expect(stages()).toBe(1);
    expect((await store.list("s1")).files).toHaveLength(1);
  });

  it("a second upload while the first one runs gets 409 at once; after the first, 410", async () => {
    const { store, stages } = countingStore();
    const server = await start(store);
    const { url } = await server.minter.mint({
      scope: "s1",
      fileId: "t1",
      action: "upload",
      singleUse: true,
    });
    const first = openUpload(`${url}?filename=first.bin`, 128 * 1024, 16 * 1024);
    await until(() => stages() === 1);
    const started = Date.now();
    const second = await fetch(`${url}?filename=second.bin`, {
      method: "POST",
      body: randomBytes(64 * 1024),
    });
    expect(second.status).toBe(409);
    expect(await code(second)).toBe("UPLOAD_IN_PROGRESS");
    expect(Date.now() - started).toBeLessThan(1000);
    expect(stages()).toBe(1);
    expect(await first.finish()).toBe(201);
    const third = await fetch(`${url}?filename=third.bin`, { method: "POST", body: "late" });
    expect(third.status).toBe(410);
    expect(await code(third)).toBe("TOKEN_ALREADY_USED");
    expect((await store.list("s1")).files.map((file) => file.name)).toEqual(["first.bin"]);
  });

  it("a failed upload (413, 422, aborted) releases the ticket; the next one succeeds", async () => {
    const { store } = countingStore();
    const server = await start(store);
    const { url } = await server.minter.mint({
      scope: "s1",
      fileId: "t1",
      action: "upload",
      singleUse: true,
      claims: { max_bytes: 64 * 1024 },
    });
    // 413: streamed (no length), goes over the ticket's cap mid-way.
    const tooLarge = await fetch(`${url}?filename=big.bin`, {
      method: "POST",
      body: new Blob([randomBytes(200 * 1024)]).stream(),
      duplex: "half",
    } as RequestInit);
    expect(tooLarge.status).toBe(413);
    // 422: the declared digest does not match.
    const mismatch = await fetch(`${url}?filename=x.bin`, {
      method: "POST",
      headers: { "x-content-sha256": "0".repeat(64) },
      body: "content",
    });
    expect(mismatch.status).toBe(422);
    // Aborted: the client goes away mid-body.
    const aborted = openUpload(`${url}?filename=gone.bin`, 64 * 1024, 8 * 1024);
    aborted.req.on("error", () => {});
    await new Promise((resolve) => setTimeout(resolve, 50));
    aborted.req.destroy();
    // The server notices the abort and releases the claim; until then a retry gets 409.
    let retry: Response | undefined;
    for (let attempt = 0; attempt < 100; attempt++) {
      retry = await fetch(`${url}?filename=ok.bin`, { method: "POST", body: "finally" });
      if (retry.status !== 409) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(retry?.status).toBe(201);
    expect((await store.list("s1")).files.map((file) => file.name)).toEqual(["ok.bin"]);
  });

  it("two replicas sharing one state: an upload on one makes the other answer 409", async () => {
    const { store, stages } = countingStore();
    const state = memoryState();
    const a = await start(store, state);
    const b = await start(store, state);
    const { url } = await a.minter.mint({ scope: "s1", fileId: "t1", action: "upload", singleUse: true });
    const onB = url.replace(a.origin, b.origin);
    const first = openUpload(`${url}?filename=a.bin`, 64 * 1024, 8 * 1024);
    await until(() => stages() === 1);
    const second = await fetch(`${onB}?filename=b.bin`, { method: "POST", body: randomBytes(32 * 1024) });
    expect(second.status).toBe(409);
    expect(stages()).toBe(1);
    expect(await first.finish()).toBe(201);
    expect((await fetch(`${onB}?filename=b.bin`, { method: "POST", body: "x" })).status).toBe(410);
  });

  it("without a state store the claim holds within the process", async () => {
    const { store, stages } = countingStore();
    const server = await start(store, undefined, true);
    const { url } = await server.minter.mint({
      scope: "s1",
      fileId: "t1",
      action: "upload",
      singleUse: true,
    });
    const first = openUpload(`${url}?filename=a.bin`, 64 * 1024, 8 * 1024);
    await until(() => stages() === 1);
    const second = await fetch(`${url}?filename=b.bin`, { method: "POST", body: "x" });
    expect(second.status).toBe(409);
    expect(await first.finish()).toBe(201);
  });

  it("a ticket that is not single-use may carry parallel uploads", async () => {
    const { store, stages } = countingStore();
    const server = await start(store);
    const { url } = await server.minter.mint({ scope: "s1", fileId: "t1", action: "upload" });
    const first = openUpload(`${url}?filename=a.bin`, 64 * 1024, 8 * 1024);
    await until(() => stages() === 1);
    const second = await fetch(`${url}?filename=b.bin`, { method: "POST", body: "x" });
    expect(second.status).toBe(201);
    expect(await first.finish()).toBe(201);
  });
});
