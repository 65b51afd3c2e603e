/**
 * The public types of `Artifacts`: its options, what `capture()` takes and returns, and the parts of
 * a minter and a registry it uses. Kept apart from the class so each file has one job.
 */

import type { ImageBudget, ImageOptions } from "../images/image-options.js";
import type { Duration } from "../internal/duration.js";
import type { DownloadOffer } from "../links/download-offer.js";
import type { FileOutput } from "../links/file-output.js";
import type { HostClientCapabilities } from "../mcp/host.js";
import type { ContentBlock, ResourceLink, TextContent } from "../mcp/types.js";
import type { ScopeFunction, ScopeSource } from "../scope/scope.js";
import type { DownloadClaimsFunction } from "../signing/signed-url-minter.js";
import type { UrlSigner } from "../signing/types.js";
import type { FileStore, PutOptions, PutSource, StoredFile } from "../storage/types.js";
import type { InlineBudget, InlineBudgetOptions } from "./inline-budget.js";

/**
 * The part of a `ResourceRegistry` artifacts use.
 *
 * @example
 * ```ts
 * const registry: ArtifactRegistry = new ResourceRegistry({ store });
 * const artifacts = new Artifacts({ store, registry }); // artifacts are listed in resources/list
 * ```
 */
export interface ArtifactRegistry {
  /** Stores and registers a file (lists it, fires `list_changed`). */
  add(source: PutSource, options: PutOptions): Promise<StoredFile>;
  /** The resource URI of a stored file. */
  uriFor(file: StoredFile): string;
  /** Deletes and unregisters a file (used when a capture fails after storing). */
  remove?(scope: string, id: string): Promise<unknown>;
}

/**
 * Options of {@link Artifacts}.
 *
 * @example
 * ```ts
 * new Artifacts({ store, minter, registry, ttl: "7d", downloadTtl: "15m" });
 * ```
 */
export interface ArtifactsOptions {
  /** Where artifacts are stored. */
  store: FileStore;
  /**
   * Mints the signed download URL put in each artifact's text block and `_meta.download_url`.
   * @default undefined (no download URL)
   */
  minter?: Pick<UrlSigner, "downloadUrl" | "scopeRefs">;
  /**
   * Registers artifacts as MCP resources (through `registry.add`, so `resources/list` shows them and
   * `list_changed` fires) and names their URIs (`registry.uriFor`). Give a registry over the same store.
   * @default undefined (stored directly; URI `artifact://sessions/{scopeRef}/{id}/{filename}`)
   */
  registry?: ArtifactRegistry;
  /**
   * How long artifacts live.
   * @default "24h"
   */
  ttl?: Duration;
  /**
   * Lifetime of the download URLs.
   * @default the minter's ttl
   */
  downloadTtl?: Duration;
  /**
   * Size cap per artifact, in bytes; over it `capture` fails with `FILE_TOO_LARGE` and stores nothing.
   * @default 1073741824 (1 GiB)
   */
  maxBytes?: number;
  /**
   * Extra claims signed into each artifact's download URL, e.g. the id of the API key to charge:
   * `(file, extra) => ({ key: keyIdOf(extra) })`. `extra` is the tool call's `extra` (passed by
   * {@link Artifacts.withArtifacts}, or given to `capture({ extra })`), else `undefined`. The download
   * route's `onDownload` receives them, verified, as `claims`. Signed, not encrypted.
   * @default none (no extra claims)
   */
  downloadClaims?: DownloadClaimsFunction;
  /**
   * Derives the caller's scope in {@link Artifacts.withArtifacts}.
   * @default defaultScope (the authenticated user, else the session id, else FORBIDDEN over HTTP)
   */
  scope?: ScopeFunction;
  /**
   * Folder under which {@link Artifacts.withArtifacts} makes per-call temp folders.
   * @default join(os.tmpdir(), `mcp-file-bridge-${uid}`) (one per user; no suffix where there are no uids)
   */
  tmpDir?: string;
  /**
   * What `Artifacts.fit()` keeps inline: `text` characters and `media` base64 characters for a
   * client it does not know, and per `clientInfo.name` in `clients` (over the measured
   * `CLIENT_INLINE_BUDGETS`).
   * @default { text: 10000, media: 750000 } and the measured budgets of Claude Code, Codex CLI and Gemini CLI
   */
  inlineBudget?: InlineBudgetOptions;
  /**
   * How image outputs reach the model (`fit()`, `withArtifacts()`, `image()`): a copy shaped to the
   * client's image budget (long edge, bytes, format; EXIF orientation applied, metadata stripped)
   * goes inline as an image block, and the full-resolution original is stored and linked. Needs the
   * optional peer `sharp`. Left unset, shaping runs when `sharp` loads and is skipped when it does
   * not (images then go inline or to a link by the media budget, as before); given, `sharp` is
   * required (`INVALID_OPTION` naming it when missing); `false` turns shaping off.
   * @default shaping with the measured budgets when `sharp` is installed (1,568 px, what fits the media budget)
   */
  images?: ImageOptions | false;
}

