/**
 * A minimal MCP Apps host, run in Chromium by test/browser/upload-widget.test.ts (bundled with
 * esbuild): the SDK `Client` talks to the test's MCP server over Streamable HTTP, finds the tool's
 * `ui://` resource, renders it in a sandboxed iframe served from ANOTHER loopback origin (the
 * "sandbox" server, which applies `_meta.ui.csp` as the frame's CSP), and bridges it with ext-apps'
 * `AppBridge` + `PostMessageTransport`. What the app sends is recorded on `window.host`.
 */
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

interface HostRecord {
  ready: boolean;
  initialized: boolean;
  error?: string;
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

async function main(): Promise<void> {
  const client = new Client({ name: "test-host", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", location.origin)));
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
    client,
    { name: "test-host", version: "1.0.0" },
    {
      serverTools: {},
      openLinks: {},
      updateModelContext: { text: {} },
      message: { text: {} },
    },
  );
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
