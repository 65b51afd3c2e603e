/**
 * Runs N replicas of `server.ts` as separate processes on one S3 bucket and one Redis, behind a real
 * HAProxy. SDK v1 replicas (the default):
 * - `/mcp` (stateful) is sticky on `Mcp-Session-Id`: HAProxy learns the id from the response that
 *   created the session and sends every later request of that session to the same replica;
 * - `/mcp-stateless` and the upload/download routes go round-robin, no stickiness.
 *
 * SDK v2 replicas (`--sdk v2`): `/mcp` is stateless (2026-07-28, and the 2025 era served without
 * sessions), so everything goes round-robin: the configuration has no stickiness at all.
 *
 *   npx tsx examples/replicas/cluster.ts             # starts radosgw + redis-server too, prints the URLs
 *   npx tsx examples/replicas/cluster.ts --sdk v2    # the same with SDK v2 replicas
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  freePort,
  type ServiceEndpoints,
  startServices,
  stopServices,
} from "../../scripts/services/services.js";
import { type SdkGeneration, sdkFlag } from "../shared/serve-http-v2.js";
import { userToken } from "./server.js";

const here = dirname(fileURLToPath(import.meta.url));

export interface Replica {
  name: string;
  url: string;
  process: ChildProcess;
}

export interface Cluster {
  /** The load balancer's URL: clients use this. */
  url: string;
  /** The MCP SDK generation the replicas serve `/mcp` with. */
  sdk: SdkGeneration;
  /** The configuration HAProxy runs with. */
  haproxyConfig: string;
  replicas: Replica[];
  secret: string;
  /** S3 key prefix and Redis key prefix of this deployment. */
  s3Prefix: string;
  redisPrefix: string;
  /** Stops HAProxy and the replicas. */
  close(): Promise<void>;
}

/**
 * The HAProxy configuration for the replicas. `sticky` (SDK v1's stateful `/mcp`) pins each MCP
 * session to the replica that created it; without it (SDK v2, stateless) every route is plain
 * round-robin.
 */
export function haproxyConfig(
  port: number,
  replicas: Array<{ name: string; url: string }>,
  { sticky = true, httpRequestTimeout = "10s" }: { sticky?: boolean; httpRequestTimeout?: string } = {},
): string {
  const servers = replicas
    .map((r) => `  server ${r.name} ${new URL(r.url).host} check inter 500ms`)
    .join("\n");
  if (!sticky) {
    return `global
  maxconn 2000
defaults
  mode http
  timeout connect 5s
  # subscriptions/listen streams stay open: long timeouts
  timeout client 10m
  timeout server 10m
  # A client must send its request head within this (a socket that sends nothing: 408, closed). Without
  # it HAProxy waits \`timeout client\` (10 min) on a silent socket: the replicas' own header timeout
  # never applies, since HAProxy opens no server connection before a request arrives.
  timeout http-request ${httpRequestTimeout}
  timeout http-keep-alive 5s
  # Each client connection gets its own server connections. A shared idle one can be closed by the
  # server (keepAliveTimeout, 5 s) just as a request is sent on it; HAProxy then closes the client's
  # connection without an answer, and a POST is not retried ("other side closed").
  http-reuse never
  option redispatch
  retries 2
frontend lb
  bind 127.0.0.1:${port}
  default_backend round_robin
backend round_robin
  # Stateless MCP, uploads and downloads alike: any replica answers any request.
  balance roundrobin
${servers}
`;
  }
  return `global
  maxconn 2000
defaults
  mode http
  timeout connect 5s
  timeout client 10m
  timeout server 10m
  # A client must send its request head within this (a socket that sends nothing: 408, closed). Without
  # it HAProxy waits \`timeout client\` (10 min) on a silent socket: the replicas' own header timeout
  # never applies, since HAProxy opens no server connection before a request arrives.
  timeout http-request ${httpRequestTimeout}
  timeout http-keep-alive 5s
  # Each client connection gets its own server connections. A shared idle one can be closed by the
  # server (keepAliveTimeout, 5 s) just as a request is sent on it; HAProxy then closes the client's
  # connection without an answer, and a POST is not retried ("other side closed").
  http-reuse never
  option redispatch
  retries 2
frontend lb
  bind 127.0.0.1:${port}
  use_backend mcp_sticky if { path /mcp }
  default_backend round_robin
backend mcp_sticky
  balance roundrobin
  # A new session lands anywhere; its id is learned from the response and pinned to that replica.
  stick-table type string len 64 size 100k expire 30m
  stick match req.hdr(mcp-session-id)
  stick store-response res.hdr(mcp-session-id)
${servers}
backend round_robin
  balance roundrobin
${servers}
`;
}

