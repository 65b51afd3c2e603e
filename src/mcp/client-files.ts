/**
 * What a client declared about the MCP files extension, in each of its three live spellings, read
 * from client capabilities (the `initialize` ones, or the 2026-07-28 per-request `_meta`). Pure data
 * reading: the port's job (like `clientNameOf`), so every piece and every entry can use it.
 */
import type { HostClientCapabilities } from "./host.js";

/** The extension id (`capabilities.extensions[...]`, server and client side). */
export const FILES_EXTENSION_KEY = "io.modelcontextprotocol/files";

/** Where a 2026-07-28 request carries its client capabilities (`params._meta[...]`). */
export const CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities";

/**
 * Which spelling of the files extension a client speaks:
 *
 * - `"draft"`: SEP-2631's text, `capabilities.files: { upload: true, download: true }` (booleans);
 *   the server answers `files/authorizeUpload` / `files/authorizeDownload`.
 * - `"variant"`: the older names the draft's revisions and the Codex CLI variant used
 *   (`inputTransfer` / `input` / `output`); the server answers `files/prepareUpload` /
 *   `completeUpload` / `getDownload` (and the draft's methods).
 * - `"upload_required"`: the revision Claude Code ships, `extensions["io.modelcontextprotocol/files"]:
 *   { upload: {}, download?: {} }` (objects) in a 2026-07-28 request's `_meta`; the server answers a
 *   `tools/call` that carries file descriptors with `resultType: "upload_required"`, and offers
 *   outputs in `_meta["io.modelcontextprotocol/files"].downloads`.
 *
 * @example
 * ```ts
 * const spelling: FilesSpelling = clientFilesCapability(ctx.clientCapabilities)?.spelling ?? "draft";
 * ```
 */
export type FilesSpelling = "draft" | "variant" | "upload_required";

/**
 * What a client declared it can do with the files extension, and in which spelling.
 *
 * @example
 * ```ts
 * const files = clientFilesCapability(ctx.clientCapabilities); // { upload: true, download: true, spelling: "draft" }
 * ```
 */
export interface ClientFilesCapability {
  upload: boolean;
  download: boolean;
  spelling: FilesSpelling;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function flag(record: Record<string, unknown>, ...names: string[]): boolean | undefined {
  for (const name of names) {
    const value = record[name];
    if (typeof value === "boolean") return value;
    if (isRecord(value)) return true;
  }
  return undefined;
}

/**
 * The client's files capability, or `undefined` when it declared none. Read from
 * `capabilities.files` (the draft) or `capabilities.extensions["io.modelcontextprotocol/files"]`,
 * in every spelling: `upload`/`download` as booleans (the draft), `inputTransfer`/`input`/`output`
 * (the variant's and the draft's earlier names), or `upload`/`download` as **objects** under
 * `extensions` with no `revision` (the revision Claude Code ships, `spelling: "upload_required"`).
 * A declared object with no flags means both (draft spelling).
 *
 * @example
 * ```ts
 * clientFilesCapability({ extensions: { "io.modelcontextprotocol/files": { upload: {} } } });
 * // { upload: true, download: false, spelling: "upload_required" }
 * clientFilesCapability({ files: { upload: true, download: true } });
 * // { upload: true, download: true, spelling: "draft" }
 * ```
 */
export function clientFilesCapability(
  capabilities: HostClientCapabilities | undefined,
): ClientFilesCapability | undefined {
  const extensions = isRecord(capabilities?.extensions) ? capabilities.extensions : undefined;
  const entry = extensions?.[FILES_EXTENSION_KEY];
  const files = capabilities?.files;
  if (
    isRecord(entry) &&
    !isRecord(files) &&
    (entry.revision === undefined || entry.revision === null) &&
    (isRecord(entry.upload) || isRecord(entry.download))
  ) {
    return {
      upload: isRecord(entry.upload),
      download: isRecord(entry.download),
      spelling: "upload_required",
    };
  }
  const declared = isRecord(files) ? files : entry;
  if (!isRecord(declared)) return undefined;
  const upload = flag(declared, "upload", "inputTransfer", "input");
  const download = flag(declared, "download", "output");
  const variant = ["inputTransfer", "input", "output"].some((name) => name in declared);
  const spelling: FilesSpelling = variant && !("upload" in declared) ? "variant" : "draft";
  if (upload === undefined && download === undefined) return { upload: true, download: true, spelling };
  return { upload: upload ?? false, download: download ?? false, spelling };
}

/**
 * The client capabilities a tool callback's `extra` carries for this request: on 2026-07-28 the
 * request's own `_meta["io.modelcontextprotocol/clientCapabilities"]` (SDK v2 `ctx.mcpReq.envelope`
 * or `ctx.mcpReq._meta`; SDK v1 `extra._meta`). `undefined` when the request carries none (the 2025
 * era declares them at `initialize`: use the host context's `clientCapabilities` there).
 *
 * @example
 * ```ts
 * server.registerTool("report", {}, async (ctx) => {
 *   const files = clientFilesCapability(requestClientCapabilities(ctx));
 *   // …
 * });
 * ```
 */
export function requestClientCapabilities(extra: unknown): HostClientCapabilities | undefined {
  if (!isRecord(extra)) return undefined;
  const mcpReq = isRecord(extra.mcpReq) ? extra.mcpReq : undefined;
  for (const holder of [mcpReq?.envelope, mcpReq?._meta, extra._meta]) {
    const declared = isRecord(holder) ? holder[CLIENT_CAPABILITIES_META_KEY] : undefined;
    if (isRecord(declared)) return declared as HostClientCapabilities;
  }
  return undefined;
}

/**
 * The `requestState` a 2026-07-28 retry carries (`params.requestState`), from a tool callback's
 * `extra` (SDK v2 `ctx.mcpReq.requestState()`); `undefined` on a first call and on SDK v1.
 *
 * @example
 * ```ts
 * const state = requestStateOf(ctx); // "…" on the client's retry of an upload_required call
 * ```
 */
export function requestStateOf(extra: unknown): string | undefined {
  if (!isRecord(extra)) return undefined;
  const mcpReq = isRecord(extra.mcpReq) ? extra.mcpReq : undefined;
  const read = mcpReq?.requestState;
  const value = typeof read === "function" ? (read as () => unknown).call(mcpReq) : read;
  return typeof value === "string" ? value : undefined;
}
