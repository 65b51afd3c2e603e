/**
 * `mcp-file-bridge/cloudflare`: drivers on Cloudflare Workers bindings. `r2Store` keeps files in
 * an R2 bucket; `durableObjectState` keeps tickets, nonces and handles in a Durable Object
 * (strongly consistent, so a single-use claim is claimed once). Types are structural: a Worker
 * passes its `env` bindings as they are, with or without `@cloudflare/workers-types`.
 */
export type {
  DurableObjectNamespaceBinding,
  DurableObjectStateLike,
  DurableObjectStubLike,
  R2BucketBinding,
  R2MultipartUploadLike,
  R2ObjectBodyLike,
  R2ObjectLike,
  R2ObjectsLike,
  R2UploadedPartLike,
  SqlStorageLike,
  StubResponseLike,
} from "./bindings.js";
export type { DurableObjectStateOptions } from "./durable-object-state.js";
export { durableObjectState } from "./durable-object-state.js";
export type { R2StoreOptions } from "./r2-store.js";
export { r2Store } from "./r2-store.js";
export type { R2TusStagingOptions } from "./r2-tus-staging.js";
export { r2TusStaging } from "./r2-tus-staging.js";
export type { StateRequest } from "./state-object.js";
export { FileBridgeStateObject } from "./state-object.js";
