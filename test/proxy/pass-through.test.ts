/**
 * The proxy keeps what it wraps: an upload-consumer argument still takes the relative paths the
 * upstream itself understands when the rule says `passThrough: relative-paths`; handles used before
 * their upload answer UPLOAD_PENDING; an anonymous caller's other-session handle says why it is not
 * found (handles live per MCP session until callers authenticate).
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFileProxy, type FileProxy } from "../../src/proxy/index.js";
import { repoRoot, sha256 } from "../support/helpers.js";
import { fixtureCommand, httpClient, removeDirs, tempDir, textOf } from "./support.js";

describe.each([
  ["with passThrough: relative-paths", true],
  ["without passThrough", false],
] as const)("an upload consumer %s", (_label, passThrough) => {
  let handoff: string;
  let proxy: FileProxy;
  let client: Client;

  beforeAll(async () => {
    handoff = await tempDir("proxy-pass-");
    proxy = await createFileProxy({
      config: {
        mcpServers: { up: fixtureCommand({ OUTPUT_DIR: handoff, MARKER_DIR: handoff }) },
        servers: {
          up: {
            handoffDir: handoff,
            tools: {
              read_file: {
                upload: {
                  args: ["path"],
                  ...(passThrough ? { passThrough: "relative-paths" as const } : {}),
                },
              },
            },
          },
        },
      },
      upstreamStderr: "ignore",
    });
    client = await httpClient((await proxy.listen()).mcpUrl);
  });

  afterAll(async () => {
    await client?.close();
    await proxy?.close();
    await removeDirs(handoff);
  });

  it("passes a relative path inside the upstream's folder through only when the rule allows it", async () => {
    const result = await client.callTool({ name: "read_file", arguments: { path: "package.json" } });
    if (passThrough) {
      expect(result.isError).toBeFalsy();
      const bytes = await readFile(join(repoRoot, "package.json"));
      expect(result.structuredContent).toMatchObject({ path: "package.json", sha256: sha256(bytes) });
    } else {
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^Error FORM_DISABLED/);
    }
    // Climbing out, absolute paths and URIs of the upstream's host are never passed through.
    for (const path of ["../package.json", "src/../../x", "/etc/hostname", "file:///etc/hostname", "~/x"]) {
      const refused = await client.callTool({ name: "read_file", arguments: { path } });
      expect(refused.isError, path).toBe(true);
      expect(textOf(refused), path).toMatch(/^Error (FORM_DISABLED|PATH_NOT_ALLOWED|UNSUPPORTED_INPUT)/);
    }
    // The bridge's own forms still work.
    const data = await client.callTool({ name: "read_file", arguments: { path: "data:,hello" } });
    expect(data.structuredContent).toMatchObject({ sha256: sha256(Buffer.from("hello")) });
  });

  it("answers UPLOAD_PENDING for a handle used before its upload; check_upload tells the state", async () => {
    const got = await client.callTool({
      name: "get_upload_url",
      arguments: { max_files: 1, accept: [".txt"] },
    });
    const ticket = got.structuredContent as { handle: string; upload_url: string; max_files: number };
    expect(ticket.max_files).toBe(1);
    const early = await client.callTool({ name: "read_file", arguments: { path: ticket.handle } });
    expect(early.isError).toBe(true);
    expect(textOf(early)).toMatch(/^Error UPLOAD_PENDING/);
    const status = await client.callTool({ name: "check_upload", arguments: { handle: ticket.handle } });
    expect(status.structuredContent).toMatchObject({ status: "pending" });
    const form = new FormData();
    form.append("file", new Blob(["hi there"]), "hi.txt");
    expect((await fetch(ticket.upload_url, { method: "POST", body: form })).status).toBe(201);
    const done = await client.callTool({ name: "read_file", arguments: { path: ticket.handle } });
    expect(done.structuredContent).toMatchObject({ sha256: sha256(Buffer.from("hi there")) });

    // Another anonymous MCP session: not found, and told that handles live per session.
    const other = await httpClient((client.transport as unknown as { _url: URL })._url.href);
    try {
      const result = await other.callTool({ name: "read_file", arguments: { path: ticket.handle } });
      expect(textOf(result)).toMatch(/^Error NOT_FOUND/);
      expect(textOf(result)).toMatch(/MCP session/);
      const status = await other.callTool({ name: "check_upload", arguments: { handle: ticket.handle } });
      expect(status.structuredContent).toMatchObject({ status: "unknown" });
    } finally {
      await other.close();
    }
  });
});
