/**
 * The bytes of a value handed to an R2 binding's `put` or `uploadPart` (a string, a view or an
 * `ArrayBuffer`), copied: for the in-memory bucket stand-ins the Node-side tests use.
 *
 * @example
 * ```ts
 * objects.set(key, bucketValueBytes(value));
 * ```
 */
export function bucketValueBytes(value: unknown): Uint8Array {
  if (typeof value === "string") return new TextEncoder().encode(value);
  if (ArrayBuffer.isView(value))
    return new Uint8Array(value.buffer, value.byteOffset, value.byteLength).slice();
  return new Uint8Array(value as ArrayBuffer).slice();
}
