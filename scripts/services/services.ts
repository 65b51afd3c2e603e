/**
 * Starts and stops the real servers the S3/Redis suites, the replicas example and the benches run
 * against: a single-node Ceph cluster with radosgw (a real, SigV4-checking S3) and redis-server, each
 * on free loopback ports, all state in one temp folder. Installs the Debian packages when missing.
 *
 *   npx tsx scripts/services/services.ts start   # prints `export MFB_…=…` lines, keeps running services
 *   npx tsx scripts/services/services.ts stop <dir>
 *
 * Used by `test/services/global-setup.ts` (vitest) and by `bench/s3-redis.ts`.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));

/**
 * Folders of services this process started and has not stopped yet, with the start-up scripts
 * still running for them: what {@link stopAllServicesSync} stops when the run is interrupted.
 */
const live = new Map<string, Set<ChildProcess>>();

/** Where the services listen, as handed to tests (serializable). */
export interface ServiceEndpoints {
  /** Folder holding all state; removed by {@link stopServices}. */
  dir: string;
  s3?: {
    endpoint: string;
    region: string;
    accessKeyId: string;
    secretAccessKey: string;
    /** A bucket created (and warmed up) at start. */
    bucket: string;
    /** The Ceph config, for tests that start a second gateway. */
    cephConf: string;
  };
  redis?: {
    url: string;
    port: number;
    pid: number;
  };
}

/** Environment variable that skips the services for local runs (refused when `CI=true`). */
/** What the vitest global setup writes once the services it started in the background are up or failed. */
export type ServicesReady = { endpoints: ServiceEndpoints } | { error: string };

export const SKIP_ENV = "MCP_FILE_BRIDGE_SKIP_SERVICES";

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === "object" && address ? address.port : 0));
    });
  });
}

async function installIfMissing(): Promise<void> {
  const { stdout } = await run("bash", [join(here, "install.sh")], { timeout: 600_000 });
  if (stdout.includes("installing")) process.stderr.write(stdout);
}

/** Sends one inline command to Redis and resolves with the first reply line. */
export function redisCommand(port: number, command: string, timeoutMs = 1000): Promise<string> {
  return new Promise((resolveReply, reject) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    const timer = setTimeout(() => socket.destroy(new Error("redis did not answer")), timeoutMs);
    let data = "";
    socket.on("connect", () => socket.write(`${command}\r\n`));
    socket.on("data", (chunk) => {
      data += chunk.toString("utf8");
      if (data.includes("\r\n")) {
        clearTimeout(timer);
        socket.end();
        resolveReply(data.split("\r\n")[0] as string);
      }
    });
    socket.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/**
 * Starts a redis-server on `port` (a free one when omitted), in memory only, as a child process of
 * this one. Resolves once it answers PING.
 */
export async function startRedis(
  dir: string,
  port?: number,
): Promise<{ port: number; process: ChildProcess }> {
  const listen = port ?? (await freePort());
  const child = spawn(
    "redis-server",
    [
      "--port",
      String(listen),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      dir,
      "--logfile",
      join(dir, `redis-${listen}.log`),
    ],
    { stdio: "ignore", detached: true },
  );
  child.unref();
  // Recorded so `services.ts stop <dir>` finds it from another process (a shell that ran `start`).
  await writeFile(join(dir, `redis-${listen}.pid`), String(child.pid));
  const exited = new Promise<never>((_, reject) =>
    child.once("exit", (code) => reject(new Error(`redis-server exited with ${code}`))),
  );
  exited.catch(() => {});
  for (let i = 0; i < 200; i++) {
    try {
      if ((await Promise.race([redisCommand(listen, "PING"), exited])) === "+PONG") {
        return { port: listen, process: child };
      }
    } catch (error) {
      if (child.exitCode !== null) throw error;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill();
  throw new Error(`redis-server did not answer on port ${listen}`);
}

async function startRgw(dir: string): Promise<NonNullable<ServiceEndpoints["s3"]>> {
  const [rgwPort, monPort, monPortV1] = [await freePort(), await freePort(), await freePort()];
  const cephDir = join(dir, "ceph");
  const env = {
    ...process.env,
    CEPH_DIR: cephDir,
    RGW_PORT: String(rgwPort),
    MON_PORT: String(monPort),
    MON_PORT_V1: String(monPortV1),
    S3_KEY: "testkey",
    S3_SECRET: "testsecret",
    MEMSTORE_BYTES: process.env.MEMSTORE_BYTES ?? String(2 * 1024 * 1024 * 1024),
  };
  try {
    const starting = run("bash", [join(here, "start-rgw.sh")], { env, timeout: 120_000 });
    const scripts = live.get(dir);
    scripts?.add(starting.child);
    await starting.finally(() => scripts?.delete(starting.child));
  } catch (error) {
    const log = await readFile(join(cephDir, "log", "client.rgw.a.log"), "utf8").catch(() => "");
    throw new Error(`radosgw did not start: ${(error as Error).message}\n${log.slice(-2000)}`);
  }
  const s3 = {
    endpoint: `http://127.0.0.1:${rgwPort}`,
    region: "us-east-1",
    accessKeyId: "testkey",
    secretAccessKey: "testsecret",
    bucket: "mfb-test",
    cephConf: join(cephDir, "ceph.conf"),
  };
  // The first bucket operation takes a few seconds (pool creation): pay it once, here.
  // Its "Node 22 will be required" notice is nothing a test run can act on (see vitest.config.ts).
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
  const { S3Client, CreateBucketCommand } = await import("@aws-sdk/client-s3");
  const client = new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });
  try {
    await client.send(new CreateBucketCommand({ Bucket: s3.bucket }));
  } finally {
    client.destroy();
  }
  return s3;
}

/**
 * Starts radosgw and redis-server (in parallel), installing the packages first when missing.
 * Throws with the reason when either cannot start.
 */
export async function startServices(
  which: { s3?: boolean; redis?: boolean } = { s3: true, redis: true },
): Promise<ServiceEndpoints> {
  await installIfMissing();
  const dir = await mkdtemp(join(tmpdir(), "mfb-services-"));
  live.set(dir, new Set());
  const endpoints: ServiceEndpoints = { dir };
  try {
    await Promise.all([
      which.s3
        ? startRgw(dir).then((s3) => {
            endpoints.s3 = s3;
          })
        : undefined,
      which.redis
        ? startRedis(dir).then(({ port, process: child }) => {
            endpoints.redis = { url: `redis://127.0.0.1:${port}`, port, pid: child.pid as number };
          })
        : undefined,
    ]);
  } catch (error) {
    await stopServices(endpoints);
    throw error;
  }
  return endpoints;
}

/**
 * Stops what {@link startServices} started and removes its folder: the redis-servers recorded in
 * the folder (`redis-<port>.pid`, so a `stop` from another process finds them) and radosgw.
 */
export async function stopServices(endpoints: ServiceEndpoints): Promise<void> {
  const pids = new Set<number>(endpoints.redis ? [endpoints.redis.pid] : []);
  const names = await readdir(endpoints.dir).catch(() => [] as string[]);
  for (const name of names.filter((n) => /^redis-\d+\.pid$/.test(n))) {
    const pid = Number(await readFile(join(endpoints.dir, name), "utf8").catch(() => ""));
    if (Number.isInteger(pid) && pid > 0) pids.add(pid);
  }
  for (const pid of pids) {
    try {
      process.kill(pid);
    } catch {
      // already gone
    }
  }
  await run("bash", [join(here, "stop-rgw.sh")], {
    env: { ...process.env, CEPH_DIR: join(endpoints.dir, "ceph") },
  }).catch(() => {});
  await rm(endpoints.dir, { recursive: true, force: true });
  live.delete(endpoints.dir);
}

/**
 * Pids of the processes started for `dir`: those whose command line names it (`-c dir/…`, `--dir
 * dir`) or whose working folder is in it (redis-server rewrites its command line to
 * `redis-server host:port`, and works in its `--dir`).
 */
function pidsNaming(dir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(dir)) pids.push(pid);
      else {
        const cwd = readlinkSync(`/proc/${pid}/cwd`).replace(/ \(deleted\)$/, "");
        if (cwd === dir || cwd.startsWith(`${dir}/`)) pids.push(pid);
      }
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

function signal(pids: number[], name: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, name);
    } catch {
      // already gone
    }
  }
}

