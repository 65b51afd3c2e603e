/**
 * Where an upload handle stands: announced before the upload by design, so a model that calls a
 * tool with it too early must hear what is true ("the person has not finished uploading"), not
 * "it may have expired". A ticket minted by `get_upload_url` leaves a small pending record in the
 * `StateStore` for its lifetime; a resumable upload leaves its progress; a committed upload its
 * ticket record. A handle of another scope, or one whose ticket expired unused, is "unknown",
 * exactly like a handle that never existed.
 *
 * Only async paths run this module (`statusOf`, a handle that does not resolve, the `check_upload`
 * tool's answers): the resolver loads it on first use (`resolver-later.ts`, issue 39). The tool's
 * registration and its name check are `upload-status-tool.ts`.
 */
import { FileBridgeError } from "../errors/file-bridge-error.js";
import type { ScopeRefs } from "../scope/scope-refs.js";
import type { StateStore, StoredFile } from "../storage/types.js";
import { parseUploadHandle, type UploadProgressRecord, uploadProgressKey } from "./upload-handle.js";

/**
 * Where an upload handle stands for the caller's scope: `pending` (the link is live and nothing
 * arrived yet), `receiving` (a resumable upload has `received` of `length` bytes), `ready` (the
 * files are stored) or `unknown` (expired, never made, malformed, or another scope's — the same
 * answer for each, so nothing leaks).
 *
 * @example
 * ```ts
 * const status: UploadStatus = await uploads.statusOf(handle, { scope });
 * if (status.status === "ready") console.log(status.files.map((file) => file.name));
 * ```
 */
export type UploadStatus =
  | { status: "pending"; handle: string; expires_at: string }
  | { status: "receiving"; handle: string; received: number; length?: number; expires_at?: string }
  | {
      status: "ready";
      handle: string;
      files: Array<{ handle: string; name: string; size: number; mimeType: string }>;
    }
  | { status: "unknown" };

/** What the state store keeps of a ticket minted for a handle, until the ticket expires. */
export interface PendingUploadRecord {
  /** Scope of the ticket. */
  scope: string;
  /** When the ticket's link expires, epoch milliseconds. */
  expiresAt: number;
}

/** State key of a minted ticket's pending record. */
export function pendingUploadKey(ticketId: string): string {
  return `mcp-file-bridge:upload-pending:${ticketId}`;
}

/** State key `FileRequests` keeps for a request (the same "link is live" fact). */
const fileRequestKey = (id: string) => `mcp-file-bridge:file-request:${id}`;

/** What {@link uploadStatusOf} needs from the resolver. */
export interface UploadStatusDeps {
  state: StateStore;
  refs: ScopeRefs;
  /** Every stored file the handle stands for in the scope, `null` when none. */
  filesFor(handle: string, options: { scope: string }): Promise<StoredFile[] | null>;
  /** The handle of a stored file. */
  handleFor(file: StoredFile): string;
  /** The signer's clock: a ticket whose `expiresAt` is past it is not pending any more. */
  now(): number;
}

/**
 * Where `handle` stands for `scope` (see {@link UploadStatus}). Cheap: a stored-file head and at
 * most three state reads.
 */
export async function uploadStatusOf(
  deps: UploadStatusDeps,
  handle: string,
  scope: string,
): Promise<UploadStatus> {
  const parsed = typeof handle === "string" ? parseUploadHandle(handle) : null;
  if (!parsed || !deps.refs.matches(parsed.scopeRef, scope)) return { status: "unknown" };
  const files = await deps.filesFor(handle, { scope });
  if (files && files.length > 0) {
    return {
      status: "ready",
      handle,
      files: files.map((file) => ({
        handle: deps.handleFor(file),
        name: file.name,
        size: file.size,
        mimeType: file.mimeType,
      })),
    };
  }
  return (await unfinishedStatusOf(deps, handle, parsed.id, scope)) ?? { status: "unknown" };
}

