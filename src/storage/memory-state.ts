import { FileBridgeError } from "../errors/file-bridge-error.js";
import { type Duration, durationToMs } from "../internal/duration.js";
import { optionCheck } from "../internal/options.js";
import { unrefInterval } from "./kit/list-page.js";
import type { StateSetOptions, StateStore } from "./types.js";

const check = optionCheck("memoryState");

/**
 * Options of {@link memoryState}.
 *
 * @example
 * ```ts
 * const state = memoryState({ sweepInterval: "5m" });
 * ```
 */
export interface MemoryStateOptions {
  /**
   * How often expired keys are removed in the background (an `unref`'d timer, so it never keeps the
   * process alive). `0` turns it off; expired keys read as missing either way.
   * @default "1m"
   */
  sweepInterval?: Duration;
  /**
   * Clock, in milliseconds since the epoch. Inject one to test expiry without sleeping.
   * @default Date.now
   */
  now?: () => number;
}

/** Longest key accepted, in UTF-16 code units. */
export const MAX_STATE_KEY_LENGTH = 1024;

interface Slot {
  /** The value as JSON: every read parses a fresh copy, so callers cannot mutate stored state. */
  readonly json: string;
  readonly expiresAt: number | undefined;
}

/** Refuses a state key that is not a non-empty string of at most {@link MAX_STATE_KEY_LENGTH} characters. */
export function assertStateKey(key: unknown): asserts key is string {
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_STATE_KEY_LENGTH) {
    throw new FileBridgeError(
      "INVALID_INPUT",
      `state keys must be non-empty strings of at most ${MAX_STATE_KEY_LENGTH} characters`,
    );
  }
}

/** A state value as JSON; `INVALID_INPUT` for a value JSON cannot carry. */
export function serializeStateValue(value: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new FileBridgeError("INVALID_INPUT", "state values must be JSON-serializable", { cause: error });
  }
  if (json === undefined) {
    throw new FileBridgeError("INVALID_INPUT", "state values must be JSON-serializable");
  }
  return json;
}

/**
 * A {@link StateStore} in memory: single-use nonces, upload tickets and other small values with a
 * TTL, for one process. Values are stored as JSON (deep copies in and out); `setIfAbsent` is atomic.
 *
 * @example
 * ```ts
 * import { memoryState } from "mcp-file-bridge";
 *
 * const state = memoryState();
 * if (!(await state.setIfAbsent(`nonce:${jti}`, true, { ttl: "5m" }))) {
 *   throw new Error("token already used");
 * }
 * ```
 */
export function memoryState(options: MemoryStateOptions = {}): StateStore {
  if (typeof options !== "object" || options === null) {
    throw check.error("options", "must be an object");
  }
  if (options.now !== undefined && typeof options.now !== "function") {
    throw check.error("now", "must be a function returning milliseconds");
  }
  const now = options.now ?? Date.now;
  const sweepMs = durationToMs(options.sweepInterval ?? "1m", "sweepInterval");
  const slots = new Map<string, Slot>();

  function slotOf(value: unknown, setOptions: StateSetOptions | undefined): Slot {
    const json = serializeStateValue(value);
    const ttl = setOptions?.ttl;
    return { json, expiresAt: ttl === undefined ? undefined : now() + durationToMs(ttl, "ttl") };
  }

  /** The live slot of a key; an expired one is dropped on the spot. */
  function live(key: string): Slot | undefined {
    const slot = slots.get(key);
    if (slot?.expiresAt !== undefined && slot.expiresAt <= now()) {
      slots.delete(key);
      return undefined;
    }
    return slot;
  }

  const timer = unrefInterval(sweepMs, () => {
    const at = now();
    for (const [key, slot] of slots) {
      if (slot.expiresAt !== undefined && slot.expiresAt <= at) slots.delete(key);
    }
  });

  return {
    driver: "memory",

    async get<T = unknown>(key: string): Promise<T | null> {
      assertStateKey(key);
      const slot = live(key);
      return slot === undefined ? null : (JSON.parse(slot.json) as T);
    },

    async set(key: string, value: unknown, setOptions?: StateSetOptions): Promise<void> {
      assertStateKey(key);
      slots.set(key, slotOf(value, setOptions));
    },

    async setIfAbsent(key: string, value: unknown, setOptions?: StateSetOptions): Promise<boolean> {
      assertStateKey(key);
      // Validate before looking, and never await between the look and the write: atomic in one process.
      const slot = slotOf(value, setOptions);
      if (live(key) !== undefined) return false;
      slots.set(key, slot);
      return true;
    },

    async delete(key: string): Promise<boolean> {
      assertStateKey(key);
      const existed = live(key) !== undefined;
      slots.delete(key);
      return existed;
    },

    async close(): Promise<void> {
      if (timer) clearInterval(timer);
    },
  };
}
