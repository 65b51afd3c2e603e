/**
 * The options kit (src/internal/options.ts): each step returns the checked value or its default,
 * and every bad option is one error shape — `INVALID_OPTION`, `"<piece>: <path> <problem>"`,
 * `data.option` = the path.
 */
import { describe, expect, it } from "vitest";
import { FileBridgeError } from "../../src/errors/file-bridge-error.js";
import { optionCheck } from "../../src/internal/options.js";

const check = optionCheck("Piece");

function failure(run: () => unknown): { code: string; message: string; option: unknown } {
  try {
    run();
  } catch (error) {
    if (!(error instanceof FileBridgeError)) throw error;
    return { code: error.code, message: error.message, option: error.data?.option };
  }
  throw new Error("expected a FileBridgeError");
}

describe("optionCheck", () => {
  it("builds one error shape naming the piece and the option's path", () => {
    const cause = new Error("inner");
    const error = check.error("proxy.auth.tokensEnv", "must be set", cause);
    expect(error.code).toBe("INVALID_OPTION");
    expect(error.message).toBe("Piece: proxy.auth.tokensEnv must be set");
    expect(error.data).toEqual({ option: "proxy.auth.tokensEnv" });
    expect(error.cause).toBe(cause);
    expect(check.error("x", "y").cause).toBeUndefined();
  });

  it("object: the options object, or a nested one", () => {
    const options = { a: 1 };
    expect(check.object(options)).toBe(options);
    expect(failure(() => check.object(null))).toEqual({
      code: "INVALID_OPTION",
      message: "Piece: options must be an object",
      option: "options",
    });
    expect(failure(() => check.object("x", "auth")).option).toBe("auth");
  });

  it("integer: default, bounds, and a message that states them", () => {
    expect(check.integer(undefined, "n", 7)).toBe(7);
    expect(check.integer(0, "n", 7)).toBe(0);
    expect(check.integer(1000, "n", 7, { min: 1, max: 1000 })).toBe(1000);
    expect(failure(() => check.integer(-1, "n", 7)).message).toBe("Piece: n must be a non-negative integer");
    expect(failure(() => check.integer(0, "n", 7, { min: 1 })).message).toBe(
      "Piece: n must be a positive integer",
    );
    expect(failure(() => check.integer(1.5, "n", 7, { min: 1, max: 9 })).message).toBe(
      "Piece: n must be an integer from 1 to 9",
    );
    expect(failure(() => check.integer(10, "n", 7, { min: 1, max: 9 })).option).toBe("n");
    expect(failure(() => check.integer(Number.NaN, "n", 7)).code).toBe("INVALID_OPTION");
    expect(failure(() => check.integer("3" as unknown as number, "n", 7)).code).toBe("INVALID_OPTION");
    expect(failure(() => check.integer(3, "n", 7, { min: 5 })).message).toBe(
      "Piece: n must be an integer of at least 5",
    );
  });

  it("number: finite, at least min", () => {
    expect(check.number(undefined, "ms", 10)).toBe(10);
    expect(check.number(0.5, "ms", 10)).toBe(0.5);
    expect(failure(() => check.number(-1, "ms", 10)).message).toBe("Piece: ms must be a non-negative number");
    expect(failure(() => check.number(Number.POSITIVE_INFINITY, "ms", 10)).option).toBe("ms");
    expect(failure(() => check.number(1, "ms", 10, 2)).message).toBe(
      "Piece: ms must be a number of at least 2",
    );
  });

  it("oneOf: listed values only, default when unset", () => {
    expect(check.oneOf(undefined, "mode", ["list", "none"], "list")).toBe("list");
    expect(check.oneOf("none", "mode", ["list", "none"], "list")).toBe("none");
    expect(failure(() => check.oneOf("some" as "list", "mode", ["list", "none"], "list")).message).toBe(
      'Piece: mode must be "list" or "none"',
    );
  });

  it("optionalFunction, implementing and optionalImplementing", () => {
    const fn = () => 1;
    expect(check.optionalFunction(fn, "hook")).toBe(fn);
    expect(check.optionalFunction(undefined, "hook")).toBeUndefined();
    expect(failure(() => check.optionalFunction(5 as unknown as () => void, "hook")).message).toBe(
      "Piece: hook must be a function",
    );
    const store = { put() {}, read() {} };
    expect(check.implementing(store, "store", ["put", "read"], "a FileStore")).toBe(store);
    expect(failure(() => check.implementing({ put() {} }, "store", ["put", "read"], "a FileStore"))).toEqual({
      code: "INVALID_OPTION",
      message: "Piece: store must be a FileStore",
      option: "store",
    });
    expect(failure(() => check.implementing(undefined, "store", ["put"], "a FileStore")).option).toBe(
      "store",
    );
    expect(check.optionalImplementing(undefined, "feed", ["publish"], "a ChangeFeed")).toBeUndefined();
    expect(failure(() => check.optionalImplementing({}, "feed", ["publish"], "a ChangeFeed")).option).toBe(
      "feed",
    );
  });

  it("boolean and require", () => {
    expect(check.boolean(undefined, "flag", true)).toBe(true);
    expect(failure(() => check.boolean("yes" as unknown as boolean, "flag", true)).message).toBe(
      "Piece: flag must be true or false",
    );
    expect(() => check.require(true, "x", "never")).not.toThrow();
    expect(failure(() => check.require(false, "x", "needs y")).message).toBe("Piece: x needs y");
  });

  it("duration: seconds or a unit string, in milliseconds; positive refuses 0", () => {
    expect(check.duration(undefined, "ttl", "1h")).toBe(3_600_000);
    expect(check.duration(2, "ttl", "1h")).toBe(2000);
    expect(check.duration(0, "ttl", "1h")).toBe(0);
    const bad = failure(() => check.duration("soon" as "1h", "ttl", "1h"));
    expect(bad).toEqual({
      code: "INVALID_OPTION",
      message: 'Piece: ttl must be seconds or a duration like "30s"',
      option: "ttl",
    });
    expect(failure(() => check.duration(0, "ttl", "1h", { positive: true })).message).toBe(
      "Piece: ttl must be positive",
    );
    expect(
      failure(() => check.duration("2d", "t", 0, { maxMs: 86_400_000, maxLabel: "1 day" })).message,
    ).toBe("Piece: t must be at most 1 day");
    expect(failure(() => check.duration("x" as "1h", "t", 0, { zeroMeans: "turns it off" })).message).toBe(
      'Piece: t must be seconds or a duration like "30s" (0 turns it off)',
    );
  });
});
