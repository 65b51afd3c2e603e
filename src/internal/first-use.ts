/**
 * Code loaded on its first use (issue 39): what only an async path runs is an `import()` behind
 * one of these, so importing the package does not compile it (docs/architecture.md, "loaded on
 * first use").
 */

/**
 * A loader that runs `load` on its first call and hands every later caller the same promise:
 * callers that ask at the same time share one load. A load that fails fails each of its callers
 * with its error, and the next call loads again.
 *
 * @example
 * ```ts
 * const loadCalls = firstUse(() => import("./resolution.js"));
 * const { BridgeCalls } = await loadCalls();
 * ```
 */
export function firstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}
