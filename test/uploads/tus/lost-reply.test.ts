/**
 * A lost final reply never loses an upload (issue 41 item 4). The reply to the `PATCH` that carries
 * the last byte is cut (a raw socket destroyed once the body went out; a TCP proxy in front of
 * `tus-js-client`): the owner's next `HEAD` shows `Upload-Offset == Upload-Length` with the
 * `Upload-Handle` and `Upload-Sha256` of the committed file, while nothing can reopen it. A `HEAD`
 * while the commit still runs never shows the full offset without the handle: it waits, or answers
 * 423 (which tus clients retry).
 */
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import * as tus from "tus-js-client";
import { afterEach, describe, expect, it } from "vitest";
import { fsStore } from "../../../src/storage/fs-store.js";
import type { FileStore, StagedFile } from "../../../src/storage/types.js";
import { parseUploadHandle } from "../../../src/uploads/upload-handle.js";
import { startCutProxy } from "./cut-proxy.js";
import { startTus, type TusHarness } from "./harness.js";
import { patchAndCut } from "./raw-socket.js";

const TUS = { "tus-resumable": "1.0.0" };
const OCTETS = { ...TUS, "content-type": "application/offset+octet-stream" };

let harness: TusHarness;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  await harness.close();
});

function hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

async function create(endpoint: string, length: number): Promise<string> {
  const response = await fetch(endpoint, {
    method: "POST",
    headers: { ...TUS, "upload-length": String(length) },
  });
  expect(response.status).toBe(201);
  return response.headers.get("location") as string;
}

/** When the last commit of a {@link slowCommits} store began and ended (epoch ms; 0: not yet). */
const commitWindow = { start: 0, end: 0 };

/**
 * True once a {@link slowCommits} store's commit began after this call: the server took every byte
 * of the `PATCH` (a connection cut before that may lose the body's tail instead of the reply).
 */
function committing(): () => boolean {
  commitWindow.start = 0;
  commitWindow.end = 0;
  return () => commitWindow.start > 0;
}

/** A store whose commits take `ms` longer (a slow bucket copy), so a HEAD can land mid-commit. */
function slowCommits(store: FileStore, ms: number): FileStore {
  const slow = (staged: StagedFile): StagedFile => ({
    ...staged,
    commit: async () => {
      commitWindow.start = Date.now();
      await new Promise((resolve) => setTimeout(resolve, ms));
      const file = await staged.commit();
      commitWindow.end = Date.now();
      return file;
    },
  });
  return {
    ...store,
    stage: async (source, options) => slow(await store.stage(source, options)),
    adopt: async (source, options) => {
      const staged = await store.adopt?.(source, options);
      return staged ? slow(staged) : null;
    },
  };
}

/**
 * HEADs `url` (every 20 ms, 10 s at most) until it answers the full offset; each answer is checked
 * on the way: a 200 or a retryable 423, and never the full offset without `Upload-Handle`.
 */
