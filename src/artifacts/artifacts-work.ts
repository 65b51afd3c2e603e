/**
 * What `Artifacts` does once a call's arguments are checked: reading a capture's source (a file
 * opened once inside its root, bytes, an embedded resource), storing it, signing its download URL
 * and shaping its link blocks; fitting a result to a budget; the wrapped handler's temp folder and
 * capture. Loaded on the first `capture`, `fit`, `image` or wrapped call (issue 39: importing the
 * package does not compile it; docs/architecture.md, "loaded on first use"); the class, its option
 * checks and each call's argument checks stay in artifacts.ts (a capture's source: capture-input.ts).
 */
import { lstat, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { decodeBase64Strict } from "../bridge/sources/base64.js";
import { FileBridgeError, isFileBridgeError, toToolErrorResult } from "../errors/file-bridge-error.js";
import type { CheckedImageOptions, ImageBudget } from "../images/image-options.js";
import type { ImageMode } from "../images/stored-image.js";
import { withoutHiddenStructured } from "../images/structured-images.js";
import type { Duration } from "../internal/duration.js";
import { sanitizeFileName } from "../internal/file-name.js";
import { type OpenedFile, openContainedFile } from "../internal/safe-open.js";
import { createCallDir, removeDir } from "../internal/temp-dir.js";
import { downloadOffer, wantsDownloadOffers, withDownloadOffers } from "../links/download-offer.js";
import { fileLinkContent, fileOutputOf, fileValueOutput } from "../links/file-link.js";
import { withFileOutputs } from "../links/with-file-outputs.js";
import { requestClientCapabilities } from "../mcp/client-files.js";
import type { HostClientCapabilities } from "../mcp/host.js";
import { calledTool } from "../mcp/tool-call-schemas.js";
import type { CallToolResult } from "../mcp/types.js";
import type { ScopeSource } from "../scope/scope.js";
import { scopeRefsOf } from "../scope/scope-refs.js";
import type { UrlSigner } from "../signing/types.js";
import type { FileStore, PutOptions, PutSource, StoredFile } from "../storage/types.js";
import { checkCaptureSource } from "./capture-input.js";
import { type FitCapture, fitResult } from "./fit-result.js";
import { fitImageShaper, type ImageCaptureDeps, withShapedImage } from "./image-capture.js";
import type { InlineBudget } from "./inline-budget.js";
import type {
  ArtifactRegistry,
  ArtifactsOptions,
  CapturedArtifact,
  CaptureInput,
  FitOptions,
  ImageArtifact,
  WithArtifactsOptions,
} from "./types.js";

/** What the work needs of one `Artifacts`: its checked options, and what only the class knows. */
export interface ArtifactsDeps {
  store: FileStore;
  minter: Pick<UrlSigner, "downloadUrl" | "scopeRefs"> | undefined;
  registry: ArtifactRegistry | undefined;
  ttlSeconds: number;
  downloadTtl: Duration | undefined;
  downloadClaims: ArtifactsOptions["downloadClaims"];
  maxBytes: number;
  images: CheckedImageOptions;
  imageMode: ImageMode;
  /** The temp folder, worked out when asked (a runtime without a disk never asks). */
  tmpDir(): string;
  /** The URI of a stored artifact when no registry names it (`defaultArtifactUri`). */
  defaultUri(file: StoredFile): string;
  /** The image budget of a client with a call's own over it (checked); `false` when shaping is off. */
  imageBudget(client: string | undefined, own: Partial<ImageBudget> | false | undefined): ImageBudget | false;
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

/** Deletes a stored file, through the registry when there is one. */
async function removeFile(deps: ArtifactsDeps, file: StoredFile): Promise<void> {
  await (deps.registry?.remove
    ? deps.registry.remove(file.scope, file.id)
    : deps.store.delete(file.scope, file.id));
}

/** What image shaping needs of the instance. */
function imageDepsOf(deps: ArtifactsDeps): ImageCaptureDeps {
  return {
    store: deps.store,
    images: deps.images,
    mode: deps.imageMode,
    tmpDir: deps.tmpDir(),
    remove: (file) => removeFile(deps, file),
  };
}

/**
 * Opens a file a tool wrote, once, through the descriptor rules of `openContainedFile`: a regular
 * file whose real path is inside `root` (already a real path). Missing → `INVALID_INPUT`.
 */
async function openOutput(deps: ArtifactsDeps, path: string, root: string): Promise<OpenedFile> {
  let opened: OpenedFile;
  try {
    opened = await openContainedFile(path, (real) => isInside(real, root));
  } catch (error) {
    if (isFileBridgeError(error) && error.code === "NOT_FOUND") {
      throw new FileBridgeError("INVALID_INPUT", "path is not a readable file");
    }
    throw error;
  }
  if (opened.size > deps.maxBytes) {
    await opened.handle.close().catch(() => undefined);
    throw new FileBridgeError("FILE_TOO_LARGE", `the artifact exceeds ${deps.maxBytes} bytes`, {
      data: { limit: deps.maxBytes },
    });
  }
  return opened;
}

/** A signed download URL for a captured file, when a minter is configured; a failure removes the file. */
async function downloadFor(
  deps: ArtifactsDeps,
  file: StoredFile,
  input: CaptureInput,
): Promise<{ url: string; expiresAt: number } | undefined> {
  if (!deps.minter) return undefined;
  try {
    const claims = await deps.downloadClaims?.(file, input.extra);
    return await deps.minter.downloadUrl(file, {
      ...(deps.downloadTtl === undefined ? {} : { ttl: deps.downloadTtl }),
      ...(claims === undefined ? {} : { claims }),
    });
  } catch (error) {
    // A capture that fails leaves nothing stored.
    await removeFile(deps, file).catch(() => undefined);
    throw error;
  }
}

/**
 * Where a capture's bytes come from, with the name and media type they suggest: a file opened once
 * inside its root (the caller closes `opened`), bytes, or an embedded resource's text or blob.
 */
async function sourceOf(
  deps: ArtifactsDeps,
  input: CaptureInput,
  outputRoot: string | undefined,
): Promise<{ source: PutSource; name?: string; mimeType?: string; opened?: OpenedFile }> {
  // Made again here for `fit()`'s captures of a result's blocks (`capture()` made them before the load).
  const resource = checkCaptureSource(input);
  if (input.path !== undefined) {
    const root = outputRoot ?? (await realpath(input.root ?? dirname(resolve(input.path))).catch(() => null));
    if (root === null) throw new FileBridgeError("INVALID_INPUT", "path is not a readable file");
    // From here the bytes come from this descriptor only, never from the path again.
    const opened = await openOutput(deps, input.path, root);
    const source = opened.handle.createReadStream({ autoClose: false, start: 0 });
    return { source, name: input.name ?? basename(input.path), mimeType: input.mimeType, opened };
  }
  if (resource === undefined)
    return { source: input.bytes as Uint8Array, name: input.name, mimeType: input.mimeType };
  const { text, blob } = resource;
  const source =
    typeof text === "string" ? Buffer.from(text, "utf8") : decodeBase64Strict(blob as string, deps.maxBytes);
  return {
    source,
    name: input.name ?? resourceName(resource.uri),
    mimeType: input.mimeType ?? resource.mimeType,
  };
}

/** `capture()` once the input is checked; `outputRoot` (a real path) overrides `input.root`. */
export async function captureArtifact(
  deps: ArtifactsDeps,
  input: CaptureInput,
  outputRoot: string | undefined,
): Promise<CapturedArtifact> {
  const { source, name, mimeType, opened } = await sourceOf(deps, input, outputRoot);
  let file: StoredFile;
  try {
    const putOptions: PutOptions = {
      scope: input.scope,
      name: sanitizeFileName(name, "artifact"),
      kind: "artifact",
      ttl: deps.ttlSeconds,
      maxBytes: deps.maxBytes,
    };
    if (mimeType !== undefined) putOptions.mimeType = mimeType;
    if (input.metadata !== undefined) putOptions.metadata = input.metadata;
    if (input.signal !== undefined) putOptions.signal = input.signal;
    file = deps.registry
      ? await deps.registry.add(source, putOptions)
      : await deps.store.put(source, putOptions);
  } finally {
    await opened?.handle.close().catch(() => undefined);
  }
  const uri = deps.registry ? deps.registry.uriFor(file) : deps.defaultUri(file);
  const download = await downloadFor(deps, file, input);

  const notes = file.expiresAt === undefined ? [] : [`Kept until ${new Date(file.expiresAt).toISOString()}.`];
  const content = fileLinkContent(file, uri, { noun: "Artifact", notes, download });
  const meta: CapturedArtifact["_meta"] = { artifact_uri: uri };
  if (download) {
    meta.download_url = download.url;
    meta.download_url_expires_at = new Date(download.expiresAt).toISOString();
  }
  const structured = fileOutputOf(file, uri, download);
  const value = fileValueOutput(file, input.clientCapabilities, scopeRefsOf(deps.minter));
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
 * `fit()` once its options are checked: `budget` is the call's inline budget, `name` the stored
 * files' base name, `images` the call's image budget.
 */
export async function fitToBudget(
  deps: ArtifactsDeps,
  result: CallToolResult,
  options: FitOptions,
  budget: InlineBudget,
  name: string,
  images: ImageBudget | false,
): Promise<CallToolResult> {
  const stored: StoredFile[] = [];
  const capture = async (what: FitCapture) => {
    const captured = await captureArtifact(
      deps,
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
  const shaper = fitImageShaper(imageDepsOf(deps), images, deps.maxBytes, capture);
  try {
    const fitted = await fitResult(result, budget, name, capture, shaper);
    const declared = options.outputSchema === true || calledTool(options.extra)?.hasOutputSchema === true;
    return withoutHiddenStructured(fitted, images, declared);
  } catch (error) {
    // A block that cannot be stored or shaped fails the call: what this call stored goes too.
    await Promise.all(stored.map((file) => removeFile(deps, file).catch(() => undefined)));
    throw error;
  }
}

/** `image()` once the original is captured: the copy shaped to `budget` ahead of its link blocks. */
export function shapeCaptured(
  deps: ArtifactsDeps,
  captured: CapturedArtifact,
  budget: ImageBudget,
): Promise<ImageArtifact> {
  return withShapedImage(captured, imageDepsOf(deps), budget, "on");
}

/** One call of a handler `withArtifacts` wrapped, once the caller's scope and the output's name are known. */
export interface WrappedCall<Args, Extra> {
  handler: (args: Args, extra: Extra) => CallToolResult | Promise<CallToolResult>;
  options: WithArtifactsOptions;
  /** `options.outputPathArg`, as checked when the handler was wrapped. */
  outputPathArg: string;
  args: Args;
  extra: Extra;
  /** The request context, normalized (`scopeSourceOf`). */
  source: ScopeSource & { signal?: unknown };
  scope: string;
  /** The output file's name (sanitized). */
  name: string;
}

/**
 * The rest of a wrapped call: a fresh temp folder, the handler with the output path in its
 * arguments, the capture of what it wrote, the folder removed whether the handler returned or threw.
 */
export async function runWithArtifacts<Args, Extra>(
  deps: ArtifactsDeps,
  call: WrappedCall<Args, Extra>,
): Promise<CallToolResult> {
  const { handler, options, outputPathArg, args, extra, source, scope, name } = call;
  const dir = await createCallDir(deps.tmpDir());
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
      const stored = await captureArtifact(
        deps,
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
      images = deps.imageBudget(options.client?.(), options.images);
      captured = images === false ? stored : await withShapedImage(stored, imageDepsOf(deps), images);
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
}

/** `{ clientCapabilities }` when the request itself declares them (2026-07-28 `_meta`), else nothing. */
function clientCapabilitiesOf(extra: unknown): { clientCapabilities?: HostClientCapabilities } {
  const declared = requestClientCapabilities(extra);
  return declared === undefined ? {} : { clientCapabilities: declared };
}
