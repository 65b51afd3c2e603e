import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultScope, scopeRef } from "../../src/scope/scope.js";
import { HELLO_TEXT, PIXEL_PNG } from "../fixtures/registry-server.js";
import { inspectJson, runInspector } from "../support/inspector.js";
import { type RegistryHttpServer, startRegistryHttpServer } from "./registry-http-server.js";

/** URIs carry a scope's reference, never the scope itself. */
const up = (scope: string, path: string) => `file://uploads/${scopeRef(scope)}/${path}`;
let home: string;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "registry-inspector-"));
});

afterAll(async () => {
  await rm(home, { recursive: true, force: true, maxRetries: 3 });
});

/** Runs `mcp-inspector --cli` with the given arguments and parses its JSON output. */
const cli = async (args: string[]) => (await inspectJson(args, { home, timeout: 90_000 })).json;

interface Listed {
  uri: string;
  name: string;
  title?: string;
  mimeType?: string;
  size?: number;
  annotations?: { lastModified?: string };
}

/** The CLI's runs start a node process each: give them room on a loaded machine. */
const SLOW = { timeout: 150_000 };

describe("MCP Inspector CLI over stdio", () => {
  // `node --import tsx` rather than `npx tsx`: one process less per run, so no connect timeouts.
  const target = [process.execPath, "--import", "tsx", "test/fixtures/registry-server.ts"];

  it("lists resources and templates, reads a text and a binary file", SLOW, async () => {
    const [list, templates, textRead, binaryRead] = await Promise.all([
      cli([...target, "--method", "resources/list"]),
      cli([...target, "--method", "resources/templates/list"]),
      cli([...target, "--method", "resources/read", "--uri", up("default", "docs/hello%20world.txt")]),
      cli([...target, "--method", "resources/read", "--uri", up("default", "pixel.png")]),
    ]);
    const resources = list.resources as Listed[];
    expect(resources.map((r) => r.name)).toEqual(["docs/hello world.txt", "pixel.png", "out.csv"]);
    expect(resources[1]).toMatchObject({ mimeType: "image/png", size: PIXEL_PNG.length });
    expect(resources[2]?.uri).toMatch(
      new RegExp(`^artifact://sessions/${scopeRef("default")}/[0-9a-z]{26}/out\\.csv$`),
    );
    // Each entry carries its own title (not the template's "Uploaded files") and lastModified.
    expect(resources.map((r) => r.title)).toEqual(["hello world.txt", "pixel.png", "out.csv"]);
    for (const resource of resources) {
      expect(resource.annotations?.lastModified).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    expect(resources[0]).toMatchObject({ mimeType: "text/plain", size: Buffer.byteLength(HELLO_TEXT) });

    const uriTemplates = (templates.resourceTemplates as Array<{ uriTemplate: string }>).map(
      (t) => t.uriTemplate,
    );
    expect(uriTemplates).toEqual([
      "file://uploads/{scope}/{+path}",
      "artifact://sessions/{scope}/{id}/{filename}",
    ]);

    expect((textRead.contents as Array<{ text: string }>)[0]?.text).toBe(HELLO_TEXT);
    const blob = (binaryRead.contents as Array<{ blob: string; mimeType: string }>)[0];
    expect(blob?.mimeType).toBe("image/png");
    expect(Buffer.from(blob?.blob ?? "", "base64").equals(PIXEL_PNG)).toBe(true);
  });
});

describe("MCP Inspector CLI over Streamable HTTP", () => {
  let server: RegistryHttpServer;

  beforeAll(async () => {
    // Each CLI run is a new session, so the scope comes from a header. A test fixture only: a real
    // server accepts such a header after checking it against the caller's credentials
    // (examples/chat-uploads).
    server = await startRegistryHttpServer({
      scope: (extra) => {
        const header = extra.requestInfo?.headers?.["x-chat-id"];
        return typeof header === "string" && header.length > 0 ? header : defaultScope(extra);
      },
    });
    await server.registry.add(new TextEncoder().encode(HELLO_TEXT), { scope: "chat-1", name: "hello.txt" });
    await server.registry.add(PIXEL_PNG, { scope: "chat-1", name: "pixel.png" });
    await server.registry.add(new TextEncoder().encode("not yours"), { scope: "chat-2", name: "other.txt" });
  });

  afterAll(async () => {
    await server.close();
  });

  it("lists resources and templates, reads a text and a binary file", SLOW, async () => {
    const target = [server.url, "--transport", "http", "--header", "X-Chat-Id: chat-1"];
    const [list, templates, textRead, binaryRead] = await Promise.all([
      cli([...target, "--method", "resources/list"]),
      cli([...target, "--method", "resources/templates/list"]),
      cli([...target, "--method", "resources/read", "--uri", up("chat-1", "hello.txt")]),
      cli([...target, "--method", "resources/read", "--uri", up("chat-1", "pixel.png")]),
    ]);
    const listed = list.resources as Listed[];
    expect(listed.map((r) => r.uri)).toEqual([up("chat-1", "hello.txt"), up("chat-1", "pixel.png")]);
    expect(listed.map((r) => [r.title, r.mimeType, r.size])).toEqual([
      ["hello.txt", "text/plain", Buffer.byteLength(HELLO_TEXT)],
      ["pixel.png", "image/png", PIXEL_PNG.length],
    ]);
    expect(listed.every((r) => typeof r.annotations?.lastModified === "string")).toBe(true);
    expect((templates.resourceTemplates as unknown[]).length).toBe(2);
    expect((textRead.contents as Array<{ text: string }>)[0]?.text).toBe(HELLO_TEXT);
    const blob = (binaryRead.contents as Array<{ blob: string }>)[0];
    expect(Buffer.from(blob?.blob ?? "", "base64").equals(PIXEL_PNG)).toBe(true);
  });

  it("cannot read another chat's file", SLOW, async () => {
    const target = [server.url, "--transport", "http", "--header", "X-Chat-Id: chat-1"];
    const failure = await runInspector(
      [...target, "--method", "resources/read", "--uri", up("chat-2", "other.txt")],
      { home, timeout: 90_000 },
    );
    expect(failure.code).toBe(1);
    // The CLI prints the JSON-RPC error's message (not its code): the same "not found" as an
    // unknown file, said once.
    expect(failure.stderr).toMatch(/other\.txt not found/);
    expect(failure.stderr).not.toContain("MCP error");
  });
});
