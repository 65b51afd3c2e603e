/**
 * The types the direct-to-storage strategy (`direct-upload.ts`) and its work loaded on first use
 * (`direct-upload-work.ts`) share, apart from both so neither imports the other (no import cycle).
 */
import type { ScopeRefs } from "../scope/scope-refs.js";
import type { FileStore, StateStore } from "../storage/types.js";
import type { FileTransferDescriptor, FileValue } from "./files-wire.js";

/** What one direct `authorizeUpload` asks for: the ticket's id, lifetime and declared claims. */
export interface DirectUploadRequest {
  scope: string;
  ticketId: string;
  uri: string;
  /** When the ticket was issued and expires, milliseconds (the minter's clock). */
  issuedAt: number;
  expiresAt: number;
  name?: string;
  mimeType?: string;
  size?: number;
  sha256?: string;
  maxBytes: number;
  fileTtl: number;
}

/** What the direct strategy answers `authorizeUpload` with. */
export type DirectUploadResult =
  | { file: FileValue; upload: FileTransferDescriptor }
  | { file: FileValue; committed: true };

/** What the strategy borrows from its resolver. */
export interface DirectUploadDeps {
  store: FileStore;
  state: StateStore;
  refs: ScopeRefs;
}
