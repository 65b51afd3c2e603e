/**
 * Promise forms of the `node:fs` callback calls the stores and the temp-file writer make on plain
 * descriptors: one thread-pool trip each, without a `FileHandle`'s promise machinery. Written here
 * instead of `util.promisify` so that the root does not load `node:util` at start (issue 39; an SDK
 * server does not load it: docs/performance.md, session 21).
 */
import { close, ftruncate, open, rename, type WriteFileOptions, writeFile } from "node:fs";

/** Settles a promise from a Node callback. */
function settle<T>(resolve: (value: T) => void, reject: (error: unknown) => void) {
  return (error: NodeJS.ErrnoException | null, value?: T) => (error ? reject(error) : resolve(value as T));
}

/**
 * `fs.open` as a promise of the descriptor.
 *
 * @example
 * ```ts
 * const fd = await openAsync("/tmp/x", "wx", 0o600);
 * ```
 */
export function openAsync(path: string, flags: string | number, mode?: number): Promise<number> {
  return new Promise((resolve, reject) => open(path, flags, mode, settle(resolve, reject)));
}

/** `fs.close` as a promise. */
export function closeAsync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => close(fd, settle(resolve, reject)));
}

/** `fs.ftruncate` as a promise. */
export function ftruncateAsync(fd: number, length: number): Promise<void> {
  return new Promise((resolve, reject) => ftruncate(fd, length, settle(resolve, reject)));
}

/** `fs.writeFile` as a promise. */
export function writeFileAsync(
  path: string,
  data: string | NodeJS.ArrayBufferView,
  options: WriteFileOptions,
): Promise<void> {
  return new Promise((resolve, reject) => writeFile(path, data, options, settle(resolve, reject)));
}

/** `fs.rename` as a promise. */
export function renameAsync(from: string, to: string): Promise<void> {
  return new Promise((resolve, reject) => rename(from, to, settle(resolve, reject)));
}
