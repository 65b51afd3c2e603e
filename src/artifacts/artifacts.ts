import { lstat, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { decodeBase64Strict } from "../bridge/sources/base64.js";
import { FileBridgeError, isFileBridgeError, toToolErrorResult } from "../errors/file-bridge-error.js";
import {
  type CheckedImageOptions,
  checkImageOptions,
  type ImageBudget,
  imageBudgetFor,
} from "../images/image-options.js";
import type { ImageMode } from "../images/stored-image.js";
import { withoutHiddenStructured } from "../images/structured-images.js";
import { defaultTmpDir } from "../internal/default-tmp-dir.js";
import { type Duration, durationToMs } from "../internal/duration.js";
import { sanitizeFileName } from "../internal/file-name.js";
import { DEFAULT_ARTIFACT_MAX_BYTES } from "../internal/limits.js";
import { optionCheck } from "../internal/options.js";
import { type OpenedFile, openContainedFile } from "../internal/safe-open.js";
import { createCallDir, removeDir } from "../internal/temp-dir.js";
import { downloadOffer, wantsDownloadOffers, withDownloadOffers } from "../links/download-offer.js";
import { fileLinkContent, fileOutputOf, fileValueOutput } from "../links/file-link.js";
import { withFileOutputs } from "../links/with-file-outputs.js";
import { requestClientCapabilities } from "../mcp/client-files.js";
import type { HostClientCapabilities } from "../mcp/host.js";
import { scopeSourceOf } from "../mcp/scope-source.js";
import { calledTool } from "../mcp/tool-call-schemas.js";
import type { CallToolResult } from "../mcp/types.js";
import { assertScope, defaultScope, type ScopeFunction, type ScopeSource } from "../scope/scope.js";
import { type ScopeRefs, scopeRefsOf, UNKEYED_SCOPE_REFS } from "../scope/scope-refs.js";
import type { UrlSigner } from "../signing/types.js";
import type { FileStore, PutOptions, PutSource, StoredFile } from "../storage/types.js";
import { type FitCapture, fitResult } from "./fit-result.js";
import { fitImageShaper, type ImageCaptureDeps, withShapedImage } from "./image-capture.js";
import { checkInlineBudget, type InlineBudgetOptions, inlineBudgetFor } from "./inline-budget.js";
import type {
  ArtifactRegistry,
  ArtifactsOptions,
  CapturedArtifact,
  CaptureInput,
  EmbeddedResourceContents,
  FitOptions,
  ImageArtifact,
  ImageInput,
  WithArtifactsOptions,
} from "./types.js";

const ARG_NAME = /^[A-Za-z_$][A-Za-z0-9_$-]{0,63}$/;

const check = optionCheck("Artifacts");

/**
 * `artifact://sessions/{scopeRef}/{id}/{filename}`, each part percent-encoded: the URI of an
 * artifact when no registry names it. The scope appears only as its opaque reference
 * (`scopeRef(file.scope)`), never as itself: a scope is often a session id, a bearer value.
 *
 * @example
 * ```ts
 * defaultArtifactUri({ scope: "s 1", id: "01jc…", name: "a b.png" }); // artifact://sessions/q3X0…/01jc…/a%20b.png
 * ```
 */
export function defaultArtifactUri(
  file: Pick<StoredFile, "scope" | "id" | "name">,
  refs: ScopeRefs = UNKEYED_SCOPE_REFS,
): string {
  return `artifact://sessions/${refs.of(file.scope)}/${encodeURIComponent(file.id)}/${encodeURIComponent(
    file.name,
  )}`;
}

/** True when the real path `child` is `parent` or inside it (both absolute and symlink-free). */
function isInside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel !== "" && !isAbsolute(rel) && rel !== ".." && !rel.startsWith(`..${sep}`);
}

