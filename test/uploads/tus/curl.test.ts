/**
 * The tus 1.0 protocol's own examples (tus.io/protocols/resumable-upload), sent with `curl`:
 * discovery, creation, HEAD, PATCH, creation-with-upload, checksum, termination, concatenation.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UploadHandleResolver } from "../../../src/uploads/upload-handle-resolver.js";
import { sha256 } from "../../support/helpers.js";
import { startTus, type TusHarness } from "./harness.js";

const run = promisify(execFile);
let harness: TusHarness;

beforeAll(async () => {
  harness = await startTus();
});
afterAll(async () => {
  await harness.close();
});

interface CurlReply {
  status: number;
  headers: Record<string, string>;
}

/** `curl -si -X {method} {url} -H … [--data-binary …]`, the reply's status line and headers. */
async function curl(method: string, url: string, headers: string[], body?: string): Promise<CurlReply> {
  const args = ["-s", "-i", "-X", method, url, ...headers.flatMap((header) => ["-H", header])];
  if (method === "HEAD") args.splice(2, 2, "-I");
  if (body !== undefined) args.push("--data-binary", body);
  const { stdout } = await run("curl", args);
  const [head = ""] = stdout.split("\r\n\r\n");
  const [statusLine = "", ...lines] = head.split("\r\n");
  const headers_: Record<string, string> = {};
  for (const line of lines) {
    const at = line.indexOf(":");
    headers_[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
  }
  return { status: Number(statusLine.split(" ")[1]), headers: headers_ };
}

const V = "Tus-Resumable: 1.0.0";
const OCTETS = "Content-Type: application/offset+octet-stream";

describe("the tus protocol's examples with curl", () => {
  it("discovery: OPTIONS answers 204 with the version, extensions and max size", async () => {
    const reply = await curl("OPTIONS", await harness.endpoint("scope-c"), []);
    expect(reply.status).toBe(204);
    expect(reply.headers["tus-resumable"]).toBe("1.0.0");
    expect(reply.headers["tus-version"]).toBe("1.0.0");
    expect(reply.headers["tus-extension"]).toContain("creation,creation-with-upload");
    expect(Number(reply.headers["tus-max-size"])).toBeGreaterThan(0);
  });

  it("creation, HEAD and two PATCHes (the core example: 70 bytes, then 30)", async () => {
    const endpoint = await harness.endpoint("scope-c");
    const created = await curl("POST", endpoint, [
      "Content-Length: 0",
      "Upload-Length: 100",
      V,
      "Upload-Metadata: filename d29ybGRfZG9taW5hdGlvbl9wbGFuLnBkZg==,is_confidential",
    ]);
    expect(created.status).toBe(201);
    const url = created.headers.location as string;
    expect(created.headers["upload-expires"]).toMatch(/GMT$/);
    const head = await curl("HEAD", url, [V]);
    expect(head.status).toBe(200);
    expect(head.headers["upload-offset"]).toBe("0");
    expect(head.headers["upload-length"]).toBe("100");
    expect(head.headers["upload-metadata"]).toBe(
      "filename d29ybGRfZG9taW5hdGlvbl9wbGFuLnBkZg==,is_confidential",
    );
    expect(head.headers["cache-control"]).toBe("no-store");
    const body = "x".repeat(70);
    const first = await curl("PATCH", url, [OCTETS, "Upload-Offset: 0", V], body);
    expect(first.status).toBe(204);
    expect(first.headers["upload-offset"]).toBe("70");
    const rest = "y".repeat(30);
    const second = await curl("PATCH", url, [OCTETS, "Upload-Offset: 70", V], rest);
    expect(second.status).toBe(204);
    expect(second.headers["upload-offset"]).toBe("100");
    const file = harness.stored.at(-1);
    expect(file?.name).toBe("world_domination_plan.pdf");
    // Named .pdf, but the bytes are text: an upload is stored under the type its bytes show.
    expect(file?.mimeType).toBe("text/plain");
    expect(file?.sha256).toBe(sha256(body + rest));
    // The committing answer names the file: its sha256, and a handle that resolves in the scope only.
    expect(second.headers["upload-sha256"]).toBe(sha256(body + rest));
    const handle = second.headers["upload-handle"] as string;
    expect(handle.startsWith("upload://sessions/")).toBe(true);
    expect(handle).not.toContain("scope-c");
    // The scope reference is the minter's keyed one, as in the single-request path's handles.
    expect(handle.slice("upload://sessions/".length).split("/")[0]).toBe(
      harness.minter.scopeRefs.of("scope-c"),
    );
    const resolver = new UploadHandleResolver({
      store: harness.store,
      state: harness.state,
      minter: harness.minter,
    });
    expect((await resolver.fileFor(handle, { scope: "scope-c" }))?.sha256).toBe(sha256(body + rest));
    expect(await resolver.fileFor(handle, { scope: "scope-d" })).toBeNull();
  });

  it("creation-with-upload, checksum and termination", async () => {
    const endpoint = await harness.endpoint("scope-c");
    const created = await curl("POST", endpoint, [V, "Upload-Length: 11", OCTETS], "hello");
    expect(created.status).toBe(201);
    expect(created.headers["upload-offset"]).toBe("5");
    const url = created.headers.location as string;
    // The spec's checksum example: sha1 of "hello" is not the sha1 of " world" → 460.
    const bad = await curl(
      "PATCH",
      url,
      [OCTETS, "Upload-Offset: 5", V, "Upload-Checksum: sha1 Kq5sNclPz7QV2+lfQIuc6R7oRu0="],
      " world",
    );
    expect(bad.status).toBe(460);
    const gone = await curl("DELETE", url, [V]);
    expect(gone.status).toBe(204);
    expect((await curl("HEAD", url, [V])).status).toBe(404);
  });

  it("concatenation: two partial uploads and a final one", async () => {
    // A reusable ticket, so HEAD still answers after the commit (a single-use one answers 410).
    const endpoint = await harness.endpoint("scope-c", { singleUse: false });
    const parts: string[] = [];
    for (const text of ["hello", " world"]) {
      const created = await curl("POST", endpoint, [
        V,
        "Upload-Concat: partial",
        `Upload-Length: ${text.length}`,
      ]);
      expect(created.status).toBe(201);
      const url = created.headers.location as string;
      expect((await curl("PATCH", url, [OCTETS, "Upload-Offset: 0", V], text)).status).toBe(204);
      parts.push(new URL(url).pathname);
    }
    const final = await curl("POST", endpoint, [V, `Upload-Concat: final;${parts.join(" ")}`]);
    expect(final.status).toBe(201);
    const head = await curl("HEAD", final.headers.location as string, [V]);
    expect(head.headers["upload-concat"]).toMatch(/^final;/);
    expect(head.headers["upload-offset"]).toBe("11");
    expect(harness.stored.at(-1)?.sha256).toBe(sha256("hello world"));
  });
});
