/** Counting (and failing) the loads of a module that `src/` loads on first use (issue 39). */
import { join } from "node:path";
import { onTestFinished, vi } from "vitest";
import { repoRoot } from "./helpers.js";

/** What {@link countLoads} gives a test. */
export interface CountedLoads {
  /** How many times the module has been loaded (or tried to be) since {@link countLoads}. */
  readonly loads: { attempts: number };
  /** What the first load throws with `failFirst: true` (code `ERR_MODULE_NOT_FOUND`). */
  readonly failure: Error;
}

/**
 * Resets the module graph and mocks `workModule` so that each load of it is counted in
 * `loads.attempts`; with `failFirst`, the first load throws (`true`: the returned `failure`; an
 * `Error`: that error) and later loads load the real module. Import the subject dynamically
 * afterwards, so that it comes from the fresh graph. The mock is removed (and the graph reset again)
 * when the test finishes. Several modules may be counted in one test: call it once for each.
 *
 * `workModule` is a path from the repository root, such as `"src/storage/memory-store-work.js"`:
 * `vi.doMock` resolves a relative path from the file that calls it, which is this one.
 *
 * Under vitest a mocked module's failure arrives wrapped, with the load's error as its `cause`.
 */
export function countLoads(workModule: string, options: { failFirst?: boolean | Error } = {}): CountedLoads {
  const path = join(repoRoot, workModule);
  const { failFirst = false } = options;
  const failure =
    failFirst instanceof Error
      ? failFirst
      : Object.assign(new Error(`${workModule} could not load`), { code: "ERR_MODULE_NOT_FOUND" });
  const loads = { attempts: 0 };
  vi.resetModules();
  vi.doMock(path, async (importOriginal) => {
    loads.attempts += 1;
    if (failFirst !== false && loads.attempts === 1) throw failure;
    return importOriginal();
  });
  onTestFinished(() => {
    vi.doUnmock(path);
    vi.resetModules();
  });
  return { loads, failure };
}
