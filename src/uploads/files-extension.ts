/**
 * The MCP files extension served from the upload tickets, upload handles and signed downloads this
 * package already has: `files/authorizeUpload` and `files/authorizeDownload` (SEP-2631, a draft),
 * and the Codex CLI variant's `files/prepareUpload` / `files/completeUpload` / `files/getDownload`,
 * mounted as custom request handlers through the host port, advertised under
 * `capabilities.extensions["io.modelcontextprotocol/files"]`. See docs/files-extension.md.
 *
 * The file URI is the upload's `upload://` handle: opaque (it carries the scope's reference, never
 * the scope), bound to the scope that authorized it (another scope's URI resolves exactly like an
 * unknown one), immutable (the ticket is single-use and takes one file, so the handle stands for one
 * byte sequence), and it already resolves through `FileBridge` — no new resolver, no new scope rule.
 */
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { type Duration, durationToMs } from "../internal/duration.js";
import { firstUse } from "../internal/first-use.js";
import {
  HOST_FILES_METHODS,
  type HostFilesParams,
  type HostRequestContext,
  type McpHost,
} from "../mcp/host.js";
import type { ScopeFunction } from "../scope/scope.js";
import type { ScopeRefs } from "../scope/scope-refs.js";
import type { UrlSigner } from "../signing/types.js";
import type { StoredFile } from "../storage/types.js";
import type { DirectUploadResult, DirectUploadStrategy } from "./direct-upload.js";
import { FILES_EXTENSION_ID, type FileTransferDescriptor, type FileValue } from "./files-wire.js";
import { toolsForClient } from "./listed-marks.js";
import type { FilesExtensionOptions } from "./types.js";

export type { FilesExtensionOptions } from "./types.js";

/** What the extension borrows from its `UploadHandleResolver`. */
export interface FilesExtensionDeps {
  minter: Pick<UrlSigner, "mint" | "downloadUrl" | "scopeRefs">;
  scope: ScopeFunction;
  maxBytes: number;
  ticketTtl: Duration;
  handleTtlSeconds: number;
  filesFor(handle: string, options: { scope: string }): Promise<StoredFile[] | null>;
  /** How scopes become references in handles: the minter's (`minter.scopeRefs`). */
  refs: ScopeRefs;
  /** The direct-to-storage descriptor strategy, when `direct` is on. */
  direct?: DirectUploadStrategy | undefined;
  /** Asks the resolver's rate limit before a ticket is minted; throws `RATE_LIMITED` when refused. */
  allowTicket?: (scope: string, method: string) => Promise<void>;
}

function invalidOption(name: string, message: string): FileBridgeError {
  return new FileBridgeError("INVALID_OPTION", `files extension: ${name} ${message}`, {
    data: { option: name },
  });
}

/** The checked options, with defaults. */
export type FilesExtensionSettings = ReturnType<typeof settingsOf>;

/** The request bodies, loaded at the first `files/*` request (issue 39). */
const loadCalls = firstUse(() => import("./files-extension-calls.js"));

/** The checked options, with defaults. */
function settingsOf(options: FilesExtensionOptions, maxBytes: number) {
  if (typeof options !== "object" || options === null) throw invalidOption("options", "must be an object");
  const {
    accept,
    maxSize = maxBytes,
    uploadMethod = "PUT",
    variant = true,
    downloadTtl,
    direct,
    tus = true,
  } = options;
  if (accept !== undefined && (!Array.isArray(accept) || accept.some((each) => typeof each !== "string"))) {
    throw invalidOption("accept", "must be a list of media types");
  }
  if (!Number.isSafeInteger(maxSize) || maxSize <= 0 || maxSize > maxBytes) {
    throw invalidOption("maxSize", `must be a positive integer up to the resolver's maxBytes (${maxBytes})`);
  }
  if (uploadMethod !== "PUT" && uploadMethod !== "POST")
    throw invalidOption("uploadMethod", 'must be "PUT" or "POST"');
  if (typeof variant !== "boolean") throw invalidOption("variant", "must be a boolean");
  if (typeof tus !== "boolean") throw invalidOption("tus", "must be a boolean");
  if (
    direct !== undefined &&
    typeof direct !== "boolean" &&
    (typeof direct !== "object" || direct === null)
  ) {
    throw invalidOption("direct", "must be a boolean or an object");
  }
  if (direct && uploadMethod === "POST") {
    throw invalidOption("direct", 'hands out presigned POST forms: it cannot go with uploadMethod "POST"');
  }
  if (downloadTtl !== undefined) durationToMs(downloadTtl, "files extension: downloadTtl");
  return { accept, maxSize, uploadMethod, variant, downloadTtl, tus };
}

