import { readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFileProxy, type FileProxy } from "../../src/proxy/index.js";
import { sha256 } from "../support/helpers.js";
import { tempLeftovers } from "../support/temp-leftovers.js";
import {
  directClient,
  fixtureCommand,
  httpClient,
  removeDirs,
  startHttpFixture,
  tempDir,
  textOf,
} from "./support.js";

const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

function rules(handoffDir: string, outDir: string) {
  const saved = { locator: "regex" as const, pattern: "Saved to (?<path>\\S+)" };
  return {
    handoffDir,
    outputDirs: [outDir],
    tools: {
      read_file: { upload: { args: ["path"] } },
      read_many: { upload: { args: ["paths[]"] } },
      read_base64: { upload: { args: ["content"], as: "base64" as const } },
      write_file: { artifacts: saved },
      say_path: { artifacts: saved },
      image: { artifacts: { locator: "embedded" as const } },
      write_to: { artifacts: { locator: "none" as const, outputArg: "output", outputName: "out.txt" } },
    },
  };
}

async function upload(proxyClient: Client, bytes: Buffer, name: string): Promise<string> {
  const ticket = await proxyClient.callTool({ name: "get_upload_url", arguments: { filename: name } });
  const { upload_url, handle } = ticket.structuredContent as { upload_url: string; handle: string };
  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(bytes)]), name);
  const response = await fetch(upload_url, { method: "POST", body: form });
  expect(response.status).toBe(201);
  return handle;
}

