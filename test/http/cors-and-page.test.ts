import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFileRoutes, type FileRoutesOptions } from "../../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { fsStore } from "../../src/storage/fs-store.js";
import { memoryState } from "../../src/storage/memory-state.js";
import type { FileStore, StateStore } from "../../src/storage/types.js";
import { uploadPageRenderer } from "../../src/ui/upload-page.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const BASE = "http://127.0.0.1:9";
const APP = "https://app.example.com";
const STRANGER = "https://evil.example.net";

let dir: string;
let store: FileStore;
let state: StateStore;
let clock: number;
let minter: SignedUrlMinter;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-cors-"));
  store = fsStore(join(dir, "store"), { sweepInterval: 0 });
  state = memoryState();
  clock = Date.UTC(2030, 0, 1);
  minter = new SignedUrlMinter({ secret: SECRET, baseUrl: BASE, state, now: () => clock });
});

afterEach(async () => {
  await store.close?.();
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

function routesWith(options: Partial<FileRoutesOptions>) {
  return createFileRoutes({ store, minter, state, maxBytes: 1024 * 1024, ...options });
}

async function ticket(claims: Record<string, string | number> = {}) {
  return minter.mint({
    scope: "s1",
    fileId: `t-${Math.random()}`,
    action: "upload",
    singleUse: true,
    claims,
  });
}

function form(name: string, text: string): FormData {
  const body = new FormData();
  body.append("file", new Blob([text], { type: "text/plain" }), name);
  return body;
}

describe("createFileRoutes: allowedOrigins (CORS)", () => {
  it("refuses bad allowedOrigins and uploadPage values with INVALID_OPTION naming the option", () => {
    for (const [allowedOrigins, ok] of [
      [["https://app.example.com/"], false],
      [["https://app.example.com/path"], false],
      [["app.example.com"], false],
      [["ftp://app.example.com"], false],
      ["everyone", false],
      [[42], false],
      [["https://app.example.com", "http://127.0.0.1:5173"], true],
      ["*", true],
      [() => true, true],
    ] as const) {
      const make = () => routesWith({ allowedOrigins: allowedOrigins as never });
      if (ok) expect(make).not.toThrow();
      else {
        expect(make).toThrow(
          expect.objectContaining({ code: "INVALID_OPTION", data: { option: "allowedOrigins" } }),
        );
      }
    }
    expect(() => routesWith({ uploadPage: "yes" as never })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION", data: { option: "uploadPage" } }),
    );
    // The page is injected: the old `true` / `{ title }` forms name the renderer to pass instead.
    for (const old of [true, { title: "Files" }]) {
      expect(() => routesWith({ uploadPage: old as never })).toThrow(
        expect.objectContaining({
          code: "INVALID_OPTION",
          data: { option: "uploadPage" },
          message: expect.stringContaining("uploadPageRenderer()"),
        }),
      );
    }
    expect(() => uploadPageRenderer({ title: "" })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION", data: { option: "uploadPage" } }),
    );
    // The page checks tickets without using them up: a verifier without consume() cannot serve it.
    const verifyOnly = { basePath: "/files", verify: minter.verify.bind(minter) };
    expect(() => createFileRoutes({ store, minter: verifyOnly, uploadPage: uploadPageRenderer() })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION", data: { option: "uploadPage" } }),
    );
  });

  it("answers an allowed origin's preflight with 204 and the methods, headers and max age", async () => {
    const routes = routesWith({ allowedOrigins: [APP] });
    const { url } = await ticket();
    const response = (await routes(
      new Request(url, {
        method: "OPTIONS",
        headers: {
          origin: APP,
          "access-control-request-method": "PUT",
          "access-control-request-headers": "content-type, x-content-sha256",
        },
      }),
    )) as Response;
    expect(response.status).toBe(204);
    expect(Object.fromEntries(response.headers)).toMatchObject({
      "access-control-allow-origin": APP,
      "access-control-allow-methods": "GET, HEAD, POST, PUT, PATCH, DELETE",
      "access-control-allow-headers":
        "Content-Type, Content-Disposition, X-Content-SHA256, Range, If-Range, If-None-Match, " +
        "Tus-Resumable, Upload-Length, Upload-Offset, Upload-Metadata, Upload-Defer-Length, Upload-Concat, " +
        "Upload-Checksum, X-HTTP-Method-Override, X-Requested-With",
      "access-control-max-age": "600",
      vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
    });
    expect(response.headers.has("access-control-allow-credentials")).toBe(false);
  });

  it("refuses another origin with 403 before the token is read: preflight, post, and the ticket stays good", async () => {
    const routes = routesWith({ allowedOrigins: [APP] });
    const minted = await ticket();
    const preflight = (await routes(
      new Request(minted.url, {
        method: "OPTIONS",
        headers: { origin: STRANGER, "access-control-request-method": "PUT" },
      }),
    )) as Response;
    expect(preflight.status).toBe(403);
    expect(preflight.headers.has("access-control-allow-origin")).toBe(false);
    const post = (await routes(
      new Request(minted.url, { method: "POST", headers: { origin: STRANGER }, body: form("x.txt", "x") }),
    )) as Response;
    expect(post.status).toBe(403);
    expect(((await post.json()) as { error: { code: string } }).error.code).toBe("FORBIDDEN");
    expect(post.headers.get("vary")).toBe("Origin");
    // Even a bad token gets 403, not 401: nothing about tokens is looked at.
    const bogus = (await routes(
      new Request(`${BASE}/files/upload/not-a-token`, { method: "POST", headers: { origin: STRANGER } }),
    )) as Response;
    expect(bogus.status).toBe(403);
    expect((await store.list("s1")).files).toEqual([]);
    // The rightful holder still uploads with the same ticket.
    const ok = (await routes(
      new Request(minted.url, { method: "POST", body: form("ok.txt", "ok") }),
    )) as Response;
    expect(ok.status).toBe(201);
  });

  it("gives an allowed origin's replies Allow-Origin, Expose-Headers and Vary, errors included", async () => {
    const routes = routesWith({ allowedOrigins: [APP] });
    const minted = await ticket();
    const upload = (await routes(
      new Request(minted.url, { method: "POST", headers: { origin: APP }, body: form("a.txt", "hello") }),
    )) as Response;
    expect(upload.status).toBe(201);
    expect(upload.headers.get("access-control-allow-origin")).toBe(APP);
    expect(upload.headers.get("access-control-expose-headers")).toBe(
      "ETag, Content-Range, Content-Disposition, Location, Tus-Resumable, Tus-Version, Tus-Extension, " +
        "Tus-Max-Size, Tus-Checksum-Algorithm, Upload-Offset, Upload-Length, Upload-Metadata, " +
        "Upload-Defer-Length, Upload-Concat, Upload-Expires, Upload-Handle, Upload-Sha256",
    );
    expect(upload.headers.get("vary")).toBe("Origin");
    const { files } = (await upload.json()) as { files: Array<{ id: string }> };
    const file = await store.head("s1", files[0]?.id as string);
    const { url } = await minter.downloadUrl(file as NonNullable<typeof file>);
    const ranged = (await routes(
      new Request(url, { headers: { origin: APP, range: "bytes=0-1" } }),
    )) as Response;
    expect(ranged.status).toBe(206);
    expect(await ranged.text()).toBe("he");
    expect(ranged.headers.get("access-control-allow-origin")).toBe(APP);
    // A used ticket's 410 is readable too, so the page can say what happened.
    const again = (await routes(
      new Request(minted.url, { method: "POST", headers: { origin: APP }, body: form("b.txt", "b") }),
    )) as Response;
    expect(again.status).toBe(410);
    expect(again.headers.get("access-control-allow-origin")).toBe(APP);
    // Same-origin and origin-less requests get no Allow-Origin, but still Vary: Origin.
    const local = (await routes(new Request(url, { headers: { range: "bytes=0-1" } }))) as Response;
    expect(local.headers.has("access-control-allow-origin")).toBe(false);
    expect(local.headers.get("vary")).toBe("Origin");
  });

  it('"*" answers Allow-Origin: * without Vary; a function decides per origin', async () => {
    const any = routesWith({ allowedOrigins: "*" });
    const minted = await ticket();
    const preflight = (await any(
      new Request(minted.url, {
        method: "OPTIONS",
        headers: { origin: STRANGER, "access-control-request-method": "POST" },
      }),
    )) as Response;
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    const upload = (await any(
      new Request(minted.url, { method: "POST", headers: { origin: "null" }, body: form("n.txt", "n") }),
    )) as Response;
    expect(upload.status).toBe(201);
    expect(upload.headers.get("access-control-allow-origin")).toBe("*");
    expect(upload.headers.has("vary")).toBe(false);

    const seen: string[] = [];
    const byFunction = routesWith({
      allowedOrigins: (origin) => {
        seen.push(origin);
        return origin.endsWith(".sandbox.example");
      },
    });
    const second = await ticket();
    const ok = (await byFunction(
      new Request(second.url, {
        method: "OPTIONS",
        headers: { origin: "https://a1.sandbox.example", "access-control-request-method": "POST" },
      }),
    )) as Response;
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://a1.sandbox.example");
    const no = (await byFunction(
      new Request(second.url, { method: "POST", headers: { origin: STRANGER }, body: form("x", "x") }),
    )) as Response;
    expect(no.status).toBe(403);
    expect(seen).toEqual(["https://a1.sandbox.example", STRANGER]);
  });

  it("treats the routes' own origin and Sec-Fetch-Site: same-origin as same-origin (a proxy may change the scheme)", async () => {
    const routes = routesWith({ allowedOrigins: [APP] });
    const own = await ticket();
    const fromOwn = (await routes(
      new Request(own.url, { method: "POST", headers: { origin: BASE }, body: form("own.txt", "own") }),
    )) as Response;
    expect(fromOwn.status).toBe(201);
    expect(fromOwn.headers.has("access-control-allow-origin")).toBe(false);
    const proxied = await ticket();
    const behindTls = (await routes(
      new Request(proxied.url, {
        method: "POST",
        headers: { origin: "https://127.0.0.1:9", "sec-fetch-site": "same-origin" },
        body: form("tls.txt", "tls"),
      }),
    )) as Response;
    expect(behindTls.status).toBe(201);
  });

  it("without allowedOrigins: no CORS headers, and a foreign Origin is refused before its token is read", async () => {
    const routes = routesWith({});
    const minted = await ticket();
    const preflight = (await routes(
      new Request(minted.url, {
        method: "OPTIONS",
        headers: { origin: APP, "access-control-request-method": "PUT" },
      }),
    )) as Response;
    expect(preflight.status).toBe(403);
    expect(preflight.headers.has("access-control-allow-origin")).toBe(false);
    const foreign = (await routes(
      new Request(minted.url, { method: "POST", headers: { origin: STRANGER }, body: form("x.txt", "x") }),
    )) as Response;
    expect(foreign.status).toBe(403);
    // The single-use ticket was not used up: the same upload without a foreign Origin (a program, or
    // the routes' own page) still works, with no CORS headers.
    const upload = (await routes(
      new Request(minted.url, { method: "POST", body: form("x.txt", "x") }),
    )) as Response;
    expect(upload.status).toBe(201);
    expect(upload.headers.has("access-control-allow-origin")).toBe(false);
    const plain = (await routes(new Request(minted.url, { method: "OPTIONS" }))) as Response;
    expect(plain.status).toBe(405);
  });

  it("with CORS on, OPTIONS without a preflight header and unknown methods still get 405 + Allow", async () => {
    const routes = routesWith({ allowedOrigins: [APP] });
    const minted = await ticket();
    const plain = (await routes(
      new Request(minted.url, { method: "OPTIONS", headers: { origin: APP } }),
    )) as Response;
    expect(plain.status).toBe(405);
    expect(plain.headers.get("allow")).toBe("POST, PUT");
    expect(plain.headers.get("access-control-allow-origin")).toBe(APP);
    const del = (await routes(new Request(minted.url, { method: "DELETE" }))) as Response;
    expect(del.status).toBe(405);
  });
});

describe("createFileRoutes: uploadPage", () => {
  const html = { accept: "text/html,application/xhtml+xml,*/*;q=0.8" };

  it("serves the page to a browser at the upload URL, without using the ticket up", async () => {
    const routes = routesWith({ uploadPage: uploadPageRenderer(), maxFiles: 4 });
    const minted = await ticket({ page_message: "The signed contract, please" });
    const page = (await routes(new Request(minted.url, { headers: html }))) as Response;
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("content-security-policy")).toMatch(/^default-src 'none'/);
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    const text = await page.text();
    expect(text).toContain("The signed contract, please");
    expect(text).toContain(`"uploadUrl":"./${minted.token}"`);
    expect(text).toContain('"maxFiles":4');
    const head = (await routes(new Request(minted.url, { method: "HEAD", headers: html }))) as Response;
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    // Viewing twice used nothing up: the upload works.
    const upload = (await routes(
      new Request(minted.url, { method: "POST", body: form("a.txt", "a") }),
    )) as Response;
    expect(upload.status).toBe(201);
    // Now it is used: the page says so.
    const used = (await routes(new Request(minted.url, { headers: html }))) as Response;
    expect(used.status).toBe(410);
    expect(await used.text()).toContain("already");
  });

  it("answers expired and invalid links with their pages; programs still get 405", async () => {
    const routes = routesWith({ uploadPage: uploadPageRenderer({ title: "Send us the files" }) });
    const minted = await ticket();
    expect(await (await routes(new Request(minted.url, { headers: html })))?.text()).toContain(
      "Send us the files",
    );
    const program = (await routes(
      new Request(minted.url, { headers: { accept: "application/json" } }),
    )) as Response;
    expect(program.status).toBe(405);
    const invalid = (await routes(
      new Request(`${BASE}/files/upload/not.a.token`, { headers: html }),
    )) as Response;
    expect(invalid.status).toBe(401);
    const malformed = (await routes(
      new Request(`${BASE}/files/upload/%3Cx%3E`, { headers: html }),
    )) as Response;
    expect(malformed.status).toBe(401);
    clock += 11 * 60 * 1000;
    const expired = (await routes(new Request(minted.url, { headers: html }))) as Response;
    expect(expired.status).toBe(410);
    expect(await expired.text()).toContain("expired");
  });

  it("is off by default: a browser GET gets 405", async () => {
    const routes = routesWith({});
    const minted = await ticket();
    const response = (await routes(new Request(minted.url, { headers: html }))) as Response;
    expect(response.status).toBe(405);
  });
});