function resourceName(uri: string): string | undefined {
  const path = uri.replace(/[?#].*$/, "");
  const last = path.slice(path.lastIndexOf("/") + 1);
  try {
    return last ? decodeURIComponent(last) : undefined;
  } catch {
    return last || undefined;
  }
}

/**
 * Tool outputs as stored files. `capture()` stores what a tool produced (a file it wrote, bytes,
 * or an embedded resource) as a file of kind `"artifact"` with its own TTL, and returns the
 * `artifact://…` URI, the link blocks to append to the tool result (a `resource_link` plus a text
 * block with the URI and a signed download URL, since many clients drop `resource_link`) and
 * `_meta` with `artifact_uri` and `download_url`. `withArtifacts()` does it around a handler.
 *
 * @example
 * ```ts
 * const artifacts = new Artifacts({ store, minter, registry, ttl: "24h" });
 * server.registerTool("render", { inputSchema: { text: z.string() } }, async ({ text }, extra) => {
 *   const captured = await artifacts.capture({ scope: defaultScope(extra), bytes: render(text), name: "out.png" });
 *   return { content: [{ type: "text", text: "Rendered." }, ...captured.content], _meta: captured._meta };
 * });
 * ```
 */
export class Artifacts {
  readonly #store: FileStore;
  readonly #minter: Pick<UrlSigner, "downloadUrl" | "scopeRefs"> | undefined;
  readonly #registry: ArtifactRegistry | undefined;
  readonly #ttlSeconds: number;
  readonly #downloadTtl: Duration | undefined;
  readonly #downloadClaims: ArtifactsOptions["downloadClaims"];
  readonly #maxBytes: number;
  readonly #scope: ScopeFunction;
  readonly #tmpDirOption: string | undefined;
  /** The temp folder, worked out on first use (a runtime without a disk never asks for it). */
  get #tmpDir(): string {
    return this.#tmpDirOption ?? defaultTmpDir();
  }
  readonly #inlineBudget: InlineBudgetOptions;
  readonly #images: CheckedImageOptions;
  readonly #imageMode: ImageMode;

  constructor(options: ArtifactsOptions) {
    if (typeof options !== "object" || options === null) throw check.error("options", "must be an object");
    const { store, minter, registry } = options;
    if (!store || typeof store.put !== "function") throw check.error("store", "must be a FileStore");
    if (minter !== undefined && typeof minter?.downloadUrl !== "function") {
      throw check.error("minter", "must be a SignedUrlMinter");
    }
    if (
      registry !== undefined &&
      (typeof registry?.add !== "function" || typeof registry.uriFor !== "function")
    ) {
      throw check.error("registry", "must be a ResourceRegistry");
    }
    const ttlMs = durationToMs(options.ttl ?? "24h", "Artifacts: ttl");
    if (ttlMs < 1000) throw check.error("ttl", "must be at least 1s");
    if (options.downloadTtl !== undefined) durationToMs(options.downloadTtl, "Artifacts: downloadTtl");
    const maxBytes = options.maxBytes ?? DEFAULT_ARTIFACT_MAX_BYTES;
    if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0)
      throw check.error("maxBytes", "must be a positive integer");
    if (options.scope !== undefined && typeof options.scope !== "function") {
      throw check.error("scope", "must be a function");
    }
    if (options.downloadClaims !== undefined && typeof options.downloadClaims !== "function") {
      throw check.error("downloadClaims", "must be a function");
    }
    if (options.tmpDir !== undefined && (typeof options.tmpDir !== "string" || options.tmpDir.length === 0)) {
      throw check.error("tmpDir", "must be a non-empty path");
    }
    this.#store = store;
    this.#minter = minter;
    this.#registry = registry;
    this.#ttlSeconds = ttlMs / 1000;
    this.#downloadTtl = options.downloadTtl;
    this.#downloadClaims = options.downloadClaims;
    this.#maxBytes = maxBytes;
    this.#scope = options.scope ?? defaultScope;
    this.#tmpDirOption = options.tmpDir;
    this.#inlineBudget = checkInlineBudget(options.inlineBudget);
    this.#images = checkImageOptions(options.images, "Artifacts");
    // Asked for explicitly: `sharp` is required. Left unset: shaping when `sharp` loads.
    this.#imageMode = options.images === undefined ? "auto" : "on";
  }

  /** What image shaping needs of this instance. */
  #imageDeps(): ImageCaptureDeps {
    return {
      store: this.#store,
      images: this.#images,
      mode: this.#imageMode,
      tmpDir: this.#tmpDir,
      remove: (file) => this.#remove(file),
    };
  }

  /** Deletes a stored file, through the registry when there is one. */
  async #remove(file: StoredFile): Promise<void> {
    await (this.#registry?.remove
      ? this.#registry.remove(file.scope, file.id)
      : this.#store.delete(file.scope, file.id));
  }

  /**
   * The image budget of `client` (its media budget bounds the bytes), with a call's own over it;
   * `false` when shaping is off.
   */
  #imageBudget(
    client: string | undefined,
    own: Partial<ImageBudget> | false | undefined,
  ): ImageBudget | false {
    if (this.#images === false || own === false) return false;
    if (own !== undefined) checkImageOptions({ maxEdge: own.maxEdge, maxBytes: own.maxBytes }, "Artifacts");
    const base = imageBudgetFor(client, this.#images, inlineBudgetFor(client, this.#inlineBudget).media);
    return { ...base, maxEdge: own?.maxEdge ?? base.maxEdge, maxBytes: own?.maxBytes ?? base.maxBytes };
  }

  /**
   * Keeps a tool result inside the inline budget of the client that called: text past the budget,
   * images and audio past the media budget, and every embedded blob that is not an image or audio
   * are stored as artifacts and replaced by a short preview plus their link blocks (URI and download
   * URL in the text); the stored files are added to `structuredContent.files` when the result has
   * `structuredContent` (spread `fileOutputFields` into the tool's `outputSchema`).
   *
   * @example
   * ```ts
   * const html = await render(doc);
   * return artifacts.fit({ content: [{ type: "text", text: html }] }, { scope, client: clientNameOf(server), name: "doc.html" });
   * ```
   */
  async fit(result: CallToolResult, options: FitOptions): Promise<CallToolResult> {
    if (typeof options !== "object" || options === null) {
      throw new FileBridgeError("INVALID_INPUT", "fit() needs { scope }");
    }
    assertScope(options.scope);
    const base = inlineBudgetFor(options.client, this.#inlineBudget);
    const own = checkInlineBudget(options.budget);
    const budget = inlineBudgetFor(undefined, {
      text: own.text ?? base.text,
      media: own.media ?? base.media,
    });
    const name = sanitizeFileName(options.name ?? "output.txt", "output.txt");
    const stored: StoredFile[] = [];
    const capture = async (what: FitCapture) => {
      const captured = await this.#capture(
        {
          scope: options.scope,
          ...what,
          ...(options.signal === undefined ? {} : { signal: options.signal }),
          ...(options.extra === undefined ? {} : { extra: options.extra }),
        },
        undefined,
      );
      stored.push(captured.file);
      return captured;
    };
    const images = this.#imageBudget(options.client, options.images);
    const shaper = fitImageShaper(this.#imageDeps(), images, this.#maxBytes, capture);
    try {
      const fitted = await fitResult(result, budget, name, capture, shaper);
      const declared = options.outputSchema === true || calledTool(options.extra)?.hasOutputSchema === true;
      return withoutHiddenStructured(fitted, images, declared);
    } catch (error) {
      // A block that cannot be stored or shaped fails the call: what this call stored goes too.
      await Promise.all(stored.map((file) => this.#remove(file).catch(() => undefined)));
      throw error;
    }
  }

  /**
   * Stores an image output and returns it the way the caller's model can see it: a copy shaped to
   * the client's image budget (long edge, bytes, format; EXIF orientation applied; metadata such as
   * GPS stripped; never enlarged) as an image block, then the full-resolution original's link blocks
   * (`resource_link`, and text with the URI, the download URL and what was shown), its structured
   * form and `_meta` as {@link Artifacts.capture} returns them. Needs the optional peer `sharp`.
   * Errors: `capture()`'s, `UNSUPPORTED_MEDIA_TYPE` (`data.reason: "undecodable"`), `FILE_TOO_LARGE`
   * (`data.reason: "pixels"`, a decompression bomb), `INVALID_OPTION` (no `sharp`); nothing is
   * stored on failure.
   *
   * @example
   * ```ts
   * const shot = await artifacts.image({ scope, path: "/tmp/out/page.png", client: clientNameOf(server) });
   * return withFileOutputs({ content: [{ type: "text", text: "Screenshot taken." }] }, shot);
   * ```
   */
  async image(input: ImageInput): Promise<ImageArtifact> {
    const captured = await this.capture(input);
    const budget = this.#imageBudget(input.client, input.budget);
    if (budget === false) return { ...captured, content: [...captured.content] };
    return withShapedImage(captured, this.#imageDeps(), budget, "on");
  }

  /**
   * Stores a tool output as an artifact and returns its URI, link blocks and `_meta`. Errors:
   * `INVALID_INPUT` (not exactly one source, bad resource, a path that is not a file),
   * `INVALID_BASE64`, `FILE_TOO_LARGE`, `ABORTED`, `STORAGE_ERROR`; nothing is stored on failure.
   *
   * @example
   * ```ts
   * const { uri, content, _meta } = await artifacts.capture({ scope, path: "/tmp/out/report.pdf" });
   * ```
   */
  async capture(input: CaptureInput): Promise<CapturedArtifact> {
    if (typeof input !== "object" || input === null) {
      throw new FileBridgeError("INVALID_INPUT", "capture() needs { scope, path | bytes | resource }");
    }
    assertScope(input.scope);
    const given = [input.path, input.bytes, input.resource].filter((value) => value !== undefined).length;
    if (given !== 1) {
      throw new FileBridgeError("INVALID_INPUT", "capture() needs exactly one of path, bytes or resource");
    }
    return this.#capture(input, undefined);
  }

  /**
   * Opens a file a tool wrote, once, through the descriptor rules of `openContainedFile`: a regular
   * file whose real path is inside `root` (already a real path). Missing → `INVALID_INPUT`.
   */
  async #openOutput(path: string, root: string): Promise<OpenedFile> {
    let opened: OpenedFile;
    try {
      opened = await openContainedFile(path, (real) => isInside(real, root));
    } catch (error) {
      if (isFileBridgeError(error) && error.code === "NOT_FOUND") {
        throw new FileBridgeError("INVALID_INPUT", "path is not a readable file");
      }
      throw error;
    }
    if (opened.size > this.#maxBytes) {
      await opened.handle.close().catch(() => undefined);
      throw new FileBridgeError("FILE_TOO_LARGE", `the artifact exceeds ${this.#maxBytes} bytes`, {
        data: { limit: this.#maxBytes },
      });
    }
    return opened;
  }

  /** A signed download URL for a captured file, when a minter is configured; a failure removes the file. */
  async #downloadFor(
    file: StoredFile,
    input: CaptureInput,
  ): Promise<{ url: string; expiresAt: number } | undefined> {
    if (!this.#minter) return undefined;
    try {
      const claims = await this.#downloadClaims?.(file, input.extra);
      return await this.#minter.downloadUrl(file, {
        ...(this.#downloadTtl === undefined ? {} : { ttl: this.#downloadTtl }),
        ...(claims === undefined ? {} : { claims }),
      });
    } catch (error) {
      // A capture that fails leaves nothing stored.
      await (this.#registry?.remove
        ? this.#registry.remove(file.scope, file.id)
        : this.#store.delete(file.scope, file.id)
      ).catch(() => undefined);
      throw error;
    }
  }

  /**
   * Where a capture's bytes come from, with the name and media type they suggest: a file opened once
   * inside its root (the caller closes `opened`), bytes, or an embedded resource's text or blob.
   */
  async #sourceOf(
    input: CaptureInput,
    outputRoot: string | undefined,
  ): Promise<{ source: PutSource; name?: string; mimeType?: string; opened?: OpenedFile }> {
    if (input.path !== undefined) {
      if (typeof input.path !== "string" || input.path.length === 0 || input.path.includes("\0")) {
        throw new FileBridgeError("INVALID_INPUT", "path must be a non-empty string");
      }
      if (input.root !== undefined && (typeof input.root !== "string" || input.root.length === 0)) {
        throw new FileBridgeError("INVALID_INPUT", "root must be a non-empty path");
      }
      const root =
        outputRoot ?? (await realpath(input.root ?? dirname(resolve(input.path))).catch(() => null));
      if (root === null) throw new FileBridgeError("INVALID_INPUT", "path is not a readable file");
      // From here the bytes come from this descriptor only, never from the path again.
      const opened = await this.#openOutput(input.path, root);
      const source = opened.handle.createReadStream({ autoClose: false, start: 0 });
      return { source, name: input.name ?? basename(input.path), mimeType: input.mimeType, opened };
    }
    if (input.bytes !== undefined) {
      if (!(input.bytes instanceof Uint8Array))
        throw new FileBridgeError("INVALID_INPUT", "bytes must be a Uint8Array");
      return { source: input.bytes, name: input.name, mimeType: input.mimeType };
    }
    const raw = input.resource as unknown as Record<string, unknown> | null;
    const inner = raw !== null && typeof raw === "object" && raw.type === "resource" ? raw.resource : raw;
    const resource = inner as EmbeddedResourceContents | null;
    if (typeof resource !== "object" || resource === null || typeof resource.uri !== "string") {
      throw new FileBridgeError("INVALID_INPUT", "resource must have a uri and text or blob");
    }
    const { text, blob } = resource as EmbeddedResourceContents;
    let source: PutSource;
    if (typeof text === "string" && blob === undefined) {
      source = Buffer.from(text, "utf8");
    } else if (typeof blob === "string" && text === undefined) {
      source = decodeBase64Strict(blob, this.#maxBytes);
    } else {
      throw new FileBridgeError("INVALID_INPUT", "resource must have exactly one of text or blob");
    }
    return {
      source,
      name: input.name ?? resourceName(resource.uri),
      mimeType: input.mimeType ?? (resource as EmbeddedResourceContents).mimeType,
    };
  }

  /** `capture()` once the input is checked; `outputRoot` (a real path) overrides `input.root`. */
  async #capture(input: CaptureInput, outputRoot: string | undefined): Promise<CapturedArtifact> {
    const { source, name, mimeType, opened } = await this.#sourceOf(input, outputRoot);
    let file: StoredFile;
    try {
      const putOptions: PutOptions = {
        scope: input.scope,
        name: sanitizeFileName(name, "artifact"),
        kind: "artifact",
        ttl: this.#ttlSeconds,
        maxBytes: this.#maxBytes,
      };
      if (mimeType !== undefined) putOptions.mimeType = mimeType;
      if (input.metadata !== undefined) putOptions.metadata = input.metadata;
      if (input.signal !== undefined) putOptions.signal = input.signal;
      file = this.#registry
        ? await this.#registry.add(source, putOptions)
        : await this.#store.put(source, putOptions);
    } finally {
      await opened?.handle.close().catch(() => undefined);
    }
    const uri = this.#registry
      ? this.#registry.uriFor(file)
      : defaultArtifactUri(file, scopeRefsOf(this.#minter));
    const download = await this.#downloadFor(file, input);

    const notes =
      file.expiresAt === undefined ? [] : [`Kept until ${new Date(file.expiresAt).toISOString()}.`];
    const content = fileLinkContent(file, uri, { noun: "Artifact", notes, download });
    const meta: CapturedArtifact["_meta"] = { artifact_uri: uri };
    if (download) {
      meta.download_url = download.url;
      meta.download_url_expires_at = new Date(download.expiresAt).toISOString();
    }
    const structured = fileOutputOf(file, uri, download);
    const value = fileValueOutput(file, input.clientCapabilities, scopeRefsOf(this.#minter));
    if (download && wantsDownloadOffers(input.clientCapabilities)) {
      meta["io.modelcontextprotocol/files"] = { downloads: [downloadOffer(file, download)] };
    }
    return {
      file,
      uri,
      content,
      structuredContent: value ? { ...structured, file: value } : structured,
      _meta: meta,
    };
  }

  /**
   * Wraps a tool handler that writes one output file: a fresh temp folder is made per call, the
   * path of the output file inside it is put in `args[outputPathArg]` (a name the caller gave there
   * is kept, sanitized), the handler runs, and what it wrote is captured as an artifact whose link
   * blocks are appended to the result's `content`, whose structured form is appended to
   * `structuredContent.files` when the handler returned `structuredContent` (spread
   * `fileOutputFields` into the tool's `outputSchema`), and whose `artifact_uri` / `download_url` go
   * into `_meta`. The temp folder is removed whether the handler returned or threw. A handler that
   * returns `isError` or writes nothing gets its result back unchanged.
   *
   * @example
   * ```ts
   * server.registerTool(
   *   "render_chart",
   *   { inputSchema: { data: z.string(), output: z.string().optional() } },
   *   artifacts.withArtifacts(async ({ data, output }) => {
   *     await renderChart(data, output); // writes the PNG to the pre-allocated path
   *     return { content: [{ type: "text", text: "Chart rendered." }] };
   *   }, { outputPathArg: "output", outputName: "chart.png" }),
   * );
   * ```
   */
  withArtifacts<Args extends object, Extra>(
    handler: (args: Args, extra: Extra) => CallToolResult | Promise<CallToolResult>,
    options: WithArtifactsOptions,
  ): (args: Args, extra: Extra) => Promise<CallToolResult> {
    if (typeof handler !== "function") throw check.error("handler", "must be a function");
    if (typeof options !== "object" || options === null) throw check.error("options", "must be an object");
    const { outputPathArg } = options;
    if (typeof outputPathArg !== "string" || !ARG_NAME.test(outputPathArg) || outputPathArg === "__proto__") {
      throw check.error("outputPathArg", "must be an argument name");
    }
    check.optionalFunction(options.client, "client");
    check.boolean(options.outputSchema, "outputSchema", false);
    if (options.images !== undefined && options.images !== false) {
      checkImageOptions({ maxEdge: options.images.maxEdge, maxBytes: options.images.maxBytes }, "Artifacts");
    }
    const fallbackName = sanitizeFileName(options.outputName ?? "output", "output");
    return async (args: Args, extra: Extra) => {
      // SDK v2 contexts carry auth in `ctx.http`: normalized so scope functions see the caller.
      const source = scopeSourceOf(extra ?? {}) as ScopeSource & { signal?: unknown };
      let scope: string;
      try {
        scope = this.#scope(source);
        assertScope(scope);
      } catch (error) {
        // No scope (FORBIDDEN over HTTP without a session or user): the handler does not run.
        if (isFileBridgeError(error)) return toToolErrorResult(error);
        throw error;
      }
      const requested = (args as Record<string, unknown> | undefined)?.[outputPathArg];
      const name = typeof requested === "string" ? sanitizeFileName(requested, fallbackName) : fallbackName;
      const dir = await createCallDir(this.#tmpDir);
      try {
        // The folder's real path, taken before the handler runs: a handler (or anyone) that swaps
        // the folder or the output for a symlink afterwards cannot widen what may be read.
        const realDir = await realpath(dir);
        const outputPath = join(dir, name);
        const result = await handler({ ...args, [outputPathArg]: outputPath } as Args, extra);
        if (result?.isError === true) return result;
        const info = await lstat(outputPath).catch(() => null);
        if (!info || info.isDirectory()) return result;
        let captured: CapturedArtifact | ImageArtifact;
        let images: ImageBudget | false = false;
        try {
          const signal = source.signal;
          const stored = await this.#capture(
            {
              scope,
              path: outputPath,
              name,
              ...(options.mimeType !== undefined ? { mimeType: options.mimeType } : {}),
              ...(options.metadata !== undefined ? { metadata: options.metadata } : {}),
              ...(signal instanceof AbortSignal ? { signal } : {}),
              ...(extra !== undefined && extra !== null ? { extra: source } : {}),
              ...clientCapabilitiesOf(extra),
            },
            realDir,
          );
          images = this.#imageBudget(options.client?.(), options.images);
          captured = images === false ? stored : await withShapedImage(stored, this.#imageDeps(), images);
        } catch (error) {
          if (isFileBridgeError(error)) return toToolErrorResult(error);
          throw error;
        }
        const { "io.modelcontextprotocol/files": offered, ...capturedMeta } = captured._meta;
        const meta = { ...(result._meta ?? {}), ...capturedMeta };
        const linked = {
          ...withFileOutputs(result, captured),
          _meta: offered ? withDownloadOffers(meta, offered.downloads) : meta,
        };
        // A tool registered with an `outputSchema` keeps `structuredContent` (the SDK refuses a
        // result without it), whether or not `outputSchema: true` was given (known on an attached server).
        const declared = options.outputSchema === true || calledTool(extra)?.hasOutputSchema === true;
        return withoutHiddenStructured(linked, images, declared);
      } finally {
        await removeDir(dir);
      }
    };
  }
}

/** `{ clientCapabilities }` when the request itself declares them (2026-07-28 `_meta`), else nothing. */
function clientCapabilitiesOf(extra: unknown): { clientCapabilities?: HostClientCapabilities } {
  const declared = requestClientCapabilities(extra);
  return declared === undefined ? {} : { clientCapabilities: declared };
}
