/**
 * `fsTusStaging` loads what its calls run on the first one, and `tusService` checks the tus options
 * when the routes are made with none of the protocol's code (issue 39): option errors are thrown
 * synchronously before anything loads, two first calls share one load, and a load that fails fails
 * that call (a write, which never rejects, answers it as its error) while the next call loads again.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { memoryState } from "../../../src/storage/memory-state.js";
import { memoryStore } from "../../../src/storage/memory-store.js";
import type { UploadHandlerConfig } from "../../../src/uploads/handler-types.js";
import { countLoads } from "../../support/first-use.js";
import { codeOfSync } from "../../support/helpers.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** `fsTusStaging` and `tusService` from a fresh module graph whose first-use modules count their loads. */
async function counting(failFirst = false) {
  const work = countLoads("src/uploads/tus/fs-staging-work.js", { failFirst });
  const ticket = countLoads("src/uploads/tus/ticket.js");
  const { failure } = work;
  const loads = {
    get staging() {
      return work.loads.attempts;
    },
    get ticket() {
      return ticket.loads.attempts;
    },
  };
  const { fsTusStaging } = await import("../../../src/uploads/tus/fs-staging.js");
  const { tusService } = await import("../../../src/uploads/tus/service.js");
  const dir = await mkdtemp(join(tmpdir(), "tus-first-use-"));
  dirs.push(dir);
  return { fsTusStaging, tusService, loads, failure, dir: join(dir, "staging") };
}

const isFailure = (error: unknown, failure: Error) =>
  error === failure || (error as Error | undefined)?.cause === failure;

describe("tus staging and service, loaded on first use", () => {
  it("checks tus options synchronously, and makes a staging, with nothing loaded", async () => {
    const { fsTusStaging, tusService, loads, dir } = await counting();
    const config = { store: memoryStore(), state: memoryState() } as unknown as UploadHandlerConfig;
    expect(codeOfSync(() => tusService(config, { lockTtl: 0 }))).toBe("INVALID_OPTION");
    const staging = fsTusStaging(dir);
    const service = tusService(config, { staging });
    expect(service.staging).toBe(staging);
    expect(staging.localPath?.("u1")).toBe(join(dir, "u1"));
    expect(loads).toEqual({ staging: 0, ticket: 0 });
  });

  it("two first calls at once share one load; both uploads are staged", async () => {
    const { fsTusStaging, loads, dir } = await counting();
    const staging = fsTusStaging(dir);
    await Promise.all([staging.create("u1", Date.now() + 60_000), staging.create("u2", Date.now() + 60_000)]);
    expect(loads.staging).toBe(1);
    expect((await readdir(dir)).sort()).toEqual(["u1", "u1.expires", "u2", "u2.expires"]);
    const { written } = await staging.write("u1", 0, Readable.from([Buffer.from("hello")]));
    expect(written).toBe(5);
  });

  it("a failed load fails the call (a write answers it as its error); the next call loads again", async () => {
    const { fsTusStaging, loads, failure, dir } = await counting(true);
    const staging = fsTusStaging(dir);
    const result = await staging.write("u1", 0, Readable.from([Buffer.from("x")]));
    expect(loads.staging).toBe(1);
    expect(result.written).toBe(0);
    expect(isFailure(result.error, failure)).toBe(true);
    await staging.create("u1", Date.now() + 60_000);
    expect(loads.staging).toBe(2);
    expect((await staging.write("u1", 0, Readable.from([Buffer.from("xyz")]))).written).toBe(3);
    const chunks: Buffer[] = [];
    for await (const chunk of staging.read("u1", 3)) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe("xyz");
  });
});
