/** The Anthropic Messages dialect of the fake model (what Claude Code speaks), streaming or not. */
import type { ServerResponse } from "node:http";
import type { Dialect, ReceivedImage } from "./fake-model.js";

type Block = {
  type: string;
  text?: string;
  content?: unknown;
  name?: string;
  source?: { type?: string; media_type?: string; data?: string };
};
type Message = { role: string; content: string | Block[] };
type Body = { messages?: Message[]; tools?: Array<{ name: string }>; stream?: boolean; model?: string };

function blocks(message: Message | undefined): Block[] {
  if (message === undefined) return [];
  return typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
}

/** The text of a `tool_result` block's content (a string, or text and other blocks). */
function resultText(block: Block): string {
  if (typeof block.content === "string") return block.content;
  if (!Array.isArray(block.content)) return "";
  return (block.content as Block[])
    .map((part) => (part.type === "text" ? (part.text ?? "") : `[${part.type} block]`))
    .join("\n");
}

function send(res: ServerResponse, events: Array<Record<string, unknown>>): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const event of events) res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  res.end();
}

let calls = 0;

/** The newest `tool_result` block of the request's last (user) message. */
function newestResult(body: unknown): Block | undefined {
  const messages = (body as Body)?.messages ?? [];
  const last = messages[messages.length - 1];
  if (last?.role !== "user") return undefined;
  // Claude Code merges the turn's user messages: the newest result is the last block.
  const results = blocks(last).filter((block) => block.type === "tool_result");
  return results[results.length - 1];
}

export const anthropic: Dialect = {
  handles: (method, path) => method === "POST" && path.startsWith("/v1/messages"),
  toolResults(body) {
    const newest = newestResult(body);
    return newest === undefined ? [] : [resultText(newest)];
  },
  toolImages(body) {
    const content = newestResult(body)?.content;
    if (!Array.isArray(content)) return [];
    return (content as Block[]).flatMap((part): ReceivedImage[] =>
      part.type === "image" && part.source?.type === "base64" && typeof part.source.data === "string"
        ? [{ mimeType: part.source.media_type ?? "", data: Buffer.from(part.source.data, "base64") }]
        : [],
    );
  },
  toolResultCount: (body) =>
    ((body as Body)?.messages ?? [])
      .filter((message) => message.role === "user")
      .flatMap(blocks)
      .filter((block) => block.type === "tool_result").length,
  toolNames: (body) => ((body as Body)?.tools ?? []).map((tool) => tool.name),
  prompt: (body) =>
    ((body as Body)?.messages ?? [])
      .filter((message) => message.role === "user")
      .flatMap(blocks)
      .map((block) => (block.type === "text" ? (block.text ?? "") : ""))
      .join("\n"),
  reply(res, raw, path, answer) {
    const body = raw as Body;
    if (path.startsWith("/v1/messages/count_tokens")) {
      res.writeHead(200, { "content-type": "application/json" }).end('{"input_tokens":10}');
      return;
    }
    calls += 1;
    const content =
      answer.tool !== undefined
        ? { type: "tool_use", id: `toolu_${calls}`, name: answer.tool, input: answer.args ?? {} }
        : { type: "text", text: answer.text ?? "" };
    const stop = answer.tool !== undefined ? "tool_use" : "end_turn";
    const usage = { input_tokens: 10, output_tokens: 5 };
    const message = { id: "msg_fake", type: "message", role: "assistant", model: body.model ?? "fake" };
    if (body.stream !== true) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ ...message, content: [content], stop_reason: stop, stop_sequence: null, usage }),
      );
      return;
    }
    const start = content.type === "tool_use" ? { ...content, input: {} } : { type: "text", text: "" };
    const delta =
      content.type === "tool_use"
        ? { type: "input_json_delta", partial_json: JSON.stringify(answer.args ?? {}) }
        : { type: "text_delta", text: answer.text ?? "" };
    send(res, [
      {
        type: "message_start",
        message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage },
      },
      { type: "content_block_start", index: 0, content_block: start },
      { type: "content_block_delta", index: 0, delta },
      { type: "content_block_stop", index: 0 },
      {
        type: "message_delta",
        delta: { stop_reason: stop, stop_sequence: null },
        usage: { output_tokens: 5 },
      },
      { type: "message_stop" },
    ]);
  },
};