describe.each(["stdio", "http"] as const)("createFileProxy over a %s upstream", (kind) => {
  let handoff: string;
  let out: string;
  let marker: string;
  let proxy: FileProxy;
  let client: Client;
  let direct: Client;
  let stopFixture: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    handoff = await tempDir("proxy-handoff-");
    out = await tempDir("proxy-out-");
    marker = await tempDir("proxy-marker-");
    const env = { OUTPUT_DIR: out, MARKER_DIR: marker };
    let upstream: Record<string, unknown>;
    if (kind === "stdio") upstream = fixtureCommand(env);
    else {
      const fixture = await startHttpFixture(env);
      stopFixture = fixture.stop;
      upstream = { url: fixture.url };
    }
    proxy = await createFileProxy({
      config: { mcpServers: { up: upstream }, servers: { up: rules(handoff, out) } },
      upstreamStderr: "ignore",
    });
    const { mcpUrl } = await proxy.listen();
    client = await httpClient(mcpUrl);
    direct = await directClient(env);
  });

  afterAll(async () => {
    await client?.close();
    await direct?.close();
    await proxy?.close();
    await stopFixture?.();
    await removeDirs(handoff, out, marker);
  });

  it("lists the upstream's tools with raw schemas; file arguments accept every form", async () => {
    const { tools } = await client.listTools();
    const { tools: upstreamTools } = await direct.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get("echo")).toEqual(upstreamTools.find((tool) => tool.name === "echo"));
    const readFileSchema = byName.get("read_file")?.inputSchema as {
      properties: Record<string, Record<string, unknown>>;
    };
    expect(readFileSchema.properties.path).toHaveProperty("x-mcp-file");
    expect(readFileSchema.properties.path?.anyOf).toBeDefined();
    const many = byName.get("read_many")?.inputSchema as unknown as {
      properties: { paths: { items: Record<string, unknown> } };
    };
    expect(many.properties.paths.items).toHaveProperty("x-mcp-file");
    expect(byName.has("get_upload_url")).toBe(true);
    // the pre-allocated output argument is no longer required
    expect(
      (byName.get("write_to")?.inputSchema as { required?: string[] } | undefined)?.required ?? [],
    ).not.toContain("output");
  });

  it("passes unmarked tools, tool errors and JSON-RPC errors through unchanged", async () => {
    const args = { name: "echo", arguments: { text: "hi ü" } };
    expect(await client.callTool(args)).toEqual(await direct.callTool(args));
    expect(await client.callTool({ name: "fail", arguments: {} })).toEqual(
      await direct.callTool({ name: "fail", arguments: {} }),
    );
    // An unknown tool and invalid arguments: whatever the upstream answers (a result or a JSON-RPC error).
    const viaProxy = await client.callTool({ name: "no_such_tool", arguments: {} }).catch((e: unknown) => e);
    const viaDirect = await direct.callTool({ name: "no_such_tool", arguments: {} }).catch((e: unknown) => e);
    const pick = (value: unknown) => {
      const error = value as { code?: number; message?: string; data?: unknown };
      return value instanceof Error ? { code: error.code, message: error.message, data: error.data } : value;
    };
    expect(pick(viaProxy)).toEqual(pick(viaDirect));
    const badArgs = { name: "echo", arguments: { text: 42 } };
    expect(pick(await client.callTool(badArgs).catch((e: unknown) => e))).toEqual(
      pick(await direct.callTool(badArgs).catch((e: unknown) => e)),
    );
  });

  it("hands a data: URL to the upstream as a real file in the handoff folder, then removes it", async () => {
    const bytes = Buffer.from("hello through a data URL\n");
    const result = await client.callTool({
      name: "read_file",
      arguments: { path: `data:text/plain;name=note.txt;base64,${bytes.toString("base64")}` },
    });
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as { sha256: string; size: number; path: string };
    expect(structured.sha256).toBe(sha256(bytes));
    expect(structured.path.startsWith(`${handoff}/`)).toBe(true);
    expect(structured.path.endsWith("/note.txt")).toBe(true);
    expect(await tempLeftovers(handoff)).toEqual([]);
  });

  it("hands an upload handle (get_upload_url + HTTP upload) to the upstream as a real file", async () => {
    const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));
    const handle = await upload(client, bytes, "data.bin");
    const result = await client.callTool({ name: "read_file", arguments: { path: handle } });
    const structured = result.structuredContent as { sha256: string; size: number; path: string };
    expect(structured).toMatchObject({ sha256: sha256(bytes), size: bytes.length });
    expect(structured.path.startsWith(`${handoff}/`)).toBe(true);
    // lists, objects and base64 hand-over
    const a = Buffer.from("first");
    const b = Buffer.from("second");
    const many = await client.callTool({
      name: "read_many",
      arguments: {
        paths: [handle, { name: "a.txt", content: a.toString("base64") }, `data:,${b.toString()}`],
      },
    });
    expect((many.structuredContent as { hashes: string[] }).hashes).toEqual([
      sha256(bytes),
      sha256(a),
      sha256(b),
    ]);
    const inline = await client.callTool({
      name: "read_base64",
      arguments: { content: `data:application/octet-stream;base64,${a.toString("base64")}` },
    });
    expect(textOf(inline)).toBe(`sha256 ${sha256(a)}`);
    expect(await tempLeftovers(handoff)).toEqual([]);
  });

  it("refuses a handle of another session, before calling the upstream", async () => {
    const handle = await upload(client, Buffer.from("mine"), "mine.txt");
    const other = await httpClient((client.transport as unknown as { _url: URL })._url.href);
    try {
      const result = await other.callTool({ name: "read_file", arguments: { path: handle } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^Error NOT_FOUND/);
    } finally {
      await other.close();
    }
  });

  it("captures a file the upstream wrote as an artifact with a signed download URL (exact bytes)", async () => {
    const body = `report ${"x".repeat(5000)}`;
    const result = await client.callTool({
      name: "write_file",
      arguments: { name: "report.txt", text: body },
    });
    expect(result.isError).toBeFalsy();
    const link = (result.content as Array<{ type: string; uri?: string }>).find(
      (block) => block.type === "resource_link",
    );
    expect(link?.uri).toMatch(/^artifact:\/\//);
    const meta = result._meta as { artifact_uri: string; download_url: string };
    expect(meta.artifact_uri).toBe(link?.uri);
    // The output contract: the artifact is in structuredContent.files too (Claude Code and Codex show
    // only structuredContent), and the upstream's own path of it is replaced by the artifact URI.
    const structured = result.structuredContent as {
      output: { path: string };
      files: Array<Record<string, unknown>>;
    };
    expect(structured.output.path).toBe(meta.artifact_uri);
    expect(structured.files).toEqual([
      expect.objectContaining({ uri: meta.artifact_uri, name: "report.txt", downloadUrl: meta.download_url }),
    ]);
    expect(JSON.stringify(result.content)).not.toContain(out);
    const response = await fetch(meta.download_url);
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer()).toString()).toBe(body);
    // readable as a resource through the proxy, and listed
    const read = await client.readResource({ uri: meta.artifact_uri });
    expect((read.contents[0] as { text?: string }).text).toBe(body);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain(meta.artifact_uri);
  });

  it("captures embedded images and pre-allocated outputs", async () => {
    const image = await client.callTool({ name: "image", arguments: {} });
    const imageMeta = image._meta as { download_url: string };
    expect(Buffer.from(await (await fetch(imageMeta.download_url)).arrayBuffer())).toEqual(PNG);
    const written = await client.callTool({ name: "write_to", arguments: { text: "pre-allocated" } });
    const meta = written._meta as { download_url: string; artifact_uri: string };
    expect(meta.artifact_uri).toMatch(/out\.txt$/);
    expect(await (await fetch(meta.download_url)).text()).toBe("pre-allocated");
    expect((await readdir(out)).filter((name) => name.startsWith("out-"))).toEqual([]);
  });

  it("refuses a path outside the output folders, and a symlink out of them", async () => {
    const secretDir = await tempDir("proxy-secret-");
    try {
      const secret = join(secretDir, "secret.txt");
      await writeFile(secret, "do not leak");
      const outside = await client.callTool({ name: "say_path", arguments: { path: secret } });
      expect(outside.isError).toBe(true);
      expect(textOf(outside)).toMatch(/^Error PATH_NOT_ALLOWED/);
      await symlink(secret, join(out, "link.txt"));
      const linked = await client.callTool({ name: "say_path", arguments: { path: join(out, "link.txt") } });
      expect(linked.isError).toBe(true);
      expect(textOf(linked)).toMatch(/^Error PATH_NOT_ALLOWED/);
      const dotdot = await client.callTool({
        name: "say_path",
        arguments: { path: `${out}/../${secretDir.split("/").pop()}/secret.txt` },
      });
      expect(textOf(dotdot)).toMatch(/^Error PATH_NOT_ALLOWED/);
      expect(JSON.stringify([outside, linked, dotdot])).not.toContain("do not leak");
    } finally {
      await removeDirs(secretDir);
    }
  });

  it("forwards progress and cancellation", async () => {
    const updates: Array<{ progress: number; total?: number; message?: string }> = [];
    const result = await client.callTool(
      { name: "slow", arguments: { steps: 3, delayMs: 5 } },
      CallToolResultSchema,
      {
        onprogress: (update) => updates.push(update),
      },
    );
    expect(textOf(result)).toBe("done after 3 steps");
    expect(updates).toEqual([
      { progress: 1, total: 3, message: "step 1" },
      { progress: 2, total: 3, message: "step 2" },
      { progress: 3, total: 3, message: "step 3" },
    ]);
    const controller = new AbortController();
    const pending = client
      .callTool({ name: "slow", arguments: { steps: 100, delayMs: 20 } }, CallToolResultSchema, {
        signal: controller.signal,
      })
      .catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 150));
    controller.abort("user cancelled");
    expect(await pending).toBeInstanceOf(Error);
    await expect
      .poll(async () => readFile(join(marker, "cancelled"), "utf8").catch(() => ""), { timeout: 5000 })
      .toBe("yes");
  });

  it("forwards tools/list_changed and the new tool works", async () => {
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      changed++;
    });
    await client.callTool({ name: "add_tool", arguments: {} });
    await expect.poll(() => changed, { timeout: 5000 }).toBeGreaterThan(0);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain("added");
    expect(textOf(await client.callTool({ name: "added", arguments: {} }))).toBe("added works");
  });

  it("passes prompts and upstream resources through", async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toContain("greet");
    const prompt = await client.getPrompt({ name: "greet", arguments: { name: "Ada" } });
    expect(prompt).toEqual(await direct.getPrompt({ name: "greet", arguments: { name: "Ada" } }));
    const read = await client.readResource({ uri: "fixture://readme" });
    expect(read).toEqual(await direct.readResource({ uri: "fixture://readme" }));
  });

  it("reports health 200 when every configured tool and argument exists upstream", async () => {
    const report = await proxy.health();
    expect(report.problems).toEqual([]);
    expect(report.status).toBe("ok");
  });
});