/**
 * Options of `Artifacts.fit()`.
 *
 * @example
 * ```ts
 * await artifacts.fit(result, { scope, client: clientNameOf(server), name: "report.html" });
 * ```
 */
export interface FitOptions {
  /** Scope the stored outputs belong to. */
  scope: string;
  /** The caller's `clientInfo.name` (`clientNameOf(server)`); picks the client's budget. @default undefined (the default budget) */
  client?: string | undefined;
  /** File name of a text output that is stored. @default "output.txt" */
  name?: string;
  /**
   * This call's budget, for whichever client called (e.g. a tool's own `maxInlineText` option).
   * @default the client's budget from {@link ArtifactsOptions.inlineBudget} and `CLIENT_INLINE_BUDGETS`
   */
  budget?: Partial<InlineBudget>;
  /**
   * This call's image budget (a tool's own), over the client's; `false`: no image of this result is
   * shaped. @default the client's image budget ({@link ArtifactsOptions.images})
   */
  images?: Partial<ImageBudget> | false;
  /**
   * The tool declares an `outputSchema`, so its results keep `structuredContent` for every client.
   * Left `false`, a client that shows its model only `structuredContent` (Codex CLI) gets a result
   * carrying an image block without it (the JSON then follows as a text block), so its model sees
   * the image; a tool with an `outputSchema` must say `true` (the SDK refuses a result without it).
   * @default false
   */
  outputSchema?: boolean;
  /** Aborts storing; nothing is stored. */
  signal?: AbortSignal;
  /** The tool call's `extra`, handed to {@link ArtifactsOptions.downloadClaims}. @default undefined */
  extra?: ScopeSource;
}

/**
 * An embedded resource's contents, as in an MCP `resource` content block.
 *
 * @example
 * ```ts
 * const resource: EmbeddedResourceContents = { uri: "mem://report.csv", mimeType: "text/csv", text: "a,b\n1,2\n" };
 * const captured = await artifacts.capture({ scope, resource });
 * ```
 */
export interface EmbeddedResourceContents {
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
}

/**
 * What {@link Artifacts.capture} stores: give exactly one of `path`, `bytes` or `resource`.
 *
 * @example
 * ```ts
 * const input: CaptureInput = { scope, path: "/tmp/out/chart.png", metadata: { tool: "render_chart" } };
 * const { uri } = await artifacts.capture(input);
 * ```
 */
export interface CaptureInput {
  /** Scope the artifact belongs to. */
  scope: string;
  /**
   * A local file the tool wrote (streamed, never read whole). It is opened once and read from that
   * descriptor: after following symlinks it must be a regular file inside `root`, a symlink at the
   * last component that leads out of `root` is refused with `PATH_NOT_ALLOWED`, and a symlink
   * swapped in after the check cannot redirect the read. A hard link to an outside file cannot be
   * told apart (see docs/security.md): write outputs into a folder only your tool controls.
   */
  path?: string;
  /**
   * The folder `path` must be inside (resolved when `capture` runs).
   * @default the folder of `path`
   */
  root?: string;
  /** Bytes in memory. */
  bytes?: Uint8Array;
  /** An embedded resource (`{ type: "resource", resource }` or just its `resource`). */
  resource?: EmbeddedResourceContents | { type: "resource"; resource: EmbeddedResourceContents };
  /** Display name. @default the path's file name, the resource URI's last segment, else "artifact" */
  name?: string;
  /** Media type. @default from the resource, else from the name, else sniffed */
  mimeType?: string;
  /** Small string metadata kept with the file (e.g. `{ tool: "render" }`). */
  metadata?: Record<string, string>;
  /** Aborts the capture; nothing is stored. */
  signal?: AbortSignal;
  /** The tool call's `extra`, handed to {@link ArtifactsOptions.downloadClaims}. @default undefined */
  extra?: ScopeSource;
  /**
   * What the client declared (`ctx.clientCapabilities`): with the files extension's `files`
   * capability, the result also carries the output's `FileValue` (`structuredContent.file`, under
   * its `upload://` handle, with its sha-256); with the revision Claude Code ships and its
   * `download`, `_meta["io.modelcontextprotocol/files"].downloads` offers the file too; every other
   * client gets exactly today's result. `withArtifacts` reads it from the request itself. @default undefined
   */
  clientCapabilities?: HostClientCapabilities;
}