async function headUntilComplete(url: string, length: number, seen: string[] = []): Promise<Response> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const head = await fetch(url, { method: "HEAD", headers: TUS });
    const offset = head.headers.get("upload-offset");
    const handle = head.headers.get("upload-handle");
    seen.push(`${head.status}:${offset}:${handle ? "handle" : "-"}`);
    expect([200, 423]).toContain(head.status);
    if (head.status === 200 && offset === String(length)) {
      expect(handle).not.toBeNull();
      return head;
    }
    // On a timeout, say what the HEADs answered (status:offset:handle), first and last.
    expect(Date.now(), `HEADs: ${seen.slice(0, 3).join(" ")} … ${seen.slice(-3).join(" ")}`).toBeLessThan(
      deadline,
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("tus: a lost final reply never loses an upload", () => {
  it("raw socket: the reply to the last PATCH is cut; the owner's HEAD shows the full offset and the handle", async () => {
    const { mkdtemp } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const root = await mkdtemp(join(tmpdir(), "mfb-tus-cut-"));
    harness = await startTus({ store: slowCommits(fsStore(root, { sweepInterval: 0 }), 0) });
    const bytes = randomBytes(3 * 1024 * 1024 + 11);
    const endpoint = await harness.endpoint("scope-a", { fileId: "ticket-lost" });
    const url = await create(endpoint, bytes.length);
    // The connection goes once the server took every byte (its commit began), before any reply.
    await patchAndCut(url, 0, bytes.length, bytes, committing());
    // Like a tus client's retry: HEAD until the offset is the length (the commit may still run); a
    // full offset always comes with the handle.
    const head = await headUntilComplete(url, bytes.length);
    expect(head.status).toBe(200);
    expect(head.headers.get("upload-offset")).toBe(String(bytes.length));
    expect(head.headers.get("upload-length")).toBe(String(bytes.length));
    expect(head.headers.get("upload-sha256")).toBe(hex(bytes));
    const handle = parseUploadHandle(head.headers.get("upload-handle") as string);
    expect(handle?.id).toBe("ticket-lost");
    expect(harness.stored).toHaveLength(1);
    expect(harness.stored[0]?.sha256).toBe(hex(bytes));
    // Nothing reopens or changes it: more bytes, a zero-byte PATCH, termination all refused.
    const more = await fetch(url, {
      method: "PATCH",
      headers: { ...OCTETS, "upload-offset": String(bytes.length) },
      body: "x",
    });
    expect(more.status).toBe(410);
    expect((await fetch(url, { method: "DELETE", headers: TUS })).status).toBe(410);
    // Another scope's (and another ticket's) request answers exactly like an unknown upload.
    const id = url.slice(url.lastIndexOf("/") + 1);
    const other = await harness.endpoint("scope-b");
    const foreign = await fetch(`${other}/${id}`, { method: "HEAD", headers: TUS });
    const unknown = await fetch(`${other}/${"x".repeat(22)}`, { method: "HEAD", headers: TUS });
    expect(foreign.status).toBe(unknown.status);
    expect(foreign.status).toBe(404);
    expect(harness.stored).toHaveLength(1);
    expect(await harness.stagingFiles()).toEqual([]);
  });

  it("a HEAD while the commit runs never shows the full offset without the handle", async () => {
    const { mkdtemp } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const root = await mkdtemp(join(tmpdir(), "mfb-tus-slow-"));
    harness = await startTus({ store: slowCommits(fsStore(root, { sweepInterval: 0 }), 1500) });
    const bytes = randomBytes(256 * 1024 + 3);
    const url = await create(await harness.endpoint("scope-a"), bytes.length);
    commitWindow.start = 0;
    commitWindow.end = 0;
    // The socket goes as soon as the kernel took the body (256 KiB: a few socket reads). Waiting
    // for the commit here instead failed once in CI: the server had staged nothing after 10 s with
    // the connection held open (not reproduced; see the round's note).
    await patchAndCut(url, 0, bytes.length, bytes);
    const seen: string[] = [];
    const firstHead = Date.now();
    const head = await headUntilComplete(url, bytes.length, seen);
    expect(head.headers.get("upload-sha256")).toBe(hex(bytes));
    // The HEADs began before the commit ended (one landed mid-commit: it waited, or answered 423),
    // and none showed the full offset without the handle.
    expect(commitWindow.end).toBeGreaterThan(firstHead);
    expect(seen.filter((entry) => entry.endsWith(`:${bytes.length}:-`))).toEqual([]);
  });

  it("tus-js-client with the connection killed after each upload's last byte: every upload succeeds with its handle", async () => {
    harness = await startTus();
    const sizes = [1, 1024, 256 * 1024 + 1, 2 * 1024 * 1024 + 5, 1024 * 1024];
    const proxy = await startCutProxy(new URL(harness.origin), sizes);
    closers.push(() => proxy.close());
    for (const [index, size] of sizes.entries()) {
      const bytes = randomBytes(size);
      const ticket = `ticket-drop-${index}`;
      const endpoint = (await harness.endpoint("scope-a", { fileId: ticket })).replace(
        harness.origin,
        proxy.origin,
      );
      const { handle, sha256 } = await new Promise<{ handle: string | null; sha256: string | null }>(
        (resolve, reject) => {
          const run = new tus.Upload(bytes, {
            endpoint,
            retryDelays: [50, 100, 200, 400, 800, 1600],
            ...(index === 4 ? { chunkSize: 256 * 1024 } : {}),
            onSuccess: ({ lastResponse }) =>
              resolve({
                handle: lastResponse.getHeader("upload-handle") ?? null,
                sha256: lastResponse.getHeader("upload-sha256") ?? null,
              }),
            onError: reject,
          });
          run.start();
        },
      );
      expect(handle, `upload ${index}`).not.toBeNull();
      expect(parseUploadHandle(handle as string)?.id).toBe(ticket);
      expect(sha256).toBe(hex(bytes));
    }
    expect(proxy.cuts()).toBe(sizes.length);
    expect(harness.stored.map((file) => file.size)).toEqual(sizes);
  }, 60_000);
});
