/**
 * `Artifacts`: its options, checked when it is made, and each call's arguments, checked before
 * anything runs. What a call does once its arguments are checked (reading, storing, signing,
 * fitting, shaping) is artifacts-work.ts, loaded on the first call (issue 39).
 */
import { FileBridgeError, isFileBridgeError, toToolErrorResult } from "../errors/file-bridge-error.js";
import {
  type CheckedImageOptions,
  checkImageOptions,
  type ImageBudget,
  imageBudgetFor,
} from "../images/image-options.js";
import { defaultTmpDir } from "../internal/default-tmp-dir.js";
import { durationToMs } from "../internal/duration.js";
import { sanitizeFileName } from "../internal/file-name.js";
import { firstUse } from "../internal/first-use.js";
import { DEFAULT_ARTIFACT_MAX_BYTES } from "../internal/limits.js";
import { optionCheck } from "../internal/options.js";
import { scopeSourceOf } from "../mcp/scope-source.js";
import type { CallToolResult } from "../mcp/types.js";
import { assertScope, defaultScope, type ScopeFunction, type ScopeSource } from "../scope/scope.js";
import { type ScopeRefs, scopeRefsOf, UNKEYED_SCOPE_REFS } from "../scope/scope-refs.js";
import type { StoredFile } from "../storage/types.js";
import type { ArtifactsDeps } from "./artifacts-work.js";
import { checkCaptureSource } from "./capture-input.js";
import { checkInlineBudget, type InlineBudgetOptions, inlineBudgetFor } from "./inline-budget.js";
import type {
  ArtifactsOptions,
  CapturedArtifact,
  CaptureInput,
  FitOptions,
  ImageArtifact,
  ImageInput,
  WithArtifactsOptions,
} from "./types.js";

/** The work of a call once its arguments are checked, loaded on the first call (issue 39). */
const loadWork = firstUse(() => import("./artifacts-work.js"));

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
  /** What the work of a call needs of this instance (artifacts-work.ts). */
  readonly #deps: ArtifactsDeps;
  readonly #scope: ScopeFunction;
  readonly #tmpDirOption: string | undefined;
  /** The temp folder, worked out on first use (a runtime without a disk never asks for it). */
  get #tmpDir(): string {
    return this.#tmpDirOption ?? defaultTmpDir();
  }
  readonly #inlineBudget: InlineBudgetOptions;
  readonly #images: CheckedImageOptions;

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
    this.#scope = options.scope ?? defaultScope;
    this.#tmpDirOption = options.tmpDir;
    this.#inlineBudget = checkInlineBudget(options.inlineBudget);
    this.#images = checkImageOptions(options.images, "Artifacts");
    this.#deps = {
      store,
      minter,
      registry,
      ttlSeconds: ttlMs / 1000,
      downloadTtl: options.downloadTtl,
      downloadClaims: options.downloadClaims,
      maxBytes,
      images: this.#images,
      // Asked for explicitly: `sharp` is required. Left unset: shaping when `sharp` loads.
      imageMode: options.images === undefined ? "auto" : "on",
      tmpDir: () => this.#tmpDir,
      defaultUri: (file) => defaultArtifactUri(file, scopeRefsOf(minter)),
      imageBudget: (client, own) => this.#imageBudget(client, own),
    };
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
    const images = this.#imageBudget(options.client, options.images);
    return (await loadWork()).fitToBudget(this.#deps, result, options, budget, name, images);
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
    return (await loadWork()).shapeCaptured(this.#deps, captured, budget);
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
    checkCaptureSource(input);
    return (await loadWork()).captureArtifact(this.#deps, input, undefined);
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
      const call = { handler, options, outputPathArg, args, extra, source, scope, name };
      return (await loadWork()).runWithArtifacts(this.#deps, call);
    };
  }
}
