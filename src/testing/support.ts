import type { Readable } from "node:stream";
import { expect } from "vitest";
import { FileBridgeError, type FileBridgeErrorCode } from "../errors/file-bridge-error.js";
import type { FileStore, StateStore } from "../storage/types.js";

/**
 * A clock the suite can move: drivers get `clock.now` as their `now` option.
 *
 * @example
 * ```ts
 * const clock: TestClock = makeClock();
 * const store = memoryStore({ now: clock.now });
 * clock.advance(60_000); // one minute later, without sleeping
 * ```
 */
export interface TestClock {
  now: () => number;
  advance(ms: number): void;
}

/**
 * Makes a fresh, empty store reading time from `now`.
 *
 * @example
 * ```ts
 * const make: MakeFileStore = (now) => fsStore({ dir: await mkdtemp(join(tmpdir(), "s-")), now });
 * ```
 */
export type MakeFileStore = (now: () => number) => FileStore | Promise<FileStore>;
/**
 * Makes a fresh, empty state store reading time from `now`.
 *
 * @example
 * ```ts
 * const make: MakeStateStore = (now) => memoryState({ now });
 * ```
 */
export type MakeStateStore = (now: () => number) => StateStore | Promise<StateStore>;

/**
 * The time every suite clock starts at (2030-01-01).
 *
 * @example
 * ```ts
 * expect(makeClock().now()).toBe(SUITE_START);
 * ```
 */
export const SUITE_START = Date.UTC(2030, 0, 1);

/**
 * A fresh clock at {@link SUITE_START}.
 *
 * @example
 * ```ts
 * const clock = makeClock();
 * clock.advance(5 * 60_000);
 * ```
 */
export function makeClock(): TestClock {
  let time = SUITE_START;
  return {
    now: () => time,
    advance(ms: number) {
      time += ms;
    },
  };
}

/**
 * Reads a stream to one buffer (test helper: files here are small).
 *
 * @example
 * ```ts
 * const bytes = await readAll(await store.get(scope, file.id));
 * ```
 */
export async function readAll(stream: Readable | null): Promise<Buffer> {
  if (stream === null) throw new Error("expected a stream, got null");
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/**
 * The code of the FileBridgeError a promise rejects with (fails the test on anything else).
 *
 * @example
 * ```ts
 * expect(await codeOf(store.put(data, { scope, name: "a", maxBytes: 1 }))).toBe("FILE_TOO_LARGE");
 * ```
 */
export async function codeOf(promise: Promise<unknown>): Promise<FileBridgeErrorCode> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(FileBridgeError);
    return (error as FileBridgeError).code;
  }
  throw new Error("expected a rejection");
}
