import { createHash, createHmac, hkdfSync } from "node:crypto";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { parseMetadataRecord, serializeMetadataRecord } from "../storage/kit/metadata-record.js";

/** Suffix of a file's metadata object, beside its data object. */
export const META_SUFFIX = ".json";

/** Name (after the prefix) of the object holding the bucket's own scope-folder secret. */
export const SCOPE_KEY_NAME = ".scope-key";

const KEYED_INFO = "mcp-file-bridge/s3-scope-folder/v1";

/** A legacy (unkeyed) scope folder name: 32 lower-case hex characters. */
const LEGACY_FOLDER = /^[0-9a-f]{32}$/;

/**
 * The object-key layout of one store: `<prefix>k<hmac(scope)[0..32]>/<id>` (+ `.json`), the folder
 * an HMAC-SHA-256 of the scope under a key derived (HKDF) from the store's secret — so an object
 * key (seen in a presigned URL or an upload form) lets nobody test guesses of the scope offline.
 * Stores before issue 40 wrote `<prefix><sha256(scope)[0..32]>/`: the legacy folder, still read.
 */
export class S3Keys {
  #key: Buffer | undefined;

  constructor(readonly prefix: string) {}

  /** Sets the secret the folders are keyed with (the operator's `keySecret`, or the bucket's own). */
  useSecret(secret: Uint8Array): void {
    this.#key = Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), KEYED_INFO, 32));
  }

  get ready(): boolean {
    return this.#key !== undefined;
  }

  /** The key of the object holding the store's generated secret. */
  get secretObject(): string {
    return this.prefix + SCOPE_KEY_NAME;
  }

  /** The folder of a scope: a keyed hash, never the scope itself. */
  scopeFolder(scope: string): string {
    if (!this.#key)
      throw new FileBridgeError("STORAGE_ERROR", "s3: the scope-folder secret is not loaded yet");
    const mac = createHmac("sha256", this.#key).update(scope, "utf8").digest("hex").slice(0, 32);
    return `${this.prefix}k${mac}/`;
  }

  /** The unkeyed folder of the layout before issue 40 (read for compatibility, never written). */
  legacyFolder(scope: string): string {
    return `${this.prefix}${createHash("sha256").update(scope, "utf8").digest("hex").slice(0, 32)}/`;
  }

  /** True when `key` is a metadata object in a legacy folder: `<prefix><32 hex>/<name>.json`. */
  isLegacyMeta(key: string): boolean {
    if (!key.startsWith(this.prefix) || !key.endsWith(META_SUFFIX)) return false;
    const [folder, name, ...rest] = key.slice(this.prefix.length).split("/");
    return rest.length === 0 && name !== undefined && LEGACY_FOLDER.test(folder ?? "");
  }

  data(scope: string, id: string): string {
    return this.scopeFolder(scope) + id;
  }

  meta(scope: string, id: string): string {
    return this.scopeFolder(scope) + id + META_SUFFIX;
  }

  legacyData(scope: string, id: string): string {
    return this.legacyFolder(scope) + id;
  }

  legacyMeta(scope: string, id: string): string {
    return this.legacyFolder(scope) + id + META_SUFFIX;
  }
}

/** The metadata object's body (the storage kit's metadata record). */
export const serializeMeta = serializeMetadataRecord;

/** Parses a metadata object; `null` for anything that is not a complete record of this id. */
export const parseMeta = parseMetadataRecord;
