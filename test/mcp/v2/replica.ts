/**
 * One replica of a stateless SDK v2 files server, for the round-robin test: run as its own process
 * (`node --import tsx test/mcp/v2/replica.ts`), with the shared folder in `FILES_DIR` (fsStore and
 * the shared state) and the address clients use in `PUBLIC_URL` (the round robin in front). Prints
 * `{"port": …}` once it listens; stops on SIGTERM.
 */
import { join } from "node:path";
import { serveHttpV2, staticTokens } from "../../../examples/shared/serve-http-v2.js";
import { fsState } from "./fs-state.js";
import { filesApp, newV2Server, TOKENS } from "./harness.js";

const dir = process.env.FILES_DIR as string;
const app = await filesApp({ dir, state: fsState(join(dir, "state")) });
app.setOrigin(process.env.PUBLIC_URL as string);
const http = await serveHttpV2({
  createServer: () => app.mount(newV2Server()),
  routes: app.routes,
  authenticate: staticTokens(TOKENS),
});
app.registry.publishTo(http.handler);
process.stdout.write(`${JSON.stringify({ port: Number(new URL(http.url).port) })}\n`);
process.on("SIGTERM", () => {
  void http
    .close()
    .then(() => app.close())
    .then(() => process.exit(0));
});
