/**
 * What `FileRequests` (`request-files.ts`) hands the work it loads on first use
 * (`request-files-work.ts`): its checked settings, and a `create()` whose arguments were checked.
 * Apart from both so neither imports the other's file (no import cycle).
 */
import type { Duration } from "../internal/duration.js";
import type { ScopeRefs } from "../scope/scope-refs.js";
import type { UrlSigner } from "../signing/types.js";
import type { FileStore, StateStore, StoredFile } from "../storage/types.js";
import type { FileRequestsOptions, FileRequestToolResult } from "./request-files-types.js";

/** A `FileRequests`' checked settings, as its work reads them. */
export interface FileRequestsCore {
  store: FileStore;
  state: StateStore;
  minter: Pick<UrlSigner, "mint" | "scopeRefs">;
  /** How scopes become references in handles. */
  scopeRefs: ScopeRefs;
  /** Link lifetime. */
  ttl: Duration;
  /** Lifetime of the uploaded files, seconds. */
  handleTtlSeconds: number;
  /** Default wait, ms. */
  timeoutMs: number;
  /** Poll interval of a wait, ms. */
  pollMs: number;
  pageUrl: (uploadUrl: string) => string;
  allowTicket: FileRequestsOptions["allowTicket"];
  /** `FileRequests.resultFor`. */
  resultFor(requestId: string, files: readonly StoredFile[]): FileRequestToolResult;
}

/** What `FileRequests.create` checked of its options before loading the work. */
export interface CheckedRequest {
  message: string;
  maxFiles: number;
  maxBytes: number;
  /** The accepted types, trimmed, empty ones left out. */
  accept: string[];
  /** The server name shown on the page, when one is valid. */
  asker: string | undefined;
}
