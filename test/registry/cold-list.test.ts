import { describe, expect, it } from "vitest";
import { memoryStore } from "../../src/storage/memory-store.js";
import type { FileStore, ListOptions } from "../../src/storage/types.js";
import { bytes, connect } from "./support.js";

/**
 * A store whose list pages after the first wait for `open()`: the slow rest of a large scope (an
 * fs folder of 100k files after a restart).
 */
function gatedStore(inner: FileStore) {
  let open = () => {};
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let pages = 0;
  const store: FileStore = {
    ...inner,
    async list(scope: string, options?: ListOptions) {
      pages++;
      if (pages > 1) await gate;
      return inner.list(scope, options);
    },
  };
  return { store, open, pages: () => pages };
}

describe("ResourceRegistry: the first list of a large scope", () => {
  it("answers the first pages before the whole scope is loaded, and every page once it is", async () => {
    const inner = memoryStore();
    const ids: string[] = [];
    for (let i = 0; i < 2500; i++)
      ids.push((await inner.put(bytes(`${i}`), { scope: "default", name: `${i}.txt` })).id);
    const gated = gatedStore(inner);
    const { client, registry, close } = await connect({ store: gated.store, pageSize: 100 });
    // The store's first page (1000 files) is in; the rest waits behind the gate.
    const first = await client.listResources();
    expect(first.resources.map((r) => r.name)).toEqual(Array.from({ length: 100 }, (_, i) => `${i}.txt`));
    const second = await client.listResources({ cursor: first.nextCursor as string });
    expect(second.resources[0]?.name).toBe("100.txt");
    expect(gated.pages()).toBeLessThanOrEqual(2);
    // A page past what is loaded waits for the load; then the walk is whole and in order.
    gated.open();
    const names: string[] = [...first.resources, ...second.resources].map((r) => r.name);
    let cursor = second.nextCursor;
    while (cursor) {
      const page = await client.listResources({ cursor });
      names.push(...page.resources.map((r) => r.name));
      cursor = page.nextCursor;
    }
    expect(names).toEqual(Array.from({ length: 2500 }, (_, i) => `${i}.txt`));
    // Adds and reads use the whole index.
    const added = await registry.add(bytes("new"), { scope: "default", name: "2499.txt" });
    const read = await client.readResource({ uri: registry.uriFor(added) });
    expect((read.contents[0] as { text?: string }).text).toBe("new");
    let count = 0;
    cursor = undefined;
    do {
      const page = await client.listResources(cursor ? { cursor } : {});
      count += page.resources.length;
      cursor = page.nextCursor;
    } while (cursor);
    expect(count).toBe(2501);
    await close();
  });
});
