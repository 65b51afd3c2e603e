/**
 * Vitest global setup of the "services" project: starts real radosgw and redis-server once for the
 * S3/Redis suites and the replicas example, hands their endpoints to the tests (`inject("services")`)
 * and stops them at the end.
 *
 * If they cannot be installed or started the run fails. `MCP_FILE_BRIDGE_SKIP_SERVICES=1` skips them
 * (the suites then skip, saying why) for local runs only: with `CI=true` it is refused.
 */

import { join } from "node:path";
import type { TestProject } from "vitest/node";
import {
  type ServiceEndpoints,
  SKIP_ENV,
  startServices,
  stopAllServicesSync,
  stopServices,
} from "./services.js";

/**
 * An interrupted run (Ctrl-C, SIGTERM to vitest, an exit before the teardown) stops the services it
 * started, at any moment — also while they are still starting — and removes their folder.
 */
function stopOnInterrupt(): () => void {
  const onSignal = (name: NodeJS.Signals) => {
    stopAllServicesSync();
    // Vitest may have its own handler, which ends the run; without one, end it as the signal would.
    if (process.listenerCount(name) === 1) process.exit(name === "SIGINT" ? 130 : 143);
  };
  const onExit = () => stopAllServicesSync();
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
  const started = Date.now();
  const unhook = stopOnInterrupt();
  let endpoints: ServiceEndpoints;
  try {
    endpoints = await startServices();
  } catch (error) {
    unhook();
    throw new Error(
      `[services] could not start radosgw/redis-server for the S3/Redis suites (set ${SKIP_ENV}=1 to skip them locally): ${(error as Error).message}`,
    );
  }
  console.log(
    `[services] radosgw ${endpoints.s3?.endpoint}, redis ${endpoints.redis?.url} in ${endpoints.dir} (${Date.now() - started} ms)`,
  );
  project.provide("services", endpoints);
  return async () => {
    await stopServices(endpoints);
    unhook();
  };
}
