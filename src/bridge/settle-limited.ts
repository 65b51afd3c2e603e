/**
 * Runs `task` on each item, at most `concurrency` at a time, starting them in the items' order, and
 * settles like `Promise.allSettled` (one result per item, in the items' order). All that
 * `FileBridge` used of p-limit and its queue (1.6 KB of a user's bundle).
 */
export async function settleLimited<T, R>(
  items: readonly T[],
  concurrency: number,
  task: (item: T) => Promise<R>,
): Promise<PromiseSettledResult<R>[]> {
  const results = new Array<PromiseSettledResult<R>>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      try {
        results[index] = { status: "fulfilled", value: await task(items[index] as T) };
      } catch (reason) {
        results[index] = { status: "rejected", reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}
