import { readdir } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

/** Starts listening on 127.0.0.1, port 0; resolves with the origin. */
export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

/** Closes a server and every connection it still holds. */
export async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** Every regular file under `root`, recursively. */
export async function filesUnder(root: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
      if (entry.isFile()) out.push(join(entry.parentPath, entry.name));
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  return out;
}
