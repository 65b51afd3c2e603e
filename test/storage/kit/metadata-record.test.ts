/**
 * The metadata record's text (src/storage/kit/metadata-record.ts): the inline form is exactly the
 * JSON of the record with its bytes in base64 (what earlier versions wrote and read), and it reads
 * back strictly.
 */
import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  metadataRecordBytes,
  parseStoredRecord,
  serializeMetadataRecord,
} from "../../../src/storage/kit/metadata-record.js";
import type { StoredFile } from "../../../src/storage/types.js";

const ID = "01m88fe44tb6shhx10kkkgd066";

function fileOf(size: number, name = "n1.txt"): StoredFile {
  return {
    id: ID,
    scope: "chat-1",
    name,
    mimeType: "text/plain",
    size,
    sha256: "a".repeat(64),
    createdAt: 1_795_000_000_000,
    expiresAt: 1_795_000_600_000,
    kind: "upload",
    metadata: { source: "test" },
  };
}

describe("serializeMetadataRecord", () => {
  it("writes the same text as JSON.stringify of the record with its bytes in base64, and reads back", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 8192 }),
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.integer({ min: 0, max: 64 }),
        (bytes, name, offset) => {
          // A view into a larger buffer, as a put's bytes often are.
          const backing = new Uint8Array(offset + bytes.length + 7);
          backing.set(bytes, offset);
          const view = backing.subarray(offset, offset + bytes.length);
          const file = fileOf(bytes.length, name);
          const text = serializeMetadataRecord(file, view);
          expect(text).toBe(JSON.stringify({ v: 1, ...file, inline: Buffer.from(bytes).toString("base64") }));
          const record = parseStoredRecord(text, ID);
          expect(record?.file).toEqual(file);
          expect(Buffer.from(record?.inline ?? "", "base64").equals(Buffer.from(bytes))).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("without bytes writes the record alone; no prefix of an inline record reads as a record", () => {
    const file = fileOf(4096);
    expect(serializeMetadataRecord(file)).toBe(JSON.stringify({ v: 1, ...file }));
    const text = serializeMetadataRecord(file, randomBytes(4096));
    for (const cut of [1, 100, text.length - 2, text.length - 1]) {
      expect(parseStoredRecord(text.slice(0, cut), ID)).toBeNull();
    }
    expect(parseStoredRecord(text, ID)?.file).toEqual(file);
  });
});

describe("metadataRecordBytes", () => {
  it("is the UTF-8 of serializeMetadataRecord's text, with or without inline bytes", () => {
    fc.assert(
      fc.property(
        fc.option(fc.uint8Array({ maxLength: 8192 }), { nil: undefined }),
        // Names and scopes beyond ASCII: the head's UTF-8 length differs from its string length.
        fc.string({ unit: "binary", minLength: 1, maxLength: 40 }),
        fc.string({ unit: "grapheme", minLength: 1, maxLength: 20 }),
        fc.integer({ min: 0, max: 64 }),
        (bytes, name, scope, offset) => {
          const file = { ...fileOf(bytes?.length ?? 0, name), scope };
          let view: Uint8Array | undefined;
          if (bytes !== undefined) {
            const backing = new Uint8Array(offset + bytes.length + 7);
            backing.set(bytes, offset);
            view = backing.subarray(offset, offset + bytes.length);
          }
          const expected = Buffer.from(serializeMetadataRecord(file, view), "utf8");
          expect(metadataRecordBytes(file, view).equals(expected)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});
