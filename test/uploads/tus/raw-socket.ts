/**
 * A tus client on a raw `net` socket, written from the tus 1.0 text: a `PATCH` whose body is cut
 * (the socket destroyed) after a known number of bytes, or whose reply is never read (the socket
 * destroyed once the request's last byte went out), and a plain request that reads one reply.
 */
import { connect, type Socket } from "node:net";

/** The head of an HTTP/1.1 request to `url`. */
function head(method: string, url: string, headers: Record<string, string>): string {
  const { host, pathname, search } = new URL(url);
  const lines = [`${method} ${pathname}${search} HTTP/1.1`, `host: ${host}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join("\r\n")}\r\n\r\n`;
}

function open(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => resolve(socket));
    socket.once("error", reject);
  });
}

function written(socket: Socket, data: Uint8Array | string): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.write(data, (error) => (error ? reject(error) : resolve()));
  });
}

/**
 * Sends a `PATCH` at `offset` announcing `contentLength` body bytes, writes `body` (fewer bytes,
 * or all of them), and destroys the socket once the kernel took the last of them, without reading
 * any reply: the server sees the bytes and then the connection go.
 *
 * A connection that goes loses what the server's HTTP layer read but had not handed on yet (Node
 * drops a request's unread buffer when its socket closes): up to one socket read. A test that needs
 * every byte taken passes `cutWhen`, checked every 5 ms (10 s at most) before the socket goes: the
 * reply is then lost, not the body's tail.
 */
export async function patchAndCut(
  url: string,
  offset: number,
  contentLength: number,
  body: Uint8Array,
  cutWhen?: () => boolean,
): Promise<void> {
  const socket = await open(url);
  socket.on("error", () => undefined);
  await written(
    socket,
    head("PATCH", url, {
      "tus-resumable": "1.0.0",
      "content-type": "application/offset+octet-stream",
      "upload-offset": String(offset),
      "content-length": String(contentLength),
    }),
  );
  for (let at = 0; at < body.length; at += 256 * 1024) {
    await written(socket, body.subarray(at, Math.min(body.length, at + 256 * 1024)));
  }
  const deadline = Date.now() + 10_000;
  while (cutWhen && !cutWhen() && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  socket.destroy();
}

/** One request on a fresh socket; resolves with the status line's code and the headers. */
export async function rawRequest(
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: Uint8Array,
): Promise<{ status: number; headers: Record<string, string> }> {
  const socket = await open(url);
  const all = { ...headers, connection: "close", ...(body ? { "content-length": String(body.length) } : {}) };
  return new Promise((resolve, reject) => {
    let text = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      text += chunk;
      const end = text.indexOf("\r\n\r\n");
      if (end === -1) return;
      const [status, ...lines] = text.slice(0, end).split("\r\n");
      const parsed: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(":");
        parsed[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      socket.destroy();
      resolve({ status: Number(status?.split(" ")[1]), headers: parsed });
    });
    socket.once("error", reject);
    socket.write(head(method, url, all));
    if (body) socket.write(body);
  });
}
