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
} as const;

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

/** `upload://sessions/{scope}/{id}` with the scope percent-encoded. */
export function formatUploadHandle(scope: string, id: string): string {
  return `${UPLOAD_HANDLE_PREFIX}${encodeURIComponent(scope)}/${encodeURIComponent(id)}`;
}

/** The handle of a stored file. */
export function uploadHandleOf(file: Pick<StoredFile, "scope" | "id">): string {
  return formatUploadHandle(file.scope, file.id);
}

/** Splits a handle into scope and id; `null` when it is not a well-formed upload handle. */
export function parseUploadHandle(input: string): { scope: string; id: string } | null {
  if (!input.startsWith(UPLOAD_HANDLE_PREFIX)) return null;
  const rest = input.slice(UPLOAD_HANDLE_PREFIX.length);
  const parts = rest.split("/");
  if (parts.length !== 2) return null;
  try {
    const scope = decodeURIComponent(parts[0] as string);
    const id = decodeURIComponent(parts[1] as string);
    if (!scope || !id) return null;
    return { scope, id };
  } catch {
    return null;
  }
}
