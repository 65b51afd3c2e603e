import { describe, expect, it } from "vitest";
import { isFileBridgeError } from "../../src/errors/file-bridge-error.js";
import { newId } from "../../src/internal/ids.js";
import { decodeListCursor, encodeListCursor } from "../../src/registry/cursor.js";

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isFileBridgeError(error) ? error.code : "OTHER";
  }
  return undefined;
}

describe("list cursor", () => {
  it("round-trips the last id for its scope", () => {
    const id = newId();
    expect(decodeListCursor("s1", encodeListCursor("s1", id))).toBe(id);
  });

  it("refuses another scope's cursor", () => {
    expect(code(() => decodeListCursor("s2", encodeListCursor("s1", newId())))).toBe("INVALID_CURSOR");
  });

  it.each(["", "!!", "abc", Buffer.from("r1.xxxxxxxx.notanid").toString("base64url"), "a".repeat(200), 42])(
    "refuses %j",
    (cursor) => {
      expect(code(() => decodeListCursor("s1", cursor))).toBe("INVALID_CURSOR");
    },
  );
});
