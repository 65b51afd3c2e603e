/**
 * A local https server on 127.0.0.1 (port 0) with a throwaway self-signed certificate, standing for
 * a remote file origin (a host's attachment download origin). A bridge reaches it only when it is
 * given the certificate (`https.ca`) and `allowPrivateAddresses: true`, the test-only knobs; the
 * defaults stay as strict as in production. Needs `openssl` on PATH (`hasOpenssl()`).
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** True when `openssl` can make the certificate. */
export function hasOpenssl(): boolean {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** A running origin: its `https://127.0.0.1:<port>` origin, the CA to trust, the paths requested. */
export interface HttpsOrigin {
  readonly origin: string;
  readonly port: number;
  readonly ca: Buffer;
  /** Every request path served so far, in order (to prove a refused URL was never fetched). */
  readonly requests: string[];
  close(): Promise<void>;
}

/** Starts an https origin whose requests `handle` answers. */
export async function startHttpsOrigin(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<HttpsOrigin> {
  const certDir = await mkdtemp(join(tmpdir(), "fb-origin-cert-"));
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        join(certDir, "key.pem"),
        "-out",
        join(certDir, "cert.pem"),
        "-days",
        "1",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=IP:127.0.0.1,DNS:localhost",
      ],
      { stdio: "ignore" },
    );
    const ca = await readFile(join(certDir, "cert.pem"));
    const key = await readFile(join(certDir, "key.pem"));
    const requests: string[] = [];
    const server = createServer({ key, cert: ca }, (req, res) => {
      requests.push(req.url ?? "/");
      handle(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    return {
      origin: `https://127.0.0.1:${port}`,
      port,
      ca,
      requests,
      close: async () => {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  } finally {
    await rm(certDir, { recursive: true, force: true, maxRetries: 3 });
  }
}