describe("createFileProxy: failures", () => {
  it("turns an upstream crash mid-call into a clear tool error and reconnects on the next call", async () => {
    const out = await tempDir("proxy-crash-");
    const proxy = await createFileProxy({
      config: { mcpServers: { up: fixtureCommand({ OUTPUT_DIR: out }) } },
      upstreamStderr: "ignore",
    });
    const { mcpUrl } = await proxy.listen();
    const client = await httpClient(mcpUrl);
    try {
      const crashed = await client.callTool({ name: "crash", arguments: {} });
      expect(crashed.isError).toBe(true);
      expect(textOf(crashed)).toMatch(
        /^Error UPSTREAM_UNAVAILABLE: upstream "up" closed the connection during the call/,
      );
      const again = await client.callTool({ name: "echo", arguments: { text: "back" } });
      expect(textOf(again)).toBe("echo: back");
    } finally {
      await client.close();
      await proxy.close();
      await removeDirs(out);
    }
  });

  it("over HTTP: a dropped upstream is a clear tool error; the next call reconnects once it is back", async () => {
    const out = await tempDir("proxy-crash-http-");
    let fixture = await startHttpFixture({ OUTPUT_DIR: out });
    const port = Number(new URL(fixture.url).port);
    const proxy = await createFileProxy({ config: { mcpServers: { up: { url: fixture.url } } } });
    const { mcpUrl } = await proxy.listen();
    const client = await httpClient(mcpUrl);
    try {
      const crashed = await client.callTool({ name: "crash", arguments: {} });
      expect(crashed.isError).toBe(true);
      expect(textOf(crashed)).toMatch(/^Error UPSTREAM_UNAVAILABLE/);
      const down = await client.callTool({ name: "echo", arguments: { text: "x" } });
      expect(textOf(down)).toMatch(/^Error UPSTREAM_UNAVAILABLE/);
      fixture = await startHttpFixture({ OUTPUT_DIR: out }, port);
      expect(textOf(await client.callTool({ name: "echo", arguments: { text: "back" } }))).toBe("echo: back");
    } finally {
      await client.close();
      await proxy.close();
      await fixture.stop();
      await removeDirs(out);
    }
  });

  it("healthz is 503 with adapter_wiring_incomplete for a misnamed tool or argument", async () => {
    const out = await tempDir("proxy-health-");
    const proxy = await createFileProxy({
      config: {
        mcpServers: { up: fixtureCommand({ OUTPUT_DIR: out }) },
        servers: {
          up: {
            handoffDir: join(out, "in"),
            outputDirs: [out],
            tools: {
              read_fiel: { upload: { args: ["path"] } },
              read_file: { upload: { args: ["file"] } },
              // The upstream's write_file takes `dir`, not `folder`.
              write_file: {
                artifacts: { locator: "regex", pattern: "Saved to (?<path>\\S+)", outputDirArg: "folder" },
              },
            },
          },
        },
      },
      upstreamStderr: "ignore",
    });
    const { url } = await proxy.listen();
    try {
      const response = await fetch(`${url}/healthz`);
      expect(response.status).toBe(503);
      const body = (await response.json()) as {
        status: string;
        problems: Array<{ code: string; tool: string; argument?: string }>;
      };
      expect(body.status).toBe("adapter_wiring_incomplete");
      expect(body.problems).toEqual([
        expect.objectContaining({ code: "adapter_wiring_incomplete", tool: "read_fiel" }),
        expect.objectContaining({ code: "adapter_wiring_incomplete", tool: "read_file", argument: "file" }),
        expect.objectContaining({
          code: "adapter_wiring_incomplete",
          tool: "write_file",
          argument: "folder",
        }),
      ]);
    } finally {
      await proxy.close();
      await removeDirs(out);
    }
  });

  it("mounts several upstreams side by side with prefixes", async () => {
    const out = await tempDir("proxy-multi-");
    const proxy = await createFileProxy({
      config: {
        mcpServers: { a: fixtureCommand({ OUTPUT_DIR: out }), b: fixtureCommand({ OUTPUT_DIR: out }) },
        servers: { a: { prefix: "a_" }, b: { prefix: "b_" } },
      },
      upstreamStderr: "ignore",
    });
    const { url, mcpUrl } = await proxy.listen();
    const client = await httpClient(mcpUrl);
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toContain("a_echo");
      expect(names).toContain("b_echo");
      expect(textOf(await client.callTool({ name: "b_echo", arguments: { text: "hi" } }))).toBe("echo: hi");
      expect((await client.listPrompts()).prompts.map((p) => p.name).sort()).toEqual(["a_greet", "b_greet"]);
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    } finally {
      await client.close();
      await proxy.close();
      await removeDirs(out);
    }
  });
});
