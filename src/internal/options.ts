/**
 * The options kit: one way to check a piece's options, and one error for a bad one. Every piece's
 * constructor or factory checks its options through an {@link OptionCheck} named after it, so a
 * bad option always reads the same way:
 *
 *   `FileBridgeError` code `INVALID_OPTION`, message `"<piece>: <option path> <problem>"`,
 *   `data.option` = the option's path (`"pageSize"`, `"proxy.auth.tokensEnv"`, `"options"` for the
 *   whole object).
 *
 * Each step checks one option, fills in its default, and returns the value the piece keeps; a
 * validator is a list of such steps (see `checkRegistryOptions` for the pattern).
 */
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { type Duration, durationToMs } from "./duration.js";

/** Bounds for {@link OptionCheck.integer}; `min` defaults to 0. */
export interface IntegerBounds {
  min?: number;
  max?: number;
}

/** Bounds for {@link OptionCheck.duration}. */
export interface DurationBounds {
  positive?: boolean;
  maxMs?: number;
  /** How the error states `maxMs` (`"24 days"`). */
  maxLabel?: string;
  /** What 0 means, said in the error. */
  zeroMeans?: string;
}

/** Checks one piece's options; every error names the piece and the option. */
export class OptionCheck {
  /** @param piece the name a user calls: `"ResourceRegistry"`, `"createFileRoutes"`, … */
  constructor(readonly piece: string) {}

  /** The error for a bad option: `INVALID_OPTION`, `"<piece>: <path> <problem>"`, `data.option`. */
  error(path: string, problem: string, cause?: unknown): FileBridgeError {
    return new FileBridgeError("INVALID_OPTION", `${this.piece}: ${path} ${problem}`, {
      data: { option: path },
      ...(cause === undefined ? {} : { cause }),
    });
  }

  /** Fails unless `ok`; the shortest step, for a rule of the piece's own. */
  require(ok: boolean, path: string, problem: string): void {
    if (!ok) throw this.error(path, problem);
  }

  /** The options object itself (or a nested one at `path`): a non-null object. */
  object<T>(value: T, path = "options"): NonNullable<T> {
    if (typeof value !== "object" || value === null) throw this.error(path, "must be an object");
    return value as NonNullable<T>;
  }

  /** An optional callback. */
  optionalFunction<F>(value: F | undefined, path: string): F | undefined {
    if (value !== undefined && typeof value !== "function") throw this.error(path, "must be a function");
    return value;
  }

  /** A required object with the named methods (`what` names the interface in the error). */
  implementing<T>(value: T | undefined, path: string, methods: readonly string[], what: string): T {
    const record = value as Record<string, unknown> | null | undefined;
    if (
      typeof record !== "object" ||
      record === null ||
      methods.some((method) => typeof record[method] !== "function")
    ) {
      throw this.error(path, `must be ${what}`);
    }
    return value as T;
  }

  /** An optional object with the named methods. */
  optionalImplementing<T>(
    value: T | undefined,
    path: string,
    methods: readonly string[],
    what: string,
  ): T | undefined {
    return value === undefined ? undefined : this.implementing(value, path, methods, what);
  }

  /** A safe integer within `bounds` (default `min` 0), or `fallback` when unset. */
  integer(value: number | undefined, path: string, fallback: number, bounds: IntegerBounds = {}): number {
    const result = value ?? fallback;
    const { min = 0, max } = bounds;
    if (!Number.isSafeInteger(result) || result < min || (max !== undefined && result > max)) {
      throw this.error(path, integerProblem(min, max));
    }
    return result;
  }

  /** A finite number of at least `min` (default 0), or `fallback` when unset. */
  number(value: number | undefined, path: string, fallback: number, min = 0): number {
    const result = value ?? fallback;
    if (typeof result !== "number" || !Number.isFinite(result) || result < min) {
      throw this.error(
        path,
        min === 0 ? "must be a non-negative number" : `must be a number of at least ${min}`,
      );
    }
    return result;
  }

  /** One of `allowed`, or `fallback` when unset. */
  oneOf<T extends string>(value: T | undefined, path: string, allowed: readonly T[], fallback: T): T {
    const result = value ?? fallback;
    if (!allowed.includes(result)) {
      throw this.error(path, `must be ${allowed.map((a) => JSON.stringify(a)).join(" or ")}`);
    }
    return result;
  }

  /** An optional boolean. */
  boolean(value: boolean | undefined, path: string, fallback: boolean): boolean {
    const result = value ?? fallback;
    if (typeof result !== "boolean") throw this.error(path, "must be true or false");
    return result;
  }

  /**
   * A {@link Duration} in milliseconds, or `fallback` when unset. `positive` refuses 0; `maxMs`
   * caps it; `zeroMeans` says what 0 does, in the error (`"turns it off"`).
   */
  duration(
    value: Duration | undefined,
    path: string,
    fallback: Duration,
    bounds: DurationBounds = {},
  ): number {
    const hint = bounds.zeroMeans === undefined ? "" : ` (0 ${bounds.zeroMeans})`;
    let ms: number;
    try {
      ms = durationToMs(value ?? fallback, path);
    } catch (cause) {
      throw this.error(path, `must be seconds or a duration like "30s"${hint}`, cause);
    }
    if (bounds.positive && ms <= 0) throw this.error(path, "must be positive");
    if (bounds.maxMs !== undefined && ms > bounds.maxMs)
      throw this.error(path, `must be at most ${bounds.maxLabel ?? `${bounds.maxMs} ms`}`);
    return ms;
  }
}

function integerProblem(min: number, max: number | undefined): string {
  if (max !== undefined) return `must be an integer from ${min} to ${max}`;
  if (min === 0) return "must be a non-negative integer";
  if (min === 1) return "must be a positive integer";
  return `must be an integer of at least ${min}`;
}

/** The {@link OptionCheck} for one piece. */
export function optionCheck(piece: string): OptionCheck {
  return new OptionCheck(piece);
}
