/**
 * The bodies of `UploadHandleResolver`'s async methods once their arguments are checked: minting a
 * ticket (`createTicket`), finding the files a handle stands for (`filesFor`) and asking the rate
 * limit (`assertTicketAllowed`). Loaded on first use through `resolver-later.ts` (issue 39): a
 * server's start does not compile them.
 */
import { FileBridgeError, isFileBridgeError, toToolErrorResult } from "../errors/file-bridge-error.js";
import { formatLimit } from "../internal/byte-size.js";
import { type Duration, durationToMs } from "../internal/duration.js";
import { sanitizeFileName } from "../internal/file-name.js";
import { newId } from "../internal/ids.js";
import { createHash } from "../internal/node-builtins.js";
import type { McpHost } from "../mcp/host.js";
import type { CallToolResult } from "../mcp/types.js";
import type { ScopeSource } from "../scope/scope.js";
import type { ScopeRefs } from "../scope/scope-refs.js";
import type { UrlSigner } from "../signing/types.js";
import type { FileStore, StateStore, StoredFile } from "../storage/types.js";
import type { DirectUploadStrategy } from "./direct-upload.js";
import type { TicketAsk } from "./ticket-ask.js";
import type { UploadTicket, UploadTicketRateLimitInfo } from "./types.js";
import { formatUploadHandle, TICKET_CLAIMS, type TicketRecord, ticketStateKey } from "./upload-handle.js";
import { type PendingUploadRecord, pendingUploadKey } from "./upload-status.js";

const FIELD = "file";

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** What {@link mintTicket} needs of the resolver. */
export interface TicketWork {
  minter: Pick<UrlSigner, "mint">;
  state: StateStore;
  refs: ScopeRefs;
  ttl: Duration;
  singleUse: boolean;
  maxBytes: number;
  handleTtlSeconds: number;
}

/** `createTicket` once its arguments are checked: mints the link, announces the pending handle. */
export async function mintTicket(
  work: TicketWork,
  scope: string,
  asked: { maxFiles: number; claims: Record<string, string | number | boolean> },
  filename: string | undefined,
): Promise<UploadTicket> {
  const ticketId = newId();
  const minted = await work.minter.mint({
    scope,
    fileId: ticketId,
    action: "upload",
    ttl: work.ttl,
    singleUse: work.singleUse,
    claims: {
      [TICKET_CLAIMS.maxBytes]: work.maxBytes,
      [TICKET_CLAIMS.maxFiles]: asked.maxFiles,
      [TICKET_CLAIMS.fileTtl]: work.handleTtlSeconds,
      ...asked.claims,
    },
  });
  // Announced before the upload by design: until it lands, the handle is pending, not unknown.
  const pending: PendingUploadRecord = { scope, expiresAt: minted.expiresAt };
  await work.state.set(pendingUploadKey(ticketId), pending, {
    ttl: Math.ceil(durationToMs(work.ttl, "ttl") / 1000),
  });
  const example = filename ? sanitizeFileName(filename) : "/path/to/file";
  return {
    upload_url: minted.url,
    method: "POST",
    field: FIELD,
    expires_at: new Date(minted.expiresAt).toISOString(),
    max_bytes: work.maxBytes,
    max_files: asked.maxFiles,
    single_use: work.singleUse,
    handle: formatUploadHandle(scope, ticketId, work.refs),
    curl: `curl -sS -F ${shellQuote(`${FIELD}=@${example}`)} ${shellQuote(minted.url)}`,
  };
}

/** What {@link filesOfHandle} needs of the resolver. */
export interface HandleWork {
  store: FileStore;
  state: StateStore;
  direct: DirectUploadStrategy | undefined;
}

/**
 * `filesFor` once the handle parsed and matched the scope: the stored file of a file's handle, or
 * every stored file of an upload's handle (a direct upload commits here on first resolve).
 */
export async function filesOfHandle(
  work: HandleWork,
  id: string,
  scope: string,
): Promise<StoredFile[] | null> {
  const file = await work.store.head(scope, id);
  if (file) return [file];
  const record = await work.state.get<TicketRecord>(ticketStateKey(id));
  if (!record) return (await work.direct?.commitPending(id, scope)) ?? null;
  if (record.scope !== scope || !Array.isArray(record.files)) return null;
  const ids = record.files.filter((fileId): fileId is string => typeof fileId === "string");
  const files = await Promise.all(ids.map((fileId) => work.store.head(scope, fileId)));
  const found = files.filter((stored): stored is StoredFile => stored !== null);
  return found.length > 0 ? found : null;
}