/**
 * The files extension on one `UploadHandleResolver`. Built by `uploads.attach(server, { files })`;
 * `mount` puts its handlers on a host.
 *
 * @example
 * ```ts
 * uploads.attach(server, { files: true }); // get_upload_url, plus files/* for clients that speak it
 * ```
 */
export class FilesExtension {
  readonly #deps: FilesExtensionDeps;
  readonly #settings: ReturnType<typeof settingsOf>;

  constructor(deps: FilesExtensionDeps, options: FilesExtensionOptions = {}) {
    if (typeof deps.minter.downloadUrl !== "function") {
      throw invalidOption("minter", "needs a minter with downloadUrl (a SignedUrlMinter) to serve downloads");
    }
    this.#deps = deps;
    this.#settings = settingsOf(options, deps.maxBytes);
  }

  /**
   * Declares the extension and mounts its handlers; throws `INVALID_INPUT` when one of the methods
   * is already handled on this host.
   */
  mount(host: McpHost): void {
    const { variant, maxSize, accept } = this.#settings;
    const methods = HOST_FILES_METHODS.filter(
      (method) => variant || method === "files/authorizeUpload" || method === "files/authorizeDownload",
    );
    const taken = methods.find((method) => !host.canHandle(method));
    if (taken)
      throw new FileBridgeError(
        "INVALID_INPUT",
        `files extension: ${taken} is already handled on this server`,
      );
    host.declareCapabilities({
      extensions: {
        [FILES_EXTENSION_ID]: {
          // The revision Claude Code ships sends files only to an entry with an `upload` object and
          // no `revision`; `download` says outputs carry download offers. The draft's and the
          // variant's probes read the method flags below; none of them minds the other members.
          upload: {},
          download: {},
          authorizeUpload: true,
          authorizeDownload: true,
          prepareUpload: variant,
          completeUpload: variant,
          getDownload: variant,
          transports: ["https"],
          maxSize,
          ...(accept === undefined ? {} : { accept: [...accept] }),
        },
      },
    });
    const upload = (params: HostFilesParams, ctx: HostRequestContext) => this.#authorizeUpload(params, ctx);
    const download = (params: HostFilesParams, ctx: HostRequestContext) =>
      this.#authorizeDownload(params, ctx);
    // The revision Claude Code ships is shown the default fileInput()'s marks on the descriptor only.
    host.rewriteListedTools?.((tools, ctx) => toolsForClient(tools, ctx.clientCapabilities));
    host.handle("files/authorizeUpload", upload);
    host.handle("files/authorizeDownload", download);
    if (!variant) return;
    host.handle("files/prepareUpload", async (params, ctx) => {
      const result = await this.#authorizeUpload(params, ctx, "files/prepareUpload");
      return "upload" in result ? { file: result.file, transfer: result.upload } : result;
    });
    host.handle("files/completeUpload", async (params, ctx) => ({
      file: await this.#committed(params, ctx),
    }));
    host.handle("files/getDownload", async (params, ctx) => {
      const { file, download: transfer } = await this.#authorizeDownload(params, ctx);
      return { file, transfer };
    });
  }

  async #authorizeUpload(
    params: HostFilesParams,
    ctx: HostRequestContext,
    method?: string,
  ): Promise<{ file: FileValue; upload: FileTransferDescriptor } | DirectUploadResult> {
    return (await loadCalls()).authorizeUpload(this.#deps, this.#settings, params, ctx, method);
  }

  async #committed(params: HostFilesParams, ctx: HostRequestContext): Promise<FileValue> {
    return (await loadCalls()).committed(this.#deps, params, ctx);
  }

  async #authorizeDownload(
    params: HostFilesParams,
    ctx: HostRequestContext,
  ): Promise<{ file: FileValue; download: FileTransferDescriptor }> {
    return (await loadCalls()).authorizeDownload(this.#deps, this.#settings, params, ctx);
  }
}
