import { type ScopeRefs, UNKEYED_SCOPE_REFS } from "../scope/scope-refs.js";
import type { StoredFile } from "../storage/types.js";

/** Every upload handle starts with this. */
export const UPLOAD_HANDLE_PREFIX = "upload://sessions/";

/** Names of the extra claims an upload ticket carries (shared by the resolver and the routes). */
export const TICKET_CLAIMS = {
  /** Per-file size cap in bytes. */
  maxBytes: "max_bytes",
  /** Most files one upload may carry. */
  maxFiles: "max_files",
  /** Time to live of the stored files, in seconds. */
  fileTtl: "file_ttl",
  /** The files extension: the exact size the one file must have, in bytes. */
  exactSize: "exact_size",
  /** The files extension: the sha-256 (hex) the one file must have. */
  sha256: "sha256",
  /** The files extension: the media type (essence) the one file must have. */
  mimeType: "mime_type",
} as const;

/**
 * Names of the extra claims an upload ticket may carry for the upload page: the request text shown
 * under the heading, and the file types the picker offers. Any minter that signs claims can set them;
 * `FileRequests` does.
 *
 * @example
 * ```ts
 * await minter.mint({
 *   scope, fileId: ticketId, action: "upload", singleUse: true,
 *   claims: { [UPLOAD_PAGE_CLAIMS.message]: "The invoice as a PDF", [UPLOAD_PAGE_CLAIMS.accept]: ".pdf" },
 * });
 * ```
 */
export const UPLOAD_PAGE_CLAIMS = Object.freeze({
  /** Request text shown on the page (at most 1024 characters). */
  message: "page_message",
  /** Comma-separated `accept` list of the file picker, e.g. `".pdf,image/*"`. */
  accept: "page_accept",
  /** Which server asks for the files (its title or name, at most 100 characters). */
  server: "page_server",
} as const);

/** What the routes record in the `StateStore` after a ticket upload, so a ticket handle resolves. */
export interface TicketRecord {
  /** Scope of the ticket. */
  scope: string;
  /** Ids of the files stored with the ticket, in upload order. */
  files: string[];
}

/** State key of a ticket's record. */
export function ticketStateKey(ticketId: string): string {
  return `mcp-file-bridge:upload-ticket:${ticketId}`;
}

/** What `scopeRef()` produces: 128 bits, base64url, 22 characters. */
const SCOPE_REF = /^[A-Za-z0-9_-]{22}$/;

/**
 * `upload://sessions/{scopeRef}/{id}`: the scope's opaque reference, never the scope itself (a
 * scope is often a session id, a bearer value; handles are shown to the model and the person).
 * `refs` are the minter's (`minter.scopeRefs`), keyed by the server secret.
 */
export function formatUploadHandle(scope: string, id: string, refs: ScopeRefs = UNKEYED_SCOPE_REFS): string {
  return `${UPLOAD_HANDLE_PREFIX}${refs.of(scope)}/${encodeURIComponent(id)}`;
}

/** The handle of a stored file. */
export function uploadHandleOf(
  file: Pick<StoredFile, "scope" | "id">,
  refs: ScopeRefs = UNKEYED_SCOPE_REFS,
): string {
  return formatUploadHandle(file.scope, file.id, refs);
}

/**
 * Splits a handle into scope reference and id; `null` when it is not a well-formed upload handle.
 * The reference only ever matches the reference of the caller's own scope.
 */
export function parseUploadHandle(input: string): { scopeRef: string; id: string } | null {
  if (!input.startsWith(UPLOAD_HANDLE_PREFIX)) return null;
  const rest = input.slice(UPLOAD_HANDLE_PREFIX.length);
  const parts = rest.split("/");
  if (parts.length !== 2) return null;
  const ref = parts[0] as string;
  if (!SCOPE_REF.test(ref)) return null;
  try {
    const id = decodeURIComponent(parts[1] as string);
    if (!id) return null;
    return { scopeRef: ref, id };
  } catch {
    return null;
  }
}

/**
 * How far a ticket's resumable (tus) upload got, as the state store holds it while bytes arrive:
 * what a tool waiting for the person reads to send progress, from any replica.
 */
export interface UploadProgressRecord {
  /** Scope of the ticket. */
  scope: string;
  /** Bytes received. */
  offset: number;
  /** Declared length, when known. */
  length?: number;
}

/** State key of a ticket's upload progress. */
export function uploadProgressKey(ticketId: string): string {
  return `mcp-file-bridge:upload-progress:${ticketId}`;
}

/**
 * The tus endpoint of an upload ticket's URL: `{basePath}/upload/{token}` → `{basePath}/tus/{token}`
 * (the same ticket, spoken over tus 1.0 by the routes).
 *
 * @example
 * ```ts
 * tusEndpointOf("https://files.example.com/files/upload/eyJ…"); // "https://files.example.com/files/tus/eyJ…"
 * ```
 */
export function tusEndpointOf(uploadUrl: string): string {
  const url = new URL(uploadUrl);
  url.pathname = url.pathname.replace(/\/upload\/([^/]+)$/, "/tus/$1");
  url.search = "";
  return url.href;
}
