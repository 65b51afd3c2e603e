/** The Gemini generateContent dialect of the fake model (what Gemini CLI speaks), streaming or not. */
import type { ServerResponse } from "node:http";
import type { Dialect, ReceivedImage } from "./fake-model.js";

type Part = {
  text?: string;
  functionCall?: { name: string };
  functionResponse?: { name: string; response?: unknown; parts?: Part[] };
  inlineData?: { mimeType: string; data: string };
};
type Content = { role?: string; parts?: Part[] };
type Body = { contents?: Content[]; tools?: Array<{ functionDeclarations?: Array<{ name: string }> }> };

/** What the model is shown of one user turn's tool results: every part, as JSON. */
function turnText(content: Content): string {
  return (content.parts ?? []).map((part) => JSON.stringify(part)).join("\n");
}

function hasResult(content: Content | undefined): boolean {
  return (content?.parts ?? []).some((part) => part.functionResponse !== undefined);
}

/** Every `inlineData` part in `value`, however deep (a function response's own parts, or the turn's). */
function inlineImages(value: unknown): ReceivedImage[] {
  if (Array.isArray(value)) return value.flatMap(inlineImages);
  if (value === null || typeof value !== "object") return [];
  const inline = (value as Part).inlineData;
  if (inline !== undefined && typeof inline.data === "string") {
    return [{ mimeType: inline.mimeType, data: Buffer.from(inline.data, "base64") }];
  }
  return Object.values(value).flatMap(inlineImages);
}

let calls = 0;

export const gemini: Dialect = {
  handles: (method, path) => method === "POST" && /\/models\/[^/:]+:(stream)?[gG]enerateContent/.test(path),
  toolResults(body) {
    const contents = (body as Body)?.contents ?? [];
    const last = contents[contents.length - 1];
    return last?.role === "user" && hasResult(last) ? [turnText(last)] : [];
  },
  toolImages(body) {
    const contents = (body as Body)?.contents ?? [];
    const last = contents[contents.length - 1];
    return last?.role === "user" && hasResult(last) ? inlineImages(last.parts) : [];
  },
  toolResultCount: (body) => ((body as Body)?.contents ?? []).filter((content) => hasResult(content)).length,
  toolNames: (body) =>
    ((body as Body)?.tools ?? []).flatMap((tool) => (tool.functionDeclarations ?? []).map((f) => f.name)),
  prompt: (body) =>
    ((body as Body)?.contents ?? [])
      .filter((content) => content.role === "user")
      .flatMap((content) => content.parts ?? [])
      .map((part) => part.text ?? "")
      .join("\n"),
  reply(res: ServerResponse, _body, path, answer) {
    calls += 1;
    const part =
      answer.tool !== undefined
        ? { functionCall: { id: `call_${calls}`, name: answer.tool, args: answer.args ?? {} } }
        : { text: answer.text ?? "" };
    const chunk = {
      candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      modelVersion: "gemini-2.5-flash",
    };
    if (path.includes(":streamGenerateContent")) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(`data: ${JSON.stringify(chunk)}\n\n`);
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(chunk));
  },
};
