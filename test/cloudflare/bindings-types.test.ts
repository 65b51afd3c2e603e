/**
 * The entry's structural binding types accept the real ones from `@cloudflare/workers-types`
 * (checked by `tsc --noEmit`, which covers test/), so a Worker passes `env.FILES` / `env.STATE` as
 * they are; the entry's own `.d.ts` never imports `@cloudflare/workers-types`.
 */
import { readFile } from "node:fs/promises";
import type {
  DurableObjectNamespace,
  DurableObjectState,
  R2Bucket,
} from "@cloudflare/workers-types/index.ts";
import { describe, expect, expectTypeOf, it } from "vitest";
import type {
  DurableObjectNamespaceBinding,
  DurableObjectStateLike,
  R2BucketBinding,
} from "../../src/cloudflare/index.js";

describe("mcp-file-bridge/cloudflare types", () => {
  it("R2Bucket, DurableObjectNamespace and DurableObjectState fit the entry's binding types", () => {
    // Plain assignments: `tsc --noEmit` fails here if a real binding does not fit.
    const fits = (bucket: R2Bucket, namespace: DurableObjectNamespace, state: DurableObjectState) => {
      const asBucket: R2BucketBinding = bucket;
      const asNamespace: DurableObjectNamespaceBinding = namespace;
      const asState: DurableObjectStateLike = state;
      return [asBucket, asNamespace, asState];
    };
    expectTypeOf(fits).toBeFunction();
  });

  it("no source file of the entry imports @cloudflare/workers-types or cloudflare:*", async () => {
    for (const file of [
      "bindings",
      "durable-object-state",
      "index",
      "r2-part-sink",
      "r2-store",
      "state-object",
    ]) {
      const text = await readFile(new URL(`../../src/cloudflare/${file}.ts`, import.meta.url), "utf8");
      expect(text, file).not.toMatch(/from "(@cloudflare\/workers-types|cloudflare:)/);
    }
  });
});
