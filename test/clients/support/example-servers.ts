/**
 * The examples with file outputs that serve MCP over Streamable HTTP, started in the test process
 * for the client matrix, their data inside the run's temp HOME (removed with it): `examples/demo`
 * (`summarize_files`, an `artifacts.withArtifacts` report) and `examples/file-container` (`search`
 * and `navigate`, `registry.link()` to a stored file, behind a bearer API key) and `examples/screenshot`
 * (`render_page` and `show_photo`: images shaped for the model, originals linked). Each CLI connects to
 * them by URL, as it would to a remote server.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { createDemoApp } from "../../../examples/demo/app.js";
import { start as startFileContainer } from "../../../examples/file-container/server.js";
import { start as startScreenshot } from "../../../examples/screenshot/server.js";
import { serveHttp } from "../../../examples/shared/serve-http.js";

/** An MCP server a client reaches by URL. */
export interface HttpServerEntry {
  url: string;
  headers?: Record<string, string>;
}

/** The text of the file-container's seeded file (what `search` finds and `navigate` returns). */
export const CONTAINER_TEXT = "# Holidays\nEveryone gets 25 days of CONTAINER-HOLIDAY leave.\n";
/** The container's API key (a test value; the container is `acme`). */
const CONTAINER_KEY = "fc_matrix_test_key";

export interface ExampleServers {
  servers: { demo: HttpServerEntry; container: HttpServerEntry; shots: HttpServerEntry };
  /** The stored file's URI (`navigate`'s argument). */
  containerUri: string;
  /** The folder `examples/screenshot`'s `show_photo` reads paths from. */
  shotsWorkspace: string;
  close(): Promise<void>;
}

/** Starts both examples on 127.0.0.1, port 0, their files under `home`. */
export async function startExampleServers(home: string): Promise<ExampleServers> {
  const dataDir = join(home, "demo-data");
  await mkdir(join(dataDir, "workspace"), { recursive: true });
  let baseUrl = "";
  const demo = createDemoApp({ dataDir, baseUrl: () => baseUrl });
  const demoHttp = await serveHttp({ createServer: demo.createServer, routes: demo.routes });
  baseUrl = demoHttp.url;
  const container = await startFileContainer({
    keys: [{ key: CONTAINER_KEY, container: "acme" }],
    files: [{ container: "acme", name: "holidays.md", content: CONTAINER_TEXT }],
    dataDir: join(home, "container-data"),
    ledgerPath: join(home, "container-usage.jsonl"),
  });
  const shots = await startScreenshot(join(home, "screenshot-data"));
  const [seeded] = container.files;
  if (seeded === undefined) throw new Error("file-container stored no seed file");
  return {
    servers: {
      demo: { url: demoHttp.mcpUrl.href },
      container: {
        url: container.mcpUrl.href,
        headers: { Authorization: `Bearer ${CONTAINER_KEY}` },
      },
      shots: { url: shots.mcpUrl.href },
    },
    containerUri: container.registry.uriFor(seeded),
    shotsWorkspace: shots.workspace,
    async close() {
      await demoHttp.close();
      await demo.close();
      await container.close();
      await shots.close();
    },
  };
}
