/**
 * Promise forms of the `node:fs` callback calls the stores and the temp-file writer make on plain
 * descriptors: one thread-pool trip each, without a `FileHandle`'s promise machinery. Made here
 * instead of with `util.promisify` so that the root does not load `node:util` at start (issue 39; an
 * SDK server does not load it: docs/performance.md, session 21).
 */
import { close, ftruncate, open, rename, type WriteFileOptions, writeFile } from "node:fs";

type Callback<T> = (error: NodeJS.ErrnoException | null, value?: T) => void;

/** `call` with a Node callback appended, as a promise of the callback's value. */
function promised<A extends unknown[], T = void>(call: (...args: [...A, Callback<T>]) => void) {
  return (...args: A): Promise<T> =>
    new Promise((resolve, reject) =>
      call(...args, (error, value) => (error ? reject(error) : resolve(value as T))),
    );
}

/**
 * `fs.open` as a promise of the descriptor.
 *
 * @example
 * ```ts
 * const fd = await openAsync("/tmp/x", "wx", 0o600);
 * ```
 */
export const openAsync: (path: string, flags: string | number, mode?: number) => Promise<number> = promised<
  [string, string | number, number | undefined],
  number
>(open);
/** `fs.close` as a promise. */
export const closeAsync: (fd: number) => Promise<void> = promised<[number]>(close);
/** `fs.ftruncate` as a promise. */
export const ftruncateAsync: (fd: number, length: number) => Promise<void> =
  promised<[number, number]>(ftruncate);
/** `fs.writeFile` as a promise. */
export const writeFileAsync: (
  path: string,
  data: string | NodeJS.ArrayBufferView,
  options: WriteFileOptions,
) => Promise<void> = promised<[string, string | NodeJS.ArrayBufferView, WriteFileOptions]>(writeFile);
/** `fs.rename` as a promise. */
export const renameAsync: (from: string, to: string) => Promise<void> = promised<[string, string]>(rename);
