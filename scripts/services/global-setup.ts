/**
 * Vitest global setup of the "services" project: starts real radosgw and redis-server once for the
 * S3/Redis suites and the replicas example, hands their endpoints to the tests (`inject("services")`)
 * and stops them at the end.
 *
 * If they cannot be installed or started the run fails. `MCP_FILE_BRIDGE_SKIP_SERVICES=1` skips them
 * (the suites then skip, saying why) for local runs only: with `CI=true` it is refused.
 */

import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import {
  type ServiceEndpoints,
  type ServicesReady,
  SKIP_ENV,
  startServices,
  stopAllServicesSync,
  stopServices,
} from "./services.js";

/**
 * An interrupted run (Ctrl-C, SIGTERM to vitest, an exit before the teardown) stops the services it
 * started, at any moment — also while they are still starting — and removes their folder.
 */
function stopOnInterrupt(cleanUp: () => void): () => void {
  const onSignal = (name: NodeJS.Signals) => {
    stopAllServicesSync();
    cleanUp();
    // Vitest may have its own handler, which ends the run; without one, end it as the signal would.
    if (process.listenerCount(name) === 1) process.exit(name === "SIGINT" ? 130 : 143);
  };
  const onExit = () => {
    stopAllServicesSync();
    cleanUp();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  process.on("exit", onExit);
  return () => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    process.off("exit", onExit);
  };
}

/**
 * Services already running (`eval "$(npx tsx scripts/services/services.ts start)"` exports these),
 * so repeated local runs skip the ~15 s start.
 */
function fromEnv(): ServiceEndpoints | null {
  const env = process.env;
  if (!env.MFB_SERVICES_DIR || !env.MFB_S3_ENDPOINT || !env.MFB_REDIS_URL) return null;
  return {
    dir: env.MFB_SERVICES_DIR,
    s3: {
      endpoint: env.MFB_S3_ENDPOINT,
      region: env.MFB_S3_REGION ?? "us-east-1",
      accessKeyId: env.MFB_S3_ACCESS_KEY_ID ?? "testkey",
      secretAccessKey: env.MFB_S3_SECRET_ACCESS_KEY ?? "testsecret",
      bucket: env.MFB_S3_BUCKET ?? "mfb-test",
      cephConf: join(env.MFB_SERVICES_DIR, "ceph", "ceph.conf"),
    },
    redis: {
      url: env.MFB_REDIS_URL,
      port: Number(new URL(env.MFB_REDIS_URL).port),
      pid: Number(env.MFB_REDIS_PID ?? 0),
    },
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    /** Endpoints of the real services, or `null` when skipped with MCP_FILE_BRIDGE_SKIP_SERVICES=1. */
    services: ServiceEndpoints | null;
    /**
     * The file the setup writes a {@link ServicesReady} to once the services it starts in the
     * background are up (or failed); absent when they were skipped or already running.
     */
    servicesReady?: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const skip = process.env[SKIP_ENV] === "1";
  const ci = process.env.CI === "true" || process.env.CI === "1";
  if (skip && ci) {
    throw new Error(`${SKIP_ENV}=1 is for local runs only; CI must run the S3 and Redis suites`);
  }
  if (skip) {
    console.warn(`[services] ${SKIP_ENV}=1: the S3/Redis suites are SKIPPED (local run)`);
    project.provide("services", null);
    return async () => {};
  }
  const running = fromEnv();
  if (running) {
    console.log(`[services] using the running services from MFB_* variables (${running.dir})`);
    project.provide("services", running);
    return async () => {};
  }
  // Started in the background: the setup returns at once, so the other projects' files run while
  // radosgw and redis-server come up (~20 s), and each services file waits for them in its setup
  // file (wait-ready.ts) before it is imported. The outcome goes to `ready`, a file the workers read.
  const ready = join(tmpdir(), `mfb-services-ready-${process.pid}-${randomBytes(4).toString("hex")}.json`);
  const removeReady = () => {
    rmSync(ready, { force: true });
    rmSync(`${ready}.tmp`, { force: true });
  };
  const started = Date.now();
  const unhook = stopOnInterrupt(removeReady);
  const starting = startServices().then(
    async (endpoints) => {
      await writeReady(ready, { endpoints });
      console.log(
        `[services] radosgw ${endpoints.s3?.endpoint}, redis ${endpoints.redis?.url} in ${endpoints.dir} (${Date.now() - started} ms)`,
      );
      return endpoints;
    },
    async (error: Error) => {
      const message = `[services] could not start radosgw/redis-server for the S3/Redis suites (set ${SKIP_ENV}=1 to skip them locally): ${error.message}`;
      await writeReady(ready, { error: message });
      throw new Error(message);
    },
  );
  // Seen (and thrown) by the teardown and by every services file; not an unhandled rejection here.
  starting.catch(() => {});
  project.provide("servicesReady", ready);
  return async () => {
    try {
      const endpoints = await starting;
      await stopServices(endpoints);
    } finally {
      removeReady();
      unhook();
    }
  };
}

/** Writes the outcome whole (to a temp name, then renamed), so a reader never sees half of it. */
async function writeReady(file: string, outcome: ServicesReady): Promise<void> {
  await writeFile(`${file}.tmp`, JSON.stringify(outcome));
  await rename(`${file}.tmp`, file);
}
