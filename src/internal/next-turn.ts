/**
 * A promise settled on the event loop's next turn (after pending I/O callbacks), as
 * `setImmediate` of `node:timers/promises` gives, without loading that module at start (issue 39).
 *
 * @example
 * ```ts
 * for (const slice of slices) {
 *   hash.update(slice);
 *   await nextTurn(); // let other work run between slices
 * }
 * ```
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
