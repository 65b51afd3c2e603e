import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;

/** Pattern every id made by {@link newId} matches; ids from outside are checked against it. */
export const ID_PATTERN = /^[0-9a-hjkmnp-tv-z]{26}$/;

/**
 * A new random id: 26 lower-case Crockford base32 characters, 48 bits of millisecond time then 80
 * random bits. Ids sort by creation time (stable list order, cheap cursors) and are safe as file and
 * object-key names.
 */
export function newId(now: number = Date.now()): string {
  let time = "";
  let t = Math.max(0, Math.floor(now));
  for (let i = 0; i < TIME_CHARS; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const bytes = randomBytes(RANDOM_CHARS);
  let random = "";
  for (const byte of bytes) random += ALPHABET[byte % 32];
  return time + random;
}

/** True when `value` has the shape of an id made by {@link newId}. */
export function isId(value: unknown): value is string {
  return typeof value === "string" && ID_PATTERN.test(value);
}
