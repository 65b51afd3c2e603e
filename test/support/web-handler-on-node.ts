/**
 * Answers a `node:http` request with a web-standard handler (an SDK v2 `createMcpHandler`'s `fetch`):
 * the request's headers and its already-read body become a `Request` whose signal aborts when the
 * client goes, and the `Response` streams back until it ends or the client is gone.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

export async function answerWithWebHandler(
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer<ArrayBuffer>,
  handle: (request: Request) => Promise<Response>,
): Promise<void> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === "string") headers.set(name, value);
    else if (Array.isArray(value)) headers.set(name, value.join(", "));
  }
  const controller = new AbortController();
  res.on("close", () => controller.abort());
  const response = await handle(
    new Request(`http://127.0.0.1${req.url ?? "/"}`, {
      method: req.method ?? "GET",
      headers,
      signal: controller.signal,
      ...(body.length > 0 && req.method !== "GET" ? { body } : {}),
    }),
  );
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) res.write(next.value);
  } catch {
    // the client went away
  }
  res.end();
}
