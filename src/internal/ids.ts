import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;

/** Pattern every id made by {@link newId} matches; ids from outside are checked against it. */
export const ID_PATTERN = /^[0-9a-hjkmnp-tv-z]{26}$/;

let lastTime = -1;
let lastRandom: number[] = [];

function encodeTime(time: number): string {
  let out = "";
  let t = time;
  for (let i = 0; i < TIME_CHARS; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

/** Adds one to a base32 digit array; false on overflow (all digits were 31). */
function increment(digits: number[]): boolean {
  for (let i = digits.length - 1; i >= 0; i--) {
    if ((digits[i] as number) < 31) {
      digits[i] = (digits[i] as number) + 1;
      return true;
    }
    digits[i] = 0;
  }
  return false;
}

/**
 * A new random id: 26 lower-case Crockford base32 characters, 48 bits of millisecond time then 80
 * random bits. Ids sort by creation time (stable list order, cheap cursors) and are safe as file and
 * object-key names. Within one process they are strictly increasing, also within one millisecond
 * and when the clock steps back, so a listing cursor never skips a file added while paging.
 */
export function newId(now: number = Date.now()): string {
  let time = Math.max(0, Math.floor(now));
  if (time <= lastTime) {
    time = lastTime;
    if (!increment(lastRandom)) {
      time = lastTime + 1;
      lastRandom = Array.from(randomBytes(RANDOM_CHARS), (byte) => byte % 32);
    }
  } else {
    lastRandom = Array.from(randomBytes(RANDOM_CHARS), (byte) => byte % 32);
  }
  lastTime = time;
  return encodeTime(time) + lastRandom.map((digit) => ALPHABET[digit]).join("");
}

/** True when `value` has the shape of an id made by {@link newId}. */
export function isId(value: unknown): value is string {
  return typeof value === "string" && ID_PATTERN.test(value);
}
