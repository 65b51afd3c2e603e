/**
 * For tests of the "services" project: the endpoints the global setup started, and a `describe`
 * that skips (saying so) only when MCP_FILE_BRIDGE_SKIP_SERVICES=1 was set for a local run.
 */
import { randomBytes } from "node:crypto";
import { describe, inject } from "vitest";
import type { ServiceEndpoints } from "./services.js";

/** The running services; `null` when skipped. */
export function services(): ServiceEndpoints | null {
  return inject("services");
}

/** The running services; throws when skipped (call inside a `describeWithServices` block). */
export function requireServices(): ServiceEndpoints & Required<Pick<ServiceEndpoints, "s3" | "redis">> {
  const endpoints = inject("services");
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
