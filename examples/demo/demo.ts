/**
 * `npm run demo`: starts the demo server over Streamable HTTP on loopback, drives it with the real SDK
 * client through the whole path, and prints a transcript. Everything lives in a temp folder that is
 * removed at the end; nothing outside this machine is contacted.
 *
 * `npm run demo` uses SDK v1 (`@modelcontextprotocol/sdk`: protocol 2025-11-25, one session per
 * client); `npm run demo -- --sdk v2` the same pieces on SDK v2 (`@modelcontextprotocol/server`:
 * protocol 2026-07-28, a stateless endpoint, the caller's scope from its bearer token).
 */
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { UploadTicket } from "../../src/types.js";
import { serveHttp } from "../shared/serve-http.js";
import { serveHttpV2, staticTokens } from "../shared/serve-http-v2.js";
import { createDemoApp } from "./app.js";

type Block = { type: string; text?: string; uri?: string; name?: string };

export interface DemoSummary {
  /** Checks that passed / failed, by name. */
  checks: Record<string, boolean>;
  /** Whether every temp file of the tool calls was gone afterwards. */
  tempFilesLeft: number;
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const size = (bytes: number) =>
  bytes >= 1024 * 1024
    ? `${(bytes / 1024 / 1024).toFixed(1)} MiB`
    : bytes >= 1024
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : `${bytes} B`;

/** Which SDK generation the demo runs on. */
export type DemoSdk = "v1" | "v2";

/** The installed version of an SDK package (from the repository's node_modules). */
const versionOf = (pkg: string) =>
  (
    JSON.parse(
      readFileSync(join(import.meta.dirname, "..", "..", "node_modules", pkg, "package.json"), "utf8"),
    ) as { version: string }
  ).version;

/** The demo's bearer token on SDK v2 (a stateless server knows a caller only by its credentials). */
const DEMO_TOKEN = "demo-token";

export async function runDemo(
  log: (line: string) => void = console.log,
  sdk: DemoSdk = "v1",
): Promise<DemoSummary> {
  const dataDir = await mkdtemp(join(tmpdir(), "mcp-file-bridge-demo-"));
  const workspace = join(dataDir, "workspace");
  await mkdir(workspace, { recursive: true });
  await writeFile(join(workspace, "notes.md"), "# Meeting notes\n\nShip the file bridge.\n");

  const checks: Record<string, boolean> = {};
  const check = (name: string, ok: boolean) => {
    checks[name] = ok;
    log(`   ${ok ? "✓" : "✗"} ${name}`);
  };
  const step = async <T>(title: string, run: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const result = await run();
    log(`→ ${title}  (${(performance.now() - started).toFixed(1)} ms)`);
    return result;
  };

  // Signed URLs need the server's address, known once it listens on a free port.
  let baseUrl = "";
  const app = createDemoApp({ dataDir, baseUrl: () => baseUrl });
  let client: Pick<Client, "callTool" | "listTools" | "listResources" | "readResource" | "close">;
  let http: { url: string; mcpUrl: URL; close(): Promise<void> };
  let banner: string;
  if (sdk === "v2") {
    const v2 = await serveHttpV2({
      createServer: app.createServerV2,
      routes: app.routes,
      authenticate: staticTokens({ [DEMO_TOKEN]: "demo-user" }),
    });
    app.registry.publishTo(v2.handler);
    http = v2;
    const v2Client = new ClientV2(
      { name: "demo-client", version: "1.0.0" },
      { versionNegotiation: { mode: "auto" } },
    );
    client = v2Client as unknown as typeof client;
    baseUrl = http.url;
    await v2Client.connect(
      new StreamableHTTPClientTransportV2(http.mcpUrl, {
        requestInit: { headers: { authorization: `Bearer ${DEMO_TOKEN}` } },
      }),
    );
    banner =
      `SDK v2 (@modelcontextprotocol/server ${versionOf("@modelcontextprotocol/server")}), ` +
      `protocol era ${v2Client.getProtocolEra()}, stateless endpoint, scope = the token's user`;
  } else {
    http = await serveHttp({ createServer: app.createServer, routes: app.routes });
    const v1Client = new Client({ name: "demo-client", version: "1.0.0" });
    client = v1Client;
    baseUrl = http.url;
    await v1Client.connect(new StreamableHTTPClientTransport(http.mcpUrl));
    banner =
      `SDK v1 (@modelcontextprotocol/sdk ${versionOf("@modelcontextprotocol/sdk")}), ` +
      "protocol 2025-11-25, one session per client, scope = the session";
  }
  try {
    log(`mcp-file-bridge demo — server at ${http.mcpUrl} (files under ${dataDir})`);
    log(`${banner}\n`);
    const tools = await client.listTools();
    log(`tools: ${tools.tools.map((tool) => tool.name).join(", ")}\n`);

    const inspect = async (label: string, file: unknown) => {
      const result = await step(`inspect_file with ${label}`, () =>
        client.callTool({ name: "inspect_file", arguments: { file } }),
      );
      const text = (result.content as Block[]).map((block) => block.text ?? "").join("\n");
      for (const line of text.split("\n")) log(`   ${line}`);
      return result;
    };

    log("1. Small files inline, in three forms");
    const dataUrl = `data:text/csv;name=prices.csv;base64,${Buffer.from("item,price\ntea,3\n").toString("base64")}`;
    check("data: URL resolved", !(await inspect("a data: URL", dataUrl)).isError);
    const object = {
      filename: "hello.txt",
      content: Buffer.from("hello from an object\n").toString("base64"),
    };
    check("{filename, content} resolved", !(await inspect("a {filename, content} object", object)).isError);
    check("path resolved", !(await inspect("a path in the workspace", join(workspace, "notes.md"))).isError);
    const refused = await inspect("a path outside the roots", "/etc/passwd");
    check("path outside roots refused (PATH_NOT_ALLOWED)", refused.isError === true);

    log("\n2. A large file out of band: upload URL → HTTP upload → handle");
    const ticket = (
      await step("get_upload_url", () => client.callTool({ name: "get_upload_url", arguments: {} }))
    ).structuredContent as UploadTicket;
    log(`   ${ticket.method} ${ticket.upload_url.slice(0, 60)}…  (max ${size(ticket.max_bytes)})`);
    const big = randomBytes(8 * 1024 * 1024);
    const csv = Buffer.from("city,population\nLyon,522250\nNantes,320732\n");
    const form = new FormData();
    form.append(ticket.field, new Blob([big]), "scan.bin");
    form.append(ticket.field, new Blob([csv], { type: "text/csv" }), "cities.csv");
    const uploadStarted = performance.now();
    const uploaded = await fetch(ticket.upload_url, { method: ticket.method, body: form });
    const reply = (await uploaded.json()) as {
      files: Array<{ handle: string; uri: string; name: string; size: number; sha256: string }>;
    };
    const seconds = (performance.now() - uploadStarted) / 1000;
    log(
      `→ HTTP upload of ${size(big.length + csv.length)}: ${uploaded.status} in ${(seconds * 1000).toFixed(1)} ms`,
    );
    for (const file of reply.files) log(`   ${file.name} (${size(file.size)}) → ${file.handle}`);
    check(
      "upload stored both files with the right sha256",
      reply.files[0]?.sha256 === sha256(big) && reply.files[1]?.sha256 === sha256(csv),
    );

    log("\n3. A tool takes the handles and returns an artifact");
    const summary = await step("summarize_files with two upload handles and a data: URL", () =>
      client.callTool({
        name: "summarize_files",
        arguments: { files: [...reply.files.map((file) => file.handle), dataUrl] },
      }),
    );
    const meta = summary._meta as { artifact_uri: string; download_url: string };
    for (const block of summary.content as Block[]) {
      if (block.type === "resource_link") log(`   resource_link ${block.uri}`);
      else log(`   ${block.text?.split("\n")[0]}`);
    }
    check(
      "artifact returned with a resource_link and a download URL",
      Boolean(meta?.artifact_uri && meta?.download_url),
    );

    log("\n4. Signed download of the artifact");
    const download = await step("GET the signed download URL", () => fetch(meta.download_url));
    const report = await download.text();
    log(
      `   ${download.status} ${download.headers.get("content-type")}; ${download.headers.get("content-disposition")}`,
    );
    for (const line of report.trimEnd().split("\n")) log(`   | ${line}`);
    check(
      "report lists every input file",
      ["scan.bin", "cities.csv", "prices.csv"].every((name) => report.includes(name)),
    );

    log("\n5. The stored files as MCP resources");
    const listed = await step("resources/list", () => client.listResources());
    for (const resource of listed.resources)
      log(`   ${resource.uri}  ${resource.mimeType}  ${size(resource.size ?? 0)}`);
    check("uploads and the artifact are listed", listed.resources.length === 3);
    const csvUri = reply.files[1]?.uri as string;
    const read = await step(`resources/read ${csvUri}`, () => client.readResource({ uri: csvUri }));
    const text = (read.contents[0] as { text?: string }).text ?? "";
    log(`   text: ${JSON.stringify(text.slice(0, 40))}…`);
    check("text resource reads back as text", text === csv.toString());
    const bigRead = await step(`resources/read ${reply.files[0]?.uri}`, () =>
      client.readResource({ uri: reply.files[0]?.uri as string }),
    );
    const first = bigRead.contents[0] as { mimeType?: string; text?: string; blob?: string };
    log(
      `   ${first.mimeType}: ${first.text ? first.text.slice(0, 60) : `${first.blob?.length} base64 chars`}…`,
    );
    check(
      "large binary resource comes back as a signed link, not inline",
      first.mimeType === "text/uri-list",
    );

    // Files, not folders: the bridge keeps a few empty private call folders ready for the next calls.
    const tempEntries = await readdir(join(dataDir, "tmp"), { recursive: true, withFileTypes: true }).catch(
      () => [],
    );
    const tempFilesLeft = tempEntries.filter((entry) => !entry.isDirectory()).length;
    check("no temp files left after the tool calls", tempFilesLeft === 0);
    const failed = Object.entries(checks).filter(([, ok]) => !ok);
    log(
      `\n${failed.length === 0 ? "All" : "Not all"} checks passed (${Object.keys(checks).length - failed.length}/${Object.keys(checks).length}).`,
    );
    return { checks, tempFilesLeft };
  } finally {
    await client.close().catch(() => undefined);
    await http.close();
    await app.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const flag = process.argv.indexOf("--sdk");
  const sdk = flag === -1 ? "v1" : process.argv[flag + 1];
  if (sdk !== "v1" && sdk !== "v2") {
    console.error("usage: npm run demo [-- --sdk v1|v2]");
    process.exit(2);
  }
  runDemo(console.log, sdk)
    .then((summary) => {
      process.exitCode = Object.values(summary.checks).every(Boolean) ? 0 : 1;
    })
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
}
