/**
 * Runs the screenshot example over Streamable HTTP: `npx tsx examples/screenshot/server.ts`, then
 * point a client at the printed MCP URL and ask it to render a page or show a photo.
 */
import { mkdir, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serveHttp } from "../shared/serve-http.js";
import { createScreenshotApp } from "./app.js";

/** Starts the example on 127.0.0.1 (`port` 0: a free one), its files under `dataDir`. */
export async function start(dataDir?: string, port = 0) {
  const dir = dataDir ?? (await mkdtemp(join(tmpdir(), "mfb-screenshot-")));
  await mkdir(join(dir, "workspace"), { recursive: true });
  let baseUrl = "";
  const app = createScreenshotApp({ dataDir: dir, baseUrl: () => baseUrl });
  const http = await serveHttp({ createServer: app.createServer, routes: app.routes, port });
  baseUrl = http.url;
  return {
    app,
    http,
    mcpUrl: http.mcpUrl,
    workspace: app.workspace,
    async close() {
      await http.close();
      await app.close();
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const running = await start(undefined, Number(process.env.PORT ?? 0));
  console.log(
    `screenshot example: MCP at ${running.mcpUrl.href}; photos may be read from ${running.workspace}`,
  );
}
