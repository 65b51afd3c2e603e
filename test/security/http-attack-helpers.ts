import { createServer, type Server } from "node:http";
import { connect, type Socket } from "node:net";
import { type NodeHandlerOptions, toNodeHandler, type WebHandler } from "../../src/node/index.js";
import type { FileRoutesOptions } from "../../src/routes/create-file-routes.js";
import { createFileRoutes } from "../../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { memoryState } from "../../src/storage/memory-state.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import type { FileStore, StateStore } from "../../src/storage/types.js";
import { listen } from "../http/server-helpers.js";

export const SECRET = "a-test-secret-that-is-long-enough-0123456789";

/** A real `node:http` server on 127.0.0.1 running the file routes through `toNodeHandler`. */
export interface RoutesServer {
  server: Server;
  origin: string;
  store: FileStore;
  state: StateStore;
  minter: SignedUrlMinter;
  /** Every socket the server accepted, to read how many bytes it took in (`bytesRead`). */
  sockets: Socket[];
  /** Errors that reached the routes' `onError`. */
  errors: unknown[];
}

/** Starts the routes (plus `extra` options) on a real server; or any web handler via `handler`. */
export async function startRoutes(
  extra: Partial<FileRoutesOptions> = {},
  options: { handler?: (routes: WebHandler) => WebHandler; node?: NodeHandlerOptions } = {},
): Promise<RoutesServer> {
  const server = createServer();
  const sockets: Socket[] = [];
  server.on("connection", (socket) => sockets.push(socket));
  const origin = await listen(server);
  const store = extra.store ?? memoryStore({ sweepInterval: 0 });
  const state = extra.state ?? memoryState();
  const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: origin, state });
  const errors: unknown[] = [];
  const routes = createFileRoutes({
    store,
    minter,
    state,
    onError: (error) => errors.push(error),
    ...extra,
  });
  const handler = toNodeHandler(options.handler ? options.handler(routes) : routes, {
    onError: (error) => errors.push(error),
    ...options.node,
  });
  server.on("request", (req, res) => handler(req, res));
  return { server, origin, store, state, minter, sockets, errors };
}

/** What a raw-socket client saw. */
export interface SlowClientResult {
  /** Everything the server sent back. */
  response: string;
  /** The status code of the first response, or 0 if none came. */
  status: number;
  /** Milliseconds from the first byte sent until the server ended its side (FIN); null if it did not. */
  endedAfterMs: number | null;
  /** Milliseconds from the first byte sent until the connection closed; null if it did not. */
  closedAfterMs: number | null;
  /** Body bytes the client managed to hand to its socket. */
  sent: number;
}

/**
 * A client that sends `head` (request line and headers) and then body chunks at a steady pace for up
 * to `maxMs`, reading whatever the server answers, and notes when the server ends the connection.
 * This is the attack: announce a huge body, then keep feeding it.
 */
export function slowClient(
  origin: string,
  head: string,
  options: { chunk?: Buffer | string; everyMs?: number; maxMs?: number; stopAfter?: number } = {},
): Promise<SlowClientResult> {
  const { port } = new URL(origin);
  const chunk = options.chunk ?? Buffer.alloc(64 * 1024, 0x61);
  const everyMs = options.everyMs ?? 5;
  const maxMs = options.maxMs ?? 3000;
  return new Promise((resolve) => {
    const socket = connect(Number(port), "127.0.0.1");
    const started = Date.now();
    let response = "";
    let sent = 0;
    let closedAfterMs: number | null = null;
    let endedAfterMs: number | null = null;
    let timer: NodeJS.Timeout | undefined;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearInterval(timer);
      clearTimeout(deadline);
      socket.destroy();
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0);
      resolve({ response, status, endedAfterMs, closedAfterMs, sent });
    };
    const deadline = setTimeout(finish, maxMs);
    socket.on("error", () => {});
    socket.on("data", (data) => {
      response += data.toString("latin1");
    });
    socket.on("end", () => {
      endedAfterMs = Date.now() - started;
    });
    socket.on("close", () => {
      closedAfterMs = Date.now() - started;
      finish();
    });
    socket.on("connect", () => {
      socket.write(head);
      timer = setInterval(() => {
        if (socket.destroyed || !socket.writable) return;
        if (options.stopAfter !== undefined && sent >= options.stopAfter) return;
        if (socket.writableLength > 4 * chunk.length) return; // the server is not reading: wait
        socket.write(chunk);
        sent += chunk.length;
      }, everyMs);
    });
  });
}

/** The JSON error code in a raw HTTP response text. */
export function errorCodeIn(response: string): string | undefined {
  return /"code":"([A-Z_]+)"/.exec(response)?.[1];
}

/** The value of a header in a raw HTTP response text (first response only). */
export function headerIn(response: string, name: string): string | undefined {
  const head = response.split("\r\n\r\n")[0] ?? "";
  for (const line of head.split("\r\n").slice(1)) {
    const colon = line.indexOf(":");
    if (line.slice(0, colon).trim().toLowerCase() === name.toLowerCase()) return line.slice(colon + 1).trim();
  }
  return undefined;
}

/** Bytes the server read from all its sockets. */
export function serverBytesRead(sockets: Socket[]): number {
  return sockets.reduce((total, socket) => total + socket.bytesRead, 0);
}
