/**
 * Browser entry of the MCP App upload widget (bundled, with `@modelcontextprotocol/ext-apps`, by
 * `scripts/browser/build-ui.ts` into one inline script). It gets its signed upload URL from the
 * result of the tool it is linked to (or calls that tool through the host), uploads straight to it,
 * then tells the conversation which handles now exist: `ui/update-model-context`, and a `ui/message`
 * unless turned off.
 */
import { App, PostMessageTransport } from "@modelcontextprotocol/ext-apps";
import { formatBytes } from "../../internal/byte-size.js";
import { mountUploader, type UploadedFile, type UploadTarget } from "./uploader.js";

interface WidgetConfig {
  toolName: string;
  sendMessage: boolean;
  version: string;
}

const config = JSON.parse(document.getElementById("upload-config")?.textContent ?? "{}") as WidgetConfig;

/** The upload target in a tool result's structured content (an `UploadTicket`), if any. */
function targetFrom(structured: unknown): UploadTarget | null {
  const ticket = structured as Record<string, unknown> | null | undefined;
  if (!ticket || typeof ticket !== "object") return null;
  const url = ticket.upload_url;
  const maxBytes = ticket.max_bytes;
  const maxFiles = ticket.max_files;
  if (typeof url !== "string" || typeof maxBytes !== "number" || typeof maxFiles !== "number") return null;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return null;
  } catch {
    return null;
  }
  const expiresAt = typeof ticket.expires_at === "string" ? ticket.expires_at : undefined;
  return { uploadUrl: url, maxBytes, maxFiles, expiresAt };
}

/** The text the conversation gets: one line per file with its handle. */
function describeUploads(files: UploadedFile[]): string {
  const lines = files.map(
    (file) =>
      `- ${file.name} (${formatBytes(file.size)}, ${file.mimeType}${file.sha256 ? `, sha256 ${file.sha256}` : ""}): ${file.handle}`,
  );
  return [
    `I uploaded ${files.length === 1 ? "a file" : `${files.length} files`} with the upload widget. Pass the handle${files.length === 1 ? "" : "s"} as the file argument of a tool:`,
    ...lines,
  ].join("\n");
}

const app = new App(
  { name: "mcp-file-bridge-upload-widget", version: config.version },
  {},
  { autoResize: true },
);

const refreshTarget = async (): Promise<UploadTarget | null> => {
  if (!app.getHostCapabilities()?.serverTools) return null;
  const result = await app.callServerTool({ name: config.toolName, arguments: {} });
  return result.isError ? null : targetFrom(result.structuredContent);
};

const uploader = mountUploader(document, {
  target: null,
  refreshTarget,
  singlePickFallback: true,
  pendingText: "Choose files; the upload link is made when you upload.",
  onDone: async (files) => {
    const text = describeUploads(files);
    const capabilities = app.getHostCapabilities();
    let told = false;
    if (capabilities?.updateModelContext) {
      await app
        .updateModelContext({ content: [{ type: "text", text }], structuredContent: { uploads: files } })
        .then(() => {
          told = true;
        })
        .catch(() => {});
    }
    if (config.sendMessage && capabilities?.message) {
      await app
        .sendMessage({ role: "user", content: [{ type: "text", text }] })
        .then((result) => {
          if (!result.isError) told = true;
        })
        .catch(() => {});
    }
    if (told) return "The chat now knows about your files. You can go back to the conversation.";
    return `Copy this into the chat:\n${files.map((file) => `${file.name}: ${file.handle}`).join("\n")}`;
  },
});

// Handlers first, then connect: the host may send the tool result right after the handshake.
app.ontoolresult = (result) => {
  const target = targetFrom(result.structuredContent);
  if (target) uploader.setTarget(target);
};

void app.connect(new PostMessageTransport(window.parent, window.parent)).catch((error: unknown) => {
  const status = document.getElementById("status");
  if (status) status.textContent = `Could not connect to the chat app: ${String(error)}`;
});
