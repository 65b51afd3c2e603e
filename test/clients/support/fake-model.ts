/**
 * A fake model server on 127.0.0.1 for the client matrix: it speaks one vendor's API, logs every
 * request body, and plays a prompt that names tools, one a line ("CALL <tool> [<JSON arguments>]"): it calls them one
 * after the other, keeping each tool's result as the client forwarded it — what the model received —
 * for the test to assert on, then ends the turn. A tool named `TOOL#label` is called as `TOOL` and its
 * result kept under the whole name (one tool called several times). `$NAME` in a line's arguments is
 * replaced by `vars.NAME`, which `onResult` may set from an earlier result (an upload handle the
 * test obtained by HTTP between two calls of one session).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** An image the model was shown in a tool result: its media type and decoded bytes. */
export interface ReceivedImage {
  mimeType: string;
  data: Buffer;
}

/** The model's next move: call `tool` with `args` (`{}` by default), or say `text`. */
export interface Answer {
  tool?: string;
  args?: Record<string, unknown>;
  text?: string;
}

/** What one vendor adapter does with a request. */
export interface Dialect {
  /** Whether `path` is a model call this dialect answers. */
  handles(method: string, path: string): boolean;
  /** The newest tool result in the request (none when its last message is not one), as the model is shown it. */
  toolResults(body: unknown): string[];
  /** How many tool results the whole conversation in the request holds. */
  toolResultCount(body: unknown): number;
  /** The image blocks of the newest tool result in the request, as the model is shown them. */
  toolImages(body: unknown): ReceivedImage[];
  /** Tool names the request offers the model. */
  toolNames(body: unknown): string[];
  /** The user's prompt text. */
  prompt(body: unknown): string;
  /** Writes a reply that calls `tool` with `args`, or says `text` when `tool` is undefined. */
  reply(res: ServerResponse, body: unknown, path: string, answer: Answer): void;
}

/** Hooks of one fake model. */
export interface FakeModelOptions {
  /** Runs once per result, before the model answers: may act on it (an HTTP upload) and set `vars`. */
  onResult?: (name: string, text: string, vars: Map<string, string>) => Promise<void> | void;
}

export interface FakeModel {
  url: string;
  /** Every request, in order, with when it arrived (ms since the epoch). */
  requests: Array<{ path: string; body: unknown; at: number }>;
  /** What the model received from each tool, by the name the prompt used for it. */
  results: Map<string, string>;
  /** The images among it, by the same names. */
  images: Map<string, ReceivedImage[]>;
  /** Tool names offered in the request that named a tool. */
  offered: string[];
  /** What `onResult` threw, per result, and tools the prompt named that a request did not offer. */
  errors: string[];
  missing: string[];
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** Starts the fake model on 127.0.0.1 port 0. */
export async function startFakeModel(dialect: Dialect, options: FakeModelOptions = {}): Promise<FakeModel> {
  const requests: FakeModel["requests"] = [];
  const results = new Map<string, string>();
  const images = new Map<string, ReceivedImage[]>();
  const offered: string[] = [];
  const vars = new Map<string, string>();
  const handled = new Set<string>();
  const errors: string[] = [];
  const missing: string[] = [];
  const server: Server = createServer(async (req, res) => {
    const path = req.url ?? "/";
    const raw = await readBody(req);
    let body: unknown = null;
    try {
      body = raw.length > 0 ? JSON.parse(raw) : null;
    } catch {
      body = raw;
    }
    requests.push({ path, body, at: Date.now() });
    if (!dialect.handles(req.method ?? "GET", path)) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
      return;
    }
    const calls = [...dialect.prompt(body).matchAll(/CALL (\S+)(?: (\{.*\}))?/g)];
    const wanted = calls.map((match) => match[1] as string);
    const done = dialect.toolResultCount(body);
    const got = dialect.toolResults(body);
    const previous = wanted[done - 1];
    if (got.length > 0 && previous !== undefined) {
      results.set(previous, got.join("\n"));
      images.set(previous, dialect.toolImages(body));
      if (options.onResult !== undefined && !handled.has(previous)) {
        handled.add(previous);
        try {
          await options.onResult(previous, got.join("\n"), vars);
        } catch (error) {
          errors.push(`${previous}: ${(error as Error).message}`);
        }
      }
    }
    const next = wanted[done]?.split("#")[0];
    const template = (calls[done]?.[2] ?? "{}").replace(/\$([A-Z_]+)/g, (all, name: string) =>
      JSON.stringify(vars.get(name) ?? all).slice(1, -1),
    );
    const args = JSON.parse(template) as Record<string, unknown>;
    const names = dialect.toolNames(body);
    // Clients prefix MCP tools their own way (mcp__files__x, mcp_files_x, namespace mcp__files + x): the prompt names the suffix.
    const tool = names.find(
      (name) =>
        (next !== undefined && name === next) ||
        [`__${next}`, `_files_${next}`, `/${next}`].some((end) => name.endsWith(end)),
    );
    if (tool !== undefined) {
      offered.push(...names);
      dialect.reply(res, body, path, { tool, args });
      return;
    }
    // A tool the prompt names but the request does not offer (its server did not start in time?).
    if (next !== undefined && names.length > 0) missing.push(`${next} (offered: ${names.join(", ")})`);
    dialect.reply(res, body, path, { text: "Done." });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    results,
    images,
    offered,
    errors,
    missing,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
