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
import { firstUse } from "../internal/first-use.js";
import {
  HOST_FILES_METHODS,
  type HostFilesParams,
  type HostRequestContext,
  type McpHost,
} from "../mcp/host.js";
import type { DirectUploadResult } from "./direct-upload.js";
import { type FilesExtensionDeps, invalidOption, settingsOf } from "./files-extension-settings.js";
import { FILES_EXTENSION_ID, type FileTransferDescriptor, type FileValue } from "./files-wire.js";
import { toolsForClient } from "./listed-marks.js";
import type { FilesExtensionOptions } from "./types.js";

export type { FilesExtensionDeps, FilesExtensionSettings } from "./files-extension-settings.js";
export type { FilesExtensionOptions } from "./types.js";

/** The request bodies, loaded at the first `files/*` request (issue 39). */
const loadCalls = firstUse(() => import("./files-extension-calls.js"));

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