/** `assertTicketAllowed` with a `rateLimit`: `RATE_LIMITED` when refused, the hook's errors mapped. */
export async function askRateLimit(
  rateLimit: (info: UploadTicketRateLimitInfo) => boolean | Promise<boolean>,
  scope: string,
  tool: string,
): Promise<void> {
  let allowed: boolean;
  try {
    allowed = (await rateLimit({ action: "ticket", scope, tool })) === true;
  } catch (error) {
    if (isFileBridgeError(error)) throw error;
    throw new FileBridgeError("STORAGE_ERROR", "the upload rate limit could not be asked", {
      cause: error,
    });
  }
  if (!allowed) throw new FileBridgeError("RATE_LIMITED", "too many upload URLs were asked for");
}

/** Windows whose slot hints an instance keeps at most (older ones are dropped with their window). */
const HINT_LIMIT = 10_000;

/** One `ticketRateLimit`'s checked options and the slot hints of its instance. */
export interface TicketSlots {
  state: StateStore;
  max: number;
  windowMs: number;
  /** Per scope and window: the lowest slot that may still be free, as far as this instance knows. */
  hints: Map<string, number>;
}

/**
 * One ask of a `ticketRateLimit` at `time` (ms): claims the scope's next free slot of that window
 * in the state store (`setIfAbsent`), `false` once all `max` are taken.
 *
 * @example
 * ```ts
 * const allowed = await claimTicketSlot({ state, max: 20, windowMs: 60_000, hints: new Map() }, "alice", Date.now());
 * ```
 */
export async function claimTicketSlot(limit: TicketSlots, scope: string, time: number): Promise<boolean> {
  const { state, max, windowMs, hints } = limit;
  const window = Math.floor(time / windowMs);
  // A hash: the state key neither holds the scope nor grows with it.
  const scopeKey = createHash("sha256").update(scope, "utf8").digest("base64url").slice(0, 22);
  const base = `mcp-file-bridge:ticket-rate:${scopeKey}:${window}`;
  if (hints.size >= HINT_LIMIT) hints.clear();
  const ttl = Math.max(1, Math.ceil(((window + 1) * windowMs - time) / 1000) + 1);
  for (let slot = hints.get(base) ?? 1; slot <= max; slot++) {
    if (await state.setIfAbsent(`${base}:${slot}`, 1, { ttl })) {
      hints.set(base, slot + 1);
      return true;
    }
  }
  hints.set(base, max + 1);
  return false;
}

/** What the upload-URL tool asks of its resolver. */
export interface UploadUrlToolDeps {
  name: string;
  /** The status tool's name, named in the description when it is attached. */
  statusName: string | undefined;
  meta: Record<string, unknown> | undefined;
  scope: (extra: ScopeSource) => string;
  assertTicketAllowed(scope: string, tool: string): Promise<void>;
  createTicket(
    scope: string,
    options: { filename?: string; serverName?: string } & TicketAsk,
  ): Promise<UploadTicket>;
}

/**
 * One call of the upload-URL tool (`upload-url-tool.ts`): asks the rate limit, mints a ticket in
 * the caller's scope asking for `ask` (read from the arguments by the tool, so `zod` stays out of
 * what loads on first use), and answers it, as text and as `structuredContent` (a tool error result
 * for any failure).
 *
 * @example
 * ```ts
 * handler: async (args, { extra }) => answerUploadUrl(host, deps, args, ticketAskOf(args), extra),
 * ```
 */
export async function answerUploadUrl(
  host: McpHost,
  deps: UploadUrlToolDeps,
  args: Record<string, unknown>,
  ask: TicketAsk,
  extra: unknown,
): Promise<CallToolResult> {
  try {
    const scope = deps.scope(extra as ScopeSource);
    await deps.assertTicketAllowed(scope, deps.name);
    const filename = typeof args.filename === "string" ? args.filename : undefined;
    const info = host.serverInfo?.();
    const serverName = info?.title ?? info?.name;
    const ticket = await deps.createTicket(scope, {
      ...(filename ? { filename } : {}),
      ...(serverName === undefined ? {} : { serverName }),
      ...ask,
    });
    return {
      content: [{ type: "text" as const, text: ticketText(ticket) }],
      structuredContent: ticket,
    };
  } catch (error) {
    return toToolErrorResult(error) as CallToolResult;
  }
}

/** The ticket as the model reads it: where to send the bytes, the limits, and what to pass on. */
function ticketText(ticket: UploadTicket): string {
  return [
    `Upload URL (${ticket.method} multipart/form-data, field "${ticket.field}", or PUT the raw bytes ` +
      `with ?filename=…): ${ticket.upload_url}`,
    `Expires at ${ticket.expires_at}; at most ${ticket.max_files} file(s) of ${formatLimit(ticket.max_bytes)} each` +
      (ticket.single_use ? "; works for one successful upload." : "."),
    `Example: ${ticket.curl}`,
    `After the upload, pass ${ticket.handle} as the file argument: it stands for every uploaded file ` +
      "(for an argument that takes one file after several were uploaded, pass one of the files' own handles from the upload's JSON reply).",
  ].join("\n");
}