async function waitForPort(port: number, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: "127.0.0.1", port }, () => {
        socket.end();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`nothing listens on port ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts one replica process; resolves once it printed READY. */
export function spawnReplica(
  name: string,
  env: Record<string, string>,
  sdk: SdkGeneration = "v1",
): Promise<Replica> {
  const child = spawn(process.execPath, ["--import", "tsx", join(here, "server.ts"), "--sdk", sdk], {
    env: { ...process.env, ...env, REPLICA: name, PORT: "0" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NonNullable<typeof child.stdout> });
    const timer = setTimeout(() => reject(new Error(`replica ${name} did not start`)), 30_000);
    lines.on("line", (line) => {
      const ready = /^READY (\S+)$/.exec(line);
      if (ready) {
        clearTimeout(timer);
        resolve({ name, url: ready[1] as string, process: child });
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`replica ${name} exited with ${code}`));
    });
  });
}

/** Starts `count` replicas and HAProxy in front of them, on the given services. */
export async function startCluster(
  services: ServiceEndpoints,
  count = 3,
  { sdk = "v1" }: { sdk?: SdkGeneration } = {},
): Promise<Cluster> {
  if (!services.s3 || !services.redis) throw new Error("the cluster needs S3 and Redis");
  const secret = randomBytes(32).toString("base64url");
  const s3Prefix = `replicas-${randomBytes(4).toString("hex")}/`;
  const redisPrefix = `replicas-${randomBytes(4).toString("hex")}:`;
  const lbPort = await freePort();
  const env = {
    SECRET: secret,
    PUBLIC_URL: `http://127.0.0.1:${lbPort}`,
    S3_ENDPOINT: services.s3.endpoint,
    S3_BUCKET: services.s3.bucket,
    S3_PREFIX: s3Prefix,
    AWS_ACCESS_KEY_ID: services.s3.accessKeyId,
    AWS_SECRET_ACCESS_KEY: services.s3.secretAccessKey,
    AWS_REGION: services.s3.region,
    REDIS_URL: services.redis.url,
    REDIS_PREFIX: redisPrefix,
  };
  const names = "abcdefghij".slice(0, count).split("");
  const replicas = await Promise.all(names.map((name) => spawnReplica(name, env, sdk)));
  const dir = await mkdtemp(join(tmpdir(), "mfb-haproxy-"));
  const config = join(dir, "haproxy.cfg");
  const configText = haproxyConfig(lbPort, replicas, { sticky: sdk === "v1" });
  await writeFile(config, configText);
  const haproxy = spawn("haproxy", ["-f", config, "-db"], { stdio: ["ignore", "ignore", "inherit"] });
  await waitForPort(lbPort);
  return {
    url: `http://127.0.0.1:${lbPort}`,
    sdk,
    haproxyConfig: configText,
    replicas,
    secret,
    s3Prefix,
    redisPrefix,
    async close() {
      const exits = [haproxy, ...replicas.map((r) => r.process)]
        .filter((child) => child.exitCode === null && child.signalCode === null)
        .map((child) => {
          const exited = new Promise((r) => child.once("exit", r));
          child.kill("SIGTERM");
          return exited;
        });
      await Promise.race([Promise.all(exits), new Promise((r) => setTimeout(r, 5000))]);
      for (const child of [haproxy, ...replicas.map((r) => r.process)])
        if (child.exitCode === null) child.kill("SIGKILL");
      await rm(dir, { recursive: true, force: true });
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const services = await startServices();
  const sdk = sdkFlag();
  const cluster = await startCluster(services, Number(process.env.REPLICAS ?? 3), { sdk });
  console.log(
    sdk === "v2"
      ? `load balancer: ${cluster.url}  (SDK v2, stateless MCP ${cluster.url}/mcp, plain round-robin)`
      : `load balancer: ${cluster.url}  (MCP stateful ${cluster.url}/mcp, stateless ${cluster.url}/mcp-stateless)`,
  );
  for (const r of cluster.replicas) console.log(`  replica ${r.name}: ${r.url}`);
  for (const user of ["alice", "bob"]) {
    console.log(`  Authorization: Bearer ${userToken(cluster.secret, user)}   (user "${user}")`);
  }
  console.log("Ctrl-C stops everything.");
  const stop = async () => {
    await cluster.close();
    await stopServices(services);
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
