import { createHash } from "node:crypto";
import { parseMetadataRecord, serializeMetadataRecord } from "../storage/kit/metadata-record.js";

/** Suffix of a file's metadata object, beside its data object. */
export const META_SUFFIX = ".json";

/** The object-key layout of one store: `<prefix><sha256(scope)[0..32]>/<id>` (+ `.json`). */
export class S3Keys {
  constructor(readonly prefix: string) {}

  /** The folder of a scope: a hash, never the scope itself. */
  scopeFolder(scope: string): string {
    return `${this.prefix}${createHash("sha256").update(scope, "utf8").digest("hex").slice(0, 32)}/`;
  }

  data(scope: string, id: string): string {
    return this.scopeFolder(scope) + id;
  }

  meta(scope: string, id: string): string {
    return this.scopeFolder(scope) + id + META_SUFFIX;
  }
}

/** The metadata object's body (the storage kit's metadata record). */
export const serializeMeta = serializeMetadataRecord;

/** Parses a metadata object; `null` for anything that is not a complete record of this id. */
export const parseMeta = parseMetadataRecord;
