/**
 * LOCAL STAND-IN, RUNS OFFLINE. A tiny OpenAI-compatible provider so the provider-upload example works
 * without network or account: `POST /v1/files` (multipart `file` + `purpose`), `GET /v1/files/{id}`,
 * `GET /v1/files/{id}/content`, `DELETE /v1/files/{id}` and a toy `POST /v1/chat/completions` that
 * "answers" by describing the files it was given. It is not a model; it only proves the file transfer.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createReadStream, createWriteStream, rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { Busboy } from "@fastify/busboy";
import { httpServerOptions } from "../shared/server-limits.js";

/** One file the stand-in received, as OpenAI's `/files` returns it plus what the test checks. */
export interface ReceivedFile {
  id: string;
  object: "file";
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  /** Not part of OpenAI's shape: sha256 of the bytes that arrived, and the declared part type. */
  sha256: string;
  contentType: string;
  /** True once `DELETE /v1/files/{id}` ran. */
  deleted: boolean;
}

/** Options of {@link startLocalProvider}. */
export interface LocalProviderOptions {
  /** Bearer key the stand-in expects. @default a random key (see `apiKey` on the result) */
  apiKey?: string;
  /** @default 0 (a free port) */
  port?: number;
  /** Largest accepted upload in bytes. @default 104857600 (100 MiB) */
  maxBytes?: number;
}

