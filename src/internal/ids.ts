import { pooledRandomByte } from "./random-pool.js";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case
const TIME_CHARS = 10;
/** Characters of the in-millisecond sequence: 30 bits. */
const SEQUENCE_CHARS = 6;
/** Characters drawn fresh for every id: 50 bits. */
const RANDOM_CHARS = 10;
const SEQUENCE_LIMIT = 32 ** SEQUENCE_CHARS;
/** A new millisecond starts its sequence below this, leaving 2^29 steps before it would overflow. */
const SEQUENCE_START_LIMIT = SEQUENCE_LIMIT / 2;

/** Pattern every id made by {@link newId} matches; ids from outside are checked against it. */
export const ID_PATTERN = /^[0-9a-hjkmnp-tv-z]{26}$/;

let lastTime = -1;
let lastSequence = 0;

/** Random bytes drawn a pool at a time (one CSPRNG call per few hundred ids, not one per id). */
const randomByte = pooledRandomByte;

/** `count` base32 characters of fresh randomness (a byte modulo 32 is unbiased). */
function randomChars(count: number): string {
  let out = "";
  for (let i = 0; i < count; i++) out += ALPHABET[randomByte() % 32];
  return out;
}

/** A random sequence start: 29 random bits. */
function randomSequenceStart(): number {
  let value = 0;
  for (let i = 0; i < 4; i++) value = value * 256 + randomByte();
  return value % SEQUENCE_START_LIMIT;
}

function encode(value: number, chars: number): string {
  let out = "";
  let rest = value;
  for (let i = 0; i < chars; i++) {
    out = ALPHABET[rest % 32] + out;
    rest = Math.floor(rest / 32);
  }
  return out;
}

/**
 * A new random id: 26 lower-case Crockford base32 characters — 48 bits of millisecond time, a 30-bit
 * sequence, then 50 random bits drawn fresh for every id. Ids sort by creation time (stable list
 * order, cheap cursors) and are safe as file and object-key names. Within one process they are
 * strictly increasing, also within one millisecond and when the clock steps back: the sequence
 * starts at a random value each millisecond and steps by one. The fresh tail means an id cannot be
 * guessed from a neighbour (it used to be the previous id plus one within a millisecond).
 */
export function newId(now: number = Date.now()): string {
  let time = Math.max(0, Math.floor(now));
  let sequence: number;
  if (time > lastTime) {
    sequence = randomSequenceStart();
  } else {
    time = lastTime;
    sequence = lastSequence + 1;
    if (sequence >= SEQUENCE_LIMIT) {
      time = lastTime + 1;
      sequence = randomSequenceStart();
    }
  }
  lastTime = time;
  lastSequence = sequence;
  return encode(time, TIME_CHARS) + encode(sequence, SEQUENCE_CHARS) + randomChars(RANDOM_CHARS);
}

/** True when `value` has the shape of an id made by {@link newId}. */
export function isId(value: unknown): value is string {
  return typeof value === "string" && ID_PATTERN.test(value);
}
