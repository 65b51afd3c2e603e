/**
 * Attack: guessing a file id from a neighbour. Ids were time + a random value that stepped by one
 * within a millisecond, so 192 of 199 consecutive puts got the previous id plus one: whoever saw one
 * id knew the next. Ids still sort by creation (cursors and listings rely on it), but each now ends in
 * 50 bits drawn fresh for it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isId, newId } from "../../src/internal/ids.js";
import { fsStore } from "../../src/storage/fs-store.js";
import { memoryStore } from "../../src/storage/memory-store.js";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/** An id as the 130-bit number its base32 characters spell. */
function value(id: string): bigint {
  let out = 0n;
  for (const char of id) out = out * 32n + BigInt(ALPHABET.indexOf(char));
  return out;
}

/** The fresh random part of an id (the last 10 characters, 50 bits). */
function tail(id: string): string {
  return id.slice(16);
}

/** How many ids are their predecessor plus a small step (what a guesser would try first). */
function guessable(ids: string[], within = 1n << 20n): number {
  let count = 0;
  for (let i = 1; i < ids.length; i++) {
    const step = value(ids[i] as string) - value(ids[i - 1] as string);
    if (step > 0n && step <= within) count++;
  }
  return count;
}

describe("attack: predicting the next file id from the last one", () => {
  it("199 consecutive puts into a store: no id is its neighbour plus a small step", async () => {
    const store = memoryStore();
    const ids: string[] = [];
    for (let i = 0; i < 199; i++)
      ids.push((await store.put(Buffer.from([i]), { scope: "s", name: `f${i}` })).id);
    expect(guessable(ids)).toBe(0);
    expect(new Set(ids.map(tail)).size).toBe(ids.length);
    // Still in creation order, so listing and cursors keep working.
    expect([...ids].sort()).toEqual(ids);
    expect((await store.list("s", { limit: 500 })).files.map((file) => file.id)).toEqual(ids);
  });

  it("the same on disk (fsStore)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mfb-sec-ids-"));
    try {
      const store = fsStore(dir);
      const ids: string[] = [];
      for (let i = 0; i < 50; i++)
        ids.push((await store.put(Buffer.from([i]), { scope: "s", name: `f${i}` })).id);
      expect(guessable(ids)).toBe(0);
      expect([...ids].sort()).toEqual(ids);
    } finally {
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    }
  });

  it("within one millisecond: ordered, but every tail fresh", () => {
    const ids = Array.from({ length: 2000 }, () => newId(1_800_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(guessable(ids)).toBe(0);
    // Each tail character is spread over the alphabet, not stepping.
    for (let position = 16; position < 26; position++) {
      expect(new Set(ids.map((id) => id[position])).size).toBe(32);
    }
    const sameTailStep = ids.slice(1).filter((id, i) => tail(id) === tail(ids[i] as string)).length;
    expect(sameTailStep).toBe(0);
  });
});

describe("ids (properties)", () => {
  it("any run of ids at any times (clock going back too) is strictly increasing and well-formed", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 2 ** 40 }), { minLength: 2, maxLength: 60 }),
        (times) => {
          const ids = times.map((time) => newId(time));
          for (const id of ids) expect(isId(id)).toBe(true);
          for (let i = 1; i < ids.length; i++) expect((ids[i - 1] as string) < (ids[i] as string)).toBe(true);
        },
      ),
    );
  });
});
