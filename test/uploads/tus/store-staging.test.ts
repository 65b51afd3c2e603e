/**
 * The tus endpoint asks the store for its staging (`tusStaging(state)`, what an `s3Store` offers)
 * instead of checking the driver's name; a store without one stages in local files.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { memoryState } from "../../../src/storage/memory-state.js";
import { memoryStore } from "../../../src/storage/memory-store.js";
import type { StateStore } from "../../../src/storage/types.js";
import type { UploadHandlerConfig } from "../../../src/uploads/handler-types.js";
import { fsTusStaging } from "../../../src/uploads/tus/fs-staging.js";
import { tusService } from "../../../src/uploads/tus/service.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

function configOf(store: object, state: StateStore): UploadHandlerConfig {
  return { store, state } as unknown as UploadHandlerConfig;
}

describe("tus staging chosen by the store", () => {
  it("uses the staging the store offers, keyed to the routes' state store", async () => {
    const dir = await mkdtemp(join(tmpdir(), "store-staging-"));
    dirs.push(dir);
    const own = fsTusStaging(dir);
    const state = memoryState();
    const asked: StateStore[] = [];
    const store = {
      ...memoryStore(),
      driver: "custom",
      tusStaging(given: StateStore) {
        asked.push(given);
        return own;
      },
    };
    const service = tusService(configOf(store, state));
    expect(service.staging).toBe(own);
    expect(asked).toEqual([state]);
  });

  it("stages in local files for a store named s3 that offers no staging (no driver-name check)", async () => {
    const store = { ...memoryStore(), driver: "s3", client: {}, bucket: "b", prefix: "p/" };
    const service = tusService(configOf(store, memoryState()));
    expect(typeof service.staging.localPath).toBe("function");
  });
});
