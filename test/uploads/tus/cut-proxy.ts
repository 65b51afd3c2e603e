/**
 * A TCP proxy on 127.0.0.1 that loses the reply to the last `PATCH` of an upload: it forwards every
 * request, and when a `PATCH` body ends at one of the given upload sizes (`Upload-Offset` +
 * `Content-Length`), it kills both connections right after the body's last byte went on, before the
 * server's reply can come back. Each upload URL is cut once; its retries pass. Given several
 * targets it balances connections over them in turn (replicas behind a balancer).
 */
import { connect, createServer, type Socket } from "node:net";

export interface CutProxy {
  origin: string;
  /** How many replies were cut. */
  cuts(): number;
  close(): Promise<void>;
}

export async function startCutProxy(
  targets: URL | readonly URL[],
  sizes: readonly number[],
): Promise<CutProxy> {
  const upstreams = Array.isArray(targets) ? targets : [targets as URL];
  const cutPaths = new Set<string>();
  const sockets = new Set<Socket>();
  let turn = 0;
  const server = createServer((client) => {
    // Several targets: one after the other, per connection (a round-robin balancer).
    const target = upstreams[turn++ % upstreams.length] as URL;
    const upstream = connect({ host: target.hostname, port: Number(target.port) });
    sockets.add(client);
    sockets.add(upstream);
    const kill = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", kill);
    upstream.on("error", kill);
    client.on("close", () => {
      sockets.delete(client);
      upstream.destroy();
    });
    upstream.on("close", () => {
      sockets.delete(upstream);
      client.destroy();
    });
    upstream.pipe(client);
    let head = Buffer.alloc(0);
    /** Body bytes left of the current request; `cut` when its end is the upload's last byte. */
    let left = 0;
    let cut = false;
    client.on("data", (data: Buffer) => {
      let rest = data;
      while (rest.length > 0) {
        if (left > 0) {
          const take = Math.min(left, rest.length);
          const part = rest.subarray(0, take);
          rest = rest.subarray(take);
          left -= take;
          if (left === 0 && cut) {
            // The body's last byte goes on; then both connections die before any reply.
            upstream.write(part, () => kill());
            return;
          }
          upstream.write(part);
          continue;
        }
        head = Buffer.concat([head, rest]);
        const end = head.indexOf("\r\n\r\n");
        if (end === -1) return;
        const text = head.subarray(0, end).toString("latin1");
        upstream.write(head.subarray(0, end + 4));
        rest = head.subarray(end + 4);
        head = Buffer.alloc(0);
        const [line, ...lines] = text.split("\r\n");
        const headers = new Map(
          lines.map((entry) => {
            const colon = entry.indexOf(":");
            return [entry.slice(0, colon).trim().toLowerCase(), entry.slice(colon + 1).trim()] as const;
          }),
        );
        const [method, path = ""] = (line ?? "").split(" ");
        left = Number(headers.get("content-length") ?? 0);
        const offset = Number(headers.get("upload-offset") ?? Number.NaN);
        cut = method === "PATCH" && sizes.includes(offset + left) && !cutPaths.has(path) && left > 0;
        if (cut) cutPaths.add(path);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as { port: number };
  return {
    origin: `http://127.0.0.1:${port}`,
    cuts: () => cutPaths.size,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
