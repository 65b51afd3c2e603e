/**
 * `mcp-file-bridge/storage-kit` (also reachable as `mcp-file-bridge/storage`, its former name): the
 * kit for driver authors. A driver built on it gets the same
 * put pipeline as `memoryStore` and `fsStore` (validation, size cap and sha256 while streaming,
 * declared size and digest checks, staging then commit), the same list and range rules, and the
 * per-scope quota helpers (`checkScopeQuota`, `quotaViolation`, `KeyedLock`). Run the
 * conformance suites from `mcp-file-bridge/testing` against it. It also holds the storage
 * contracts' secondary types (catalogs, change feeds, list and put arguments).
 */
export type {
  AdoptObject,
  AdoptObjectPart,
  AdoptSource,
  ByteRange,
  CatalogPageOptions,
  ChangeFeed,
  DirectUploads,
  FileCatalog,
  FileKind,
  FileStore,
  ListOptions,
  ListPage,
  PresignedUpload,
  PresignUploadOptions,
  PutOptions,
  PutSource,
  ScopeQuota,
  ScopeUsage,
  StagedFile,
  StateSetOptions,
  StateStore,
  StoreChange,
  StoredFile,
} from "../types.js";
export { resolveRange } from "./byte-range.js";
export {
  DEFAULT_LIST_LIMIT,
  decodeCursor,
  encodeCursor,
  isExpired,
  listKind,
  listLimit,
  MAX_LIST_LIMIT,
  upperBound,
} from "./list-page.js";
export { parseMetadataRecord, serializeMetadataRecord } from "./metadata-record.js";
export type { MeterLimits, PutMeasure } from "./put-meter.js";
export { checkMeasured, measureBytes, PutMeter } from "./put-meter.js";
export { streamPut } from "./put-pipeline.js";
export type { PutPlan } from "./put-plan.js";
export { MAX_METADATA_ENTRIES, MAX_METADATA_LENGTH, planPut, storedFileOf } from "./put-plan.js";
export { toPutError, toReadable } from "./put-source.js";
export type { StreamLimits } from "./quota.js";
export { checkScopeQuota, KeyedLock, quotaExceeded, quotaViolation } from "./quota.js";
export { stagedFile } from "./staged-file.js";
