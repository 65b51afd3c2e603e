/** The OpenAI Responses dialect of the fake model (what Codex CLI speaks with `wire_api = "responses"`). */
import type { ServerResponse } from "node:http";
import type { Dialect, ReceivedImage } from "./fake-model.js";

type Item = { type?: string; role?: string; content?: unknown; output?: unknown; name?: string };
type Tool = { type?: string; name?: string; tools?: Tool[] };
type Body = { input?: Item[]; tools?: Tool[] };

/** Tool names as "namespace/name" for tools inside a namespace, else the bare name. */
function names(tools: Tool[], prefix = ""): string[] {
  return tools.flatMap((tool) =>
    tool.type === "namespace" && Array.isArray(tool.tools)
      ? names(tool.tools, `${tool.name}/`)
      : tool.name !== undefined
        ? [`${prefix}${tool.name}`]
        : [],
  );
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return JSON.stringify(content ?? "");
  return (content as Array<{ type?: string; text?: string }>)
    .map((part) => (typeof part.text === "string" ? part.text : JSON.stringify(part)))
    .join("\n");
}

/** The `input_image` parts (data URLs) of a function call's output. */
function outputImages(output: unknown): ReceivedImage[] {
  if (!Array.isArray(output)) return [];
  return (output as Array<{ type?: string; image_url?: string }>).flatMap((part): ReceivedImage[] => {
    const match = /^data:([^;,]+);base64,(.*)$/s.exec(part.image_url ?? "");
    return part.type === "input_image" && match
      ? [{ mimeType: match[1] as string, data: Buffer.from(match[2] as string, "base64") }]
      : [];
  });
}

let calls = 0;

function event(res: ServerResponse, data: Record<string, unknown>): void {
  res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
}

export const openaiResponses: Dialect = {
  handles: (method, path) => method === "POST" && path.endsWith("/responses"),
  toolResults(body) {
    const input = (body as Body)?.input ?? [];
    const last = input[input.length - 1];
    return last?.type === "function_call_output" ? [textOf(last.output)] : [];
  },
  toolImages(body) {
    const input = (body as Body)?.input ?? [];
    const last = input[input.length - 1];
    return last?.type === "function_call_output" ? outputImages(last.output) : [];
  },
  toolResultCount: (body) =>
    ((body as Body)?.input ?? []).filter((item) => item.type === "function_call_output").length,
  toolNames: (body) => names((body as Body)?.tools ?? []),
  prompt: (body) =>
    ((body as Body)?.input ?? [])
      .filter((item) => item.type === "message" && item.role === "user")
      .map((item) => textOf(item.content))
      .join("\n"),
  reply(res, _body, _path, answer) {
    calls += 1;
    let item: Record<string, unknown>;
    if (answer.tool !== undefined) {
      const slash = answer.tool.lastIndexOf("/");
      const name = slash < 0 ? answer.tool : answer.tool.slice(slash + 1);
      item = {
        type: "function_call",
        id: `fc_${calls}`,
        call_id: `call_${calls}`,
        name,
        arguments: JSON.stringify(answer.args ?? {}),
      };
      if (slash >= 0) item.namespace = answer.tool.slice(0, slash);
    } else {
      const content = [{ type: "output_text", text: answer.text ?? "", annotations: [] }];
      item = { type: "message", id: `msg_${calls}`, role: "assistant", status: "completed", content };
    }
    const response = { id: `resp_${calls}`, object: "response", status: "in_progress", output: [] };
    const usage = {
      input_tokens: 10,
      input_tokens_details: null,
      output_tokens: 5,
      output_tokens_details: null,
      total_tokens: 15,
    };
    res.writeHead(200, { "content-type": "text/event-stream" });
    event(res, { type: "response.created", response });
    event(res, { type: "response.output_item.added", output_index: 0, item });
    event(res, { type: "response.output_item.done", output_index: 0, item });
    event(res, {
      type: "response.completed",
      response: { ...response, status: "completed", output: [item], usage },
    });
    res.end();
  },
};