/**
 * What {@link Artifacts.capture} returns.
 *
 * @example
 * ```ts
 * const { content, _meta }: CapturedArtifact = await artifacts.capture({ scope, bytes, name: "a.png" });
 * return { content: [{ type: "text", text: "Done." }, ...content], _meta };
 * ```
 */
export interface CapturedArtifact {
  /** The stored file (kind `"artifact"`). */
  file: StoredFile;
  /** Its resource URI. */
  uri: string;
  /** A `resource_link` plus a text block with the URI and the download URL; append to a tool result. */
  content: [ResourceLink, TextContent];
  /**
   * The same as data (URI, name, type, size, download URL): what goes into a result's
   * `structuredContent.files` (see `withFileOutputs` and `fileOutputFields`).
   */
  structuredContent: FileOutput;
  /** For a tool result's `_meta`. */
  _meta: {
    artifact_uri: string;
    download_url?: string;
    download_url_expires_at?: string;
    /**
     * The download offer, for a client that declared the files extension revision Claude Code ships
     * with `download` (`extensions["io.modelcontextprotocol/files"]: { download: {} }`).
     */
    "io.modelcontextprotocol/files"?: { downloads: DownloadOffer[] };
  };
}

/**
 * Options of {@link Artifacts.withArtifacts}.
 *
 * @example
 * ```ts
 * const options: WithArtifactsOptions = { outputPathArg: "output", outputName: "report.pdf" };
 * server.registerTool("report", { inputSchema }, artifacts.withArtifacts(handler, options));
 * ```
 */
export interface WithArtifactsOptions {
  /** The argument that receives the pre-allocated output path. */
  outputPathArg: string;
  /**
   * File name of the output when the caller gave none in `outputPathArg` (a name the caller gives is
   * sanitized and used inside the temp folder; it never chooses the folder).
   * @default "output"
   */
  outputName?: string;
  /** Media type of the output. @default from the name, else sniffed */
  mimeType?: string;
  /** Metadata kept with each artifact. @default undefined */
  metadata?: Record<string, string>;
  /**
   * The caller's `clientInfo.name` (e.g. `() => clientNameOf(server)`): picks the image budget of an
   * image output. @default undefined (the default image budget)
   */
  client?: () => string | undefined;
  /** This tool's image budget, over the client's; `false`: its image output is only linked. @default the client's */
  images?: Partial<ImageBudget> | false;
  /**
   * The tool declares an `outputSchema`, so its results keep `structuredContent` for every client
   * (the SDK refuses a result without it) and Codex CLI's model gets that JSON, not the image. Left
   * `false`, Codex CLI (which shows its model only `structuredContent` when a result has it) gets a
   * shaped image's result without it, the JSON as a text block after the links. @default false
   */
  outputSchema?: boolean;
}

/**
 * What `artifacts.image()` takes: a capture's input, plus whose budget to shape for.
 *
 * @example
 * ```ts
 * const input: ImageInput = { scope, path: "/tmp/out/page.png", client: clientNameOf(server) };
 * ```
 */
export interface ImageInput extends CaptureInput {
  /** The caller's `clientInfo.name` (`clientNameOf(server)`). @default undefined (the default image budget) */
  client?: string | undefined;
  /** This call's image budget, over the client's. @default the client's */
  budget?: Partial<ImageBudget>;
}

/**
 * What `artifacts.image()` returns: the stored original as {@link CapturedArtifact} does, with
 * the shaped image block first in `content` (absent when the options only link, e.g. an SVG with
 * `svg: "link"`), and what was sent.
 *
 * @example
 * ```ts
 * const shot = await artifacts.image({ scope, path, client: clientNameOf(server) });
 * return withFileOutputs({ content: [{ type: "text", text: "Screenshot taken." }] }, shot);
 * ```
 */
export interface ImageArtifact extends Omit<CapturedArtifact, "content"> {
  /** `[image, resource_link, text]`, or `[resource_link, text]` when no image block is sent. */
  content: ContentBlock[];
  /** The image block sent: its type, size and bytes; undefined when none is. */
  shown?: { mimeType: string; width: number; height: number; bytes: number };
}
