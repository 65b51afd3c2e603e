/**
 * `node:fs` for a `vi.mock` factory with `writev` made observable and slow: `hook` sees each
 * buffer list the caller hands to `writev` before the write runs, and answers how many ms the real
 * write waits (0: at once). The bytes are read from the buffers only when the write really runs, as
 * on a slow disk.
 *
 * @example
 * ```ts
 * vi.mock("node:fs", async (importOriginal) =>
 *   (await import("./slow-writev.js")).slowWritev(await importOriginal(), () => 2),
 * );
 * ```
 */
import type * as Fs from "node:fs";

export function slowWritev(
  actual: typeof Fs,
  hook: (buffers: NodeJS.ArrayBufferView[]) => number,
): typeof Fs {
  const writev = (
    fd: number,
    buffers: NodeJS.ArrayBufferView[],
    position: number | null,
    callback: (error: NodeJS.ErrnoException | null, bytes: number, buffers: NodeJS.ArrayBufferView[]) => void,
  ) => {
    const delayMs = hook(buffers);
    if (delayMs > 0) setTimeout(() => actual.writev(fd, buffers, position, callback), delayMs);
    else actual.writev(fd, buffers, position, callback);
  };
  return { ...actual, writev: writev as typeof actual.writev };
}
