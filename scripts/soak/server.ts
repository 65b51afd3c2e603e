/**
 * The soak's server, in a process of its own so its memory is measured alone: the examples' HTTP
 * server (SDK v1 sessions, their header/request timeouts) with a registry, the upload-URL tool and
 * the file routes on an fsStore. Prints `READY {"url": ...}`, then answers `{"cmd": "stats"}` on
 * stdin with its memory (after a full GC when run with `--expose-gc`) and the sizes of the state it
 * holds; `{"cmd": "snapshot", "path": ...}` writes a heap snapshot.
 *
 *   node --expose-gc --import tsx scripts/soak/server.ts /tmp/soak-dir [sessionIdleMs] [indexIdleMs] [handleTtlMs]
 */

import { join } from "node:path";
import { writeHeapSnapshot } from "node:v8";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { servePeer } from "../../bench/_lib.js";
import { serveHttp } from "../../examples/shared/serve-http.js";
import { toNodeHandler } from "../../src/node/index.js";
import { ResourceRegistry } from "../../src/registry/resource-registry.js";
import { createFileRoutes } from "../../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { fsStore } from "../../src/storage/fs-store.js";
import { memoryState } from "../../src/storage/memory-state.js";
import { UploadHandleResolver } from "../../src/uploads/upload-handle-resolver.js";

const [dir, idle, indexIdle, handleTtl] = process.argv.slice(2) as Array<string | undefined> as [
  string,
  ...Array<string | undefined>,
];
const store = fsStore(join(dir, "store"));
const state = memoryState();
let baseUrl = "http://127.0.0.1";
const minter = new SignedUrlMinter({ secret: "soak-secret-".repeat(4), baseUrl: () => baseUrl, state });
// Scope indexes of sessions gone are dropped after this long unused (the registry's default: 10 min).
const registry = new ResourceRegistry({
  store,
  minter,
  indexIdleTimeout: `${Number(indexIdle ?? 600_000)}ms`,
});
// Uploaded files and their ticket records live this long (the resolver's default: 1 h).
const uploads = new UploadHandleResolver({
  store,
  minter,
  state,
  maxBytes: 1024 * 1024,
  handleTtl: `${Number(handleTtl ?? 3_600_000)}ms`,
});
const routes = toNodeHandler(createFileRoutes({ store, minter, state, registry, maxBytes: 1024 * 1024 }));

const running = await serveHttp({
  // Clients that leave without DELETE: their sessions are closed after this long without a request.
  sessionIdleMs: Number(idle ?? 600_000),
  createServer: () => {
    const server = new McpServer({ name: "soak", version: "1.0.0" });
    registry.attach(server);
    uploads.attach(server);
    return server;
  },
  routes: (req, res, next) => {
    if ((req.url ?? "").startsWith("/files/")) routes(req, res);
    else next();
  },
});
baseUrl = running.url;

/**
 * Sizes of the in-memory state, read through the private fields a heap snapshot would show. The
 * scope indexes live in the registry's work, made at its first async call (made here if not yet).
 */
async function held(): Promise<Record<string, number>> {
  const work = await (registry as unknown as { work: () => Promise<unknown> }).work();
  const peek = (object: unknown, ...path: string[]): number => {
    let value = object as Record<string, unknown> | undefined;
    for (const key of path) value = value?.[key] as Record<string, unknown> | undefined;
    return value instanceof Map || value instanceof Set ? value.size : -1;
  };
  return {
    sessions: running.sessions.size,
    attachments: peek(registry, "notifier", "attachments"),
    scopeIndexes: peek(work, "indexes", "indexes"),
    scopeMutexes: peek(work, "indexes", "mutexes"),
  };
}

await servePeer(
  { url: running.url, pid: process.pid },
  async (command) => {
    if (command.cmd === "snapshot") return { path: writeHeapSnapshot(String(command.path)) };
    (globalThis as { gc?: () => void }).gc?.();
    const memory = process.memoryUsage();
    return { ...memory, ...(await held()) };
  },
  () => running.close(),
);