/** A running stand-in. */
export interface LocalProvider {
  /** Base URL to give an OpenAI-compatible client, e.g. `http://127.0.0.1:41234/v1`. */
  baseUrl: string;
  apiKey: string;
  /** Every file received, in order (deleted ones stay here with `deleted: true`). */
  received: ReceivedFile[];
  /** Every chat completion request body received. */
  completions: unknown[];
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function apiError(
  res: ServerResponse,
  status: number,
  message: string,
  type = "invalid_request_error",
): void {
  json(res, status, { error: { message, type, param: null, code: null } });
}

async function readJson(req: IncomingMessage, limit = 1024 * 1024): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new Error("body too large");
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

/**
 * Starts the offline stand-in on 127.0.0.1.
 *
 * @example
 * ```ts
 * const provider = await startLocalProvider();
 * console.log(provider.baseUrl, provider.apiKey);
 * ```
 */
export async function startLocalProvider(options: LocalProviderOptions = {}): Promise<LocalProvider> {
  const apiKey = options.apiKey ?? `sk-local-${randomBytes(12).toString("hex")}`;
  const maxBytes = options.maxBytes ?? 100 * 1024 * 1024;
  const dir = await mkdtemp(join(tmpdir(), "local-provider-"));
  const removeOnExit = () => rmSync(dir, { recursive: true, force: true });
  process.once("exit", removeOnExit);
  const received: ReceivedFile[] = [];
  const completions: unknown[] = [];
  const expected = createHash("sha256").update(`Bearer ${apiKey}`).digest();

  const authorized = (req: IncomingMessage) =>
    timingSafeEqual(
      createHash("sha256")
        .update(req.headers.authorization ?? "")
        .digest(),
      expected,
    );

  function receiveFile(req: IncomingMessage, res: ServerResponse): void {
    const id = `file-${randomBytes(12).toString("hex")}`;
    const path = join(dir, id);
    let purpose = "";
    let file: Promise<{ filename: string; bytes: number; sha256: string; contentType: string }> | undefined;
    let failed = false;
    let parser: ReturnType<typeof Busboy>;
    try {
      parser = Busboy({
        headers: req.headers as { "content-type": string },
        limits: { files: 1, fileSize: maxBytes },
      });
    } catch {
      apiError(res, 400, "Expected a multipart/form-data body");
      return;
    }
    parser.on("field", (name, value) => {
      if (name === "purpose") purpose = value;
    });
    parser.on("file", (field, stream, filename, _encoding, contentType) => {
      if (field !== "file" || file) {
        stream.resume();
        return;
      }
      const hash = createHash("sha256");
      let bytes = 0;
      stream.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
        hash.update(chunk);
      });
      stream.on("limit", () => {
        failed = true;
      });
      file = pipeline(stream, createWriteStream(path)).then(() => ({
        filename,
        bytes,
        sha256: hash.digest("hex"),
        contentType,
      }));
      file.catch(() => {});
    });
    parser.on("error", () => {
      if (!res.headersSent) apiError(res, 400, "Malformed multipart body");
    });
    parser.on("finish", async () => {
      try {
        if (!file) return apiError(res, 400, "Missing 'file' part");
        const info = await file;
        if (failed) {
          await rm(path, { force: true });
          return apiError(res, 413, "File too large");
        }
        if (!purpose) {
          await rm(path, { force: true });
          return apiError(res, 400, "Missing 'purpose' field");
        }
        const entry: ReceivedFile = {
          id,
          object: "file",
          bytes: info.bytes,
          created_at: Math.floor(Date.now() / 1000),
          filename: info.filename,
          purpose,
          sha256: info.sha256,
          contentType: info.contentType,
          deleted: false,
        };
        received.push(entry);
        json(res, 200, publicShape(entry));
      } catch {
        await rm(path, { force: true });
        if (!res.headersSent) apiError(res, 500, "Could not store the file", "server_error");
      }
    });
    req.pipe(parser);
  }

  function publicShape(entry: ReceivedFile) {
    const { id, object, bytes, created_at, filename, purpose } = entry;
    return { id, object, bytes, created_at, filename, purpose };
  }

  async function chat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = (await readJson(req)) as {
      model?: string;
      messages?: Array<{ role: string; content: string | Array<Record<string, unknown>> }>;
    };
    completions.push(body);
    const fileIds: string[] = [];
    let prompt = "";
    for (const message of body.messages ?? []) {
      if (typeof message.content === "string") prompt += message.content;
      else
        for (const part of message.content) {
          if (part.type === "text" && typeof part.text === "string") prompt += part.text;
          const ref = part.file as { file_id?: string } | undefined;
          if (part.type === "file" && ref?.file_id) fileIds.push(ref.file_id);
        }
    }
    const files = fileIds.map((fid) => received.find((entry) => entry.id === fid && !entry.deleted));
    if (files.some((entry) => entry === undefined)) return apiError(res, 404, "Unknown file id");
    const listing = (files as ReceivedFile[]).map(
      (f) => `${f.filename} (${f.bytes} bytes, sha256 ${f.sha256.slice(0, 12)}…)`,
    );
    const answer = `[local stand-in] Prompt: "${prompt}". Files: ${listing.length ? listing.join("; ") : "none"}.`;
    json(res, 200, {
      id: `chatcmpl-${randomBytes(8).toString("hex")}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: body.model ?? "local-stand-in",
      choices: [{ index: 0, message: { role: "assistant", content: answer }, finish_reason: "stop" }],
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    });
  }

  const server: Server = createServer(httpServerOptions(), (req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (!authorized(req)) {
      req.resume();
      return apiError(res, 401, "Incorrect API key provided", "invalid_api_key");
    }
    const fileRoute = /^\/v1\/files\/([A-Za-z0-9-]+)(\/content)?$/.exec(url.pathname);
    if (url.pathname === "/v1/files" && req.method === "POST") return receiveFile(req, res);
    if (url.pathname === "/v1/chat/completions" && req.method === "POST") {
      chat(req, res).catch(() => apiError(res, 400, "Invalid JSON body"));
      return;
    }
    if (fileRoute) {
      const entry = received.find((f) => f.id === fileRoute[1] && !f.deleted);
      if (!entry) return apiError(res, 404, "No such file");
      if (req.method === "DELETE" && !fileRoute[2]) {
        entry.deleted = true;
        rm(join(dir, entry.id), { force: true }).then(
          () => json(res, 200, { id: entry.id, object: "file", deleted: true }),
          () => apiError(res, 500, "Could not delete", "server_error"),
        );
        return;
      }
      if (req.method === "GET" && fileRoute[2]) {
        res.writeHead(200, { "content-type": "application/octet-stream", "content-length": entry.bytes });
        pipeline(createReadStream(join(dir, entry.id)), res).catch(() => res.destroy());
        return;
      }
      if (req.method === "GET") return json(res, 200, publicShape(entry));
    }
    req.resume();
    apiError(res, 404, `No route for ${req.method} ${url.pathname}`);
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    apiKey,
    received,
    completions,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
      process.off("exit", removeOnExit);
    },
  };
}
