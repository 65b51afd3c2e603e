/**
 * For tests of the "services" project: the endpoints the global setup started, and a `describe`
 * that skips (saying so) only when MCP_FILE_BRIDGE_SKIP_SERVICES=1 was set for a local run.
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, inject } from "vitest";
import type { ServiceEndpoints, ServicesReady } from "./services.js";

/** The services the global setup started in the background, once {@link awaitServices} saw them up. */
let started: ServiceEndpoints | undefined;

/**
 * Waits until the services the global setup starts in the background are up (it writes their
 * endpoints to the file it provides as `servicesReady`); throws the setup's reason when they could
 * not start. Run by the services project's setup file (wait-ready.ts) before each test file.
 */
export async function awaitServices(): Promise<void> {
  const file = inject("servicesReady");
  if (!file || started) return;
  for (;;) {
    let outcome: ServicesReady;
    try {
      outcome = JSON.parse(await readFile(file, "utf8")) as ServicesReady;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      await sleep(100);
      continue;
    }
    if ("error" in outcome) throw new Error(outcome.error);
    started = outcome.endpoints;
    return;
  }
}

/** The running services; `null` when skipped. */
export function services(): ServiceEndpoints | null {
  return started ?? inject("services");
}

/** The running services; throws when skipped (call inside a `describeWithServices` block). */
export function requireServices(): ServiceEndpoints & Required<Pick<ServiceEndpoints, "s3" | "redis">> {
  const endpoints = services();
  if (!endpoints?.s3 || !endpoints.redis) throw new Error("services are not running");
  return endpoints as ServiceEndpoints & Required<Pick<ServiceEndpoints, "s3" | "redis">>;
}

/** `describe` that runs when the services run, and is skipped (by name) when they were skipped. */
export const describeWithServices = (name: string, body: () => void): void => {
  const skipped = inject("services") === null;
  (skipped ? describe.skip : describe)(
    skipped ? `${name} [SKIPPED: MCP_FILE_BRIDGE_SKIP_SERVICES=1]` : name,
    body,
  );
};

/** A key prefix no other test uses. */
export function uniquePrefix(label: string): string {
  return `t-${label}-${randomBytes(6).toString("hex")}:`;
}