/**
 * Stops, synchronously, every service this process started and has not stopped — also one still
 * starting: its start-up script first (so it launches nothing more), then every process whose
 * command line names the services folder, then the folder. For an interrupted run (SIGINT,
 * SIGTERM, `process.exit`), where no promise would be awaited.
 */
export function stopAllServicesSync(): void {
  const wait = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  for (const [dir, scripts] of live) {
    for (const script of scripts) script.kill("SIGKILL");
    for (let round = 0; round < 3; round++) {
      const pids = pidsNaming(dir);
      if (pids.length === 0) break;
      signal(pids, "SIGTERM");
      for (let i = 0; i < 30 && pidsNaming(dir).length > 0; i++) wait(100);
      signal(pidsNaming(dir), "SIGKILL");
      wait(200);
    }
    try {
      execFileSync("bash", [join(here, "stop-rgw.sh")], {
        env: { ...process.env, CEPH_DIR: join(dir, "ceph") },
        stdio: "ignore",
      });
    } catch {
      // nothing left to stop
    }
    rmSync(dir, { recursive: true, force: true });
    live.delete(dir);
  }
}

/** The services as environment variables (for child processes and shells). */
export function servicesEnv(endpoints: ServiceEndpoints): Record<string, string> {
  const env: Record<string, string> = { MFB_SERVICES_DIR: endpoints.dir };
  if (endpoints.s3) {
    env.MFB_S3_ENDPOINT = endpoints.s3.endpoint;
    env.MFB_S3_REGION = endpoints.s3.region;
    env.MFB_S3_ACCESS_KEY_ID = endpoints.s3.accessKeyId;
    env.MFB_S3_SECRET_ACCESS_KEY = endpoints.s3.secretAccessKey;
    env.MFB_S3_BUCKET = endpoints.s3.bucket;
  }
  if (endpoints.redis) env.MFB_REDIS_URL = endpoints.redis.url;
  return env;
}

const isMain = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  const [command, dir] = process.argv.slice(2);
  if (command === "start") {
    const endpoints = await startServices();
    for (const [key, value] of Object.entries(servicesEnv(endpoints))) console.log(`export ${key}=${value}`);
    if (endpoints.redis) console.log(`export MFB_REDIS_PID=${endpoints.redis.pid}`);
  } else if (command === "stop" && dir) {
    await stopServices({ dir });
  } else {
    console.error("usage: services.ts start | stop <dir>");
    process.exit(2);
  }
}
