/**
 * `mcp-file-bridge/s3`: a `FileStore` on S3 and S3-compatible object storage, on the official
 * AWS SDK v3 (`@aws-sdk/client-s3`, an optional peer dependency; `@aws-sdk/s3-request-presigner`
 * only for presigned downloads and direct uploads).
 */

export type { S3StagingTarget, S3TusStagingOptions } from "./s3-staging.js";
export { s3TusStaging } from "./s3-staging.js";
export type { S3FileStore, S3StoreOptions } from "./s3-store.js";
export { s3Store } from "./s3-store.js";
