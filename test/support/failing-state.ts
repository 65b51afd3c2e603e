import { memoryState } from "../../src/index.js";
import type { StateStore } from "../../src/storage/types.js";

/** A `memoryState` whose `set` fails the `failing`-th time it is called (1-based), and only then. */
export function stateFailingOnce(failing: number): StateStore {
  const state = memoryState();
  let sets = 0;
  return {
    get: (key) => state.get(key),
    delete: (key) => state.delete(key),
    set: async (key, value, options) => {
      if (++sets === failing) throw new Error("state store unavailable");
      return await state.set(key, value, options);
    },
  } as StateStore;
}
