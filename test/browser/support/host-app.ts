/**
 * A minimal MCP Apps host, run in Chromium by test/browser/upload-widget.test.ts (bundled with
 * esbuild): the SDK `Client` talks to the test's MCP server over Streamable HTTP, finds the tool's
 * `ui://` resource, renders it in a sandboxed iframe served from ANOTHER loopback origin (the
 * "sandbox" server, which applies `_meta.ui.csp` as the frame's CSP), and bridges it with ext-apps'
 * `AppBridge` + `PostMessageTransport`. What the app sends is recorded on `window.host`.
 *
 * Query: `sandbox` (origin), `tool`, `result=0` (send no tool result), `token` (a bearer token for
 * `/mcp`), `client=v2`: the host talks to the server with an SDK v2 `Client` pinned to 2026-07-28
 * instead, and bridges the app's `tools/call` to it itself (`AppBridge` without a client).
 */

import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from "@modelcontextprotocol/client";
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

interface HostRecord {
  ready: boolean;
  initialized: boolean;
  error?: string;
  /** The protocol version the host's client negotiated. */
  protocolVersion?: string;
  resourceUri?: string;
  messages: unknown[];
  contexts: unknown[];
  toolCalls: number;
}

const record: HostRecord = { ready: false, initialized: false, messages: [], contexts: [], toolCalls: 0 };
(window as unknown as { host: HostRecord }).host = record;

const params = new URLSearchParams(location.search);
const sandbox = params.get("sandbox") ?? "";
const toolName = params.get("tool") ?? "get_upload_url";
const sendToolResult = params.get("result") !== "0";
const token = params.get("token");
const clientKind = params.get("client") === "v2" ? "v2" : "v1";

/** What the host needs of its MCP client; `bridged` is handed to `AppBridge` (v1), else `null`. */
interface HostClient {
  listTools: Client["listTools"];
  readResource: Client["readResource"];
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
  protocolVersion: string | undefined;
  bridged: Client | null;
}

async function connectClient(): Promise<HostClient> {
  const url = new URL("/mcp", location.origin);
  const requestInit = token ? { headers: { authorization: `Bearer ${token}` } } : undefined;
  if (clientKind === "v2") {
    const v2 = new ClientV2(
      { name: "test-host", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await v2.connect(new StreamableHTTPClientTransportV2(url, requestInit ? { requestInit } : {}));
    const same = v2 as unknown as Client;
    return {
      listTools: same.listTools.bind(same),
      readResource: same.readResource.bind(same),
      callTool: (call) => v2.callTool(call),
      protocolVersion: v2.getNegotiatedProtocolVersion(),
      bridged: null,
    };
  }
  const client = new Client({ name: "test-host", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(url, requestInit ? { requestInit } : {}));
  return {
    listTools: client.listTools.bind(client),
    readResource: client.readResource.bind(client),
    callTool: (call) => client.callTool(call),
    protocolVersion:
      client.transport && "protocolVersion" in client.transport
        ? String(client.transport.protocolVersion)
        : undefined,
    bridged: client,
  };
}

async function main(): Promise<void> {
  const client = await connectClient();
  record.protocolVersion = client.protocolVersion;
  const { tools } = await client.listTools();
  const tool = tools.find((candidate) => candidate.name === toolName);
  const meta = (tool?._meta ?? {}) as { ui?: { resourceUri?: string }; "ui/resourceUri"?: string };
  // A strict host that reads only the flat key (as Claude did).
  const uri = meta["ui/resourceUri"];
  if (!uri) throw new Error(`tool ${toolName} has no _meta["ui/resourceUri"]`);
  record.resourceUri = uri;
  const read = await client.readResource({ uri });
  const content = read.contents[0] as {
    text?: string;
    mimeType?: string;
    _meta?: { ui?: { csp?: { connectDomains?: string[] } } };
  };
  if (content?.mimeType !== "text/html;profile=mcp-app" || typeof content.text !== "string") {
    throw new Error(`unexpected resource ${content?.mimeType}`);
  }

  const iframe = document.createElement("iframe");
  iframe.name = "app";
  iframe.title = "Upload widget";
  iframe.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
  iframe.style.width = "720px";
  iframe.style.height = "560px";
  iframe.style.border = "1px solid #ccc";
  document.body.append(iframe);

  const bridge = new AppBridge(
    client.bridged,
    { name: "test-host", version: "1.0.0" },
    {
      serverTools: {},
      openLinks: {},
      updateModelContext: { text: {} },
      message: { text: {} },
    },
  );
  if (!client.bridged) {
    // No SDK v1 client to forward to: the host answers the app's tools/call with its v2 client.
    bridge.oncalltool = async (call) =>
      (await client.callTool(call as { name: string })) as Awaited<
        ReturnType<NonNullable<AppBridge["oncalltool"]>>
      >;
  }
  bridge.onmessage = async (message) => {
    record.messages.push(message);
    return {};
  };
  bridge.onupdatemodelcontext = async (context) => {
    record.contexts.push(context);
    return {};
  };
  bridge.oninitialized = async () => {
    record.initialized = true;
    if (!sendToolResult) return;
    record.toolCalls += 1;
    const result = await client.callTool({ name: toolName, arguments: {} });
    await bridge.sendToolResult(result as Parameters<AppBridge["sendToolResult"]>[0]);
  };
  const frameWindow = iframe.contentWindow;
  if (!frameWindow) throw new Error("no iframe window");
  await bridge.connect(new PostMessageTransport(frameWindow, frameWindow));

  // Load the app's HTML into the frame from the sandbox origin, with the CSP the resource asked for.
  const form = document.createElement("form");
  form.method = "POST";
  form.action = `${sandbox}/render`;
  form.target = "app";
  for (const [name, value] of [
    ["html", content.text],
    ["connect", (content._meta?.ui?.csp?.connectDomains ?? []).join(" ")],
  ] as const) {
    const input = document.createElement("input");
    input.type = "hidden";
    input.name = name;
    input.value = value;
    form.append(input);
  }
  document.body.append(form);
  form.submit();
  record.ready = true;
}

main().catch((error: unknown) => {
  record.error = String(error instanceof Error ? (error.stack ?? error.message) : error);
});