/** `pending` or `receiving` for a handle whose ticket is live (or still receiving) in `scope`; else null. */
async function unfinishedStatusOf(
  { state, now }: Pick<UploadStatusDeps, "state" | "now">,
  handle: string,
  id: string,
  scope: string,
): Promise<UploadStatus | null> {
  const [progress, pending, request] = await Promise.all([
    state.get<UploadProgressRecord>(uploadProgressKey(id)),
    state.get<PendingUploadRecord>(pendingUploadKey(id)),
    state.get<PendingUploadRecord>(fileRequestKey(id)),
  ]);
  const at = now();
  const live = [pending, request].find(
    (record) => record?.scope === scope && typeof record.expiresAt === "number" && record.expiresAt > at,
  );
  const expires_at =
    live && typeof live.expiresAt === "number" ? new Date(live.expiresAt).toISOString() : undefined;
  if (progress && progress.scope === scope && typeof progress.offset === "number") {
    return {
      status: "receiving",
      handle,
      received: progress.offset,
      ...(typeof progress.length === "number" ? { length: progress.length } : {}),
      ...(expires_at === undefined ? {} : { expires_at }),
    };
  }
  if (live && expires_at !== undefined) return { status: "pending", handle, expires_at };
  return null;
}

/**
 * `UPLOAD_PENDING` for a handle that does not resolve yet because its upload has not finished; does
 * nothing (the caller answers "not found") for every other handle.
 */
export async function throwIfPending(
  deps: Pick<UploadStatusDeps, "state" | "refs" | "now">,
  handle: string,
  scope: string,
  statusTool: string | undefined,
): Promise<void> {
  const parsed = parseUploadHandle(handle);
  if (!parsed || !deps.refs.matches(parsed.scopeRef, scope)) return;
  const status = await unfinishedStatusOf(deps, handle, parsed.id, scope).catch(() => null);
  if (status === null) return;
  throw pendingError(status, statusTool);
}

function pendingError(status: UploadStatus, statusTool: string | undefined): FileBridgeError {
  const check = statusTool ? `call ${statusTool} with the handle` : "wait a moment";
  if (status.status === "receiving") {
    const of = status.length === undefined ? "" : ` of ${status.length}`;
    return new FileBridgeError(
      "UPLOAD_PENDING",
      `the upload behind ${status.handle} is still arriving (${status.received}${of} bytes received so far)`,
      {
        data: {
          handle: status.handle,
          status: "receiving",
          received: status.received,
          length: status.length,
        },
        hint: `Wait until it finishes (${check} to see how far it got), then call this tool again with the same handle.`,
      },
    );
  }
  const expires = status.status === "pending" ? status.expires_at : undefined;
  return new FileBridgeError(
    "UPLOAD_PENDING",
    `the person has not uploaded the file for ${"handle" in status ? status.handle : "this handle"} yet` +
      (expires ? ` (the upload link stays open until ${expires})` : ""),
    {
      data: {
        handle: "handle" in status ? status.handle : undefined,
        status: "pending",
        expires_at: expires,
      },
      hint: `Ask the person to upload it at the link you gave them, or ${check} to see whether it arrived; then call this tool again with the same handle.`,
    },
  );
}

/** The tool result of a status: the text for the model and the status as `structuredContent`. */
export function uploadStatusResult(status: UploadStatus): {
  content: Array<{ type: "text"; text: string }>;
  structuredContent: Record<string, unknown>;
} {
  return {
    content: [{ type: "text", text: statusText(status) }],
    structuredContent: status as unknown as Record<string, unknown>,
  };
}

function statusText(status: UploadStatus): string {
  switch (status.status) {
    case "pending":
      return `Not uploaded yet: the person has not started the upload. The link stays open until ${status.expires_at}; ask them to upload the file, then check again.`;
    case "receiving":
      return `Uploading: ${status.received}${status.length === undefined ? "" : ` of ${status.length}`} bytes received so far. Check again in a moment.`;
    case "ready":
      return [
        `Uploaded: pass ${status.handle} as the file argument of a tool. Files:`,
        ...status.files.map(
          (file) => `- ${file.name} (${file.size} bytes, ${file.mimeType}): ${file.handle}`,
        ),
      ].join("\n");
    default:
      return "Unknown upload handle: it expired, was never issued, or belongs to another session. Ask for a new upload URL.";
  }
}
