/**
 * What an image shaped for a model may be (long edge, encoded bytes), per `clientInfo.name`, and the
 * options a server author sets. Plain data and checks only: nothing here loads `sharp`.
 */
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { DEFAULT_INLINE_MEDIA_BUDGET } from "../internal/limits.js";

/**
 * How large an image block one client's model is sent: at most `maxEdge` pixels on the long edge and
 * `maxBytes` encoded bytes (base64 makes that 4/3 as many characters).
 *
 * @example
 * ```ts
 * const budget: ImageBudget = { maxEdge: 1568, maxBytes: 562_500 };
 * ```
 */
export interface ImageBudget {
  /** Pixels on the long edge. */
  maxEdge: number;
  /** Bytes of the encoded image. */
  maxBytes: number;
  /**
   * The client shows its model only a result's `structuredContent` when it has one (its image blocks
   * are not seen): a result carrying an image block goes to it without `structuredContent`, unless
   * the tool declares an `outputSchema`. Measured for Codex CLI 0.169 (`codex-mcp-client`).
   * @default false
   */
  structuredHidesImages?: boolean;
}

/**
 * The Claude API's vision guidance: images larger than 1,568 px on the long edge are downscaled
 * server-side at full token cost, so nothing larger is worth sending.
 *
 * @example
 * ```ts
 * new Artifacts({ store, images: { maxEdge: DEFAULT_IMAGE_MAX_EDGE / 2 } }); // 784 px
 * ```
 */
export const DEFAULT_IMAGE_MAX_EDGE = 1568;
/**
 * Bytes of an image that fit the default inline media budget (750,000 base64 characters): 562,500.
 *
 * @example
 * ```ts
 * await shapeImage({ path }, { maxBytes: DEFAULT_IMAGE_MAX_BYTES });
 * ```
 */
export const DEFAULT_IMAGE_MAX_BYTES = Math.floor((DEFAULT_INLINE_MEDIA_BUDGET * 3) / 4);
/**
 * Most pixels an image may declare before it is decoded (a 50-megapixel photo passes; a
 * decompression bomb — a small file declaring 30,000 × 30,000 — is refused with `FILE_TOO_LARGE`).
 *
 * @example
 * ```ts
 * new Artifacts({ store, images: { maxInputPixels: DEFAULT_IMAGE_MAX_PIXELS * 2 } }); // 200 MP
 * ```
 */
export const DEFAULT_IMAGE_MAX_PIXELS = 100_000_000;

/**
 * Image budgets of the clients the client matrix measured (`test/clients/`), by the `clientInfo.name`
 * each sends. Claude Code forwards an MCP image block to the model byte-identical; Codex CLI hands it
 * to the model as an `input_image`, but only from a result without `structuredContent` (with one, the
 * model gets that JSON alone: `structuredHidesImages`); Gemini CLI forwards it as `inlineData`. Each
 * gets the Claude vision guidance's 1,568 px and what fits its inline media budget.
 *
 * @example
 * ```ts
 * CLIENT_IMAGE_BUDGETS["claude-code"]?.maxEdge; // 1568
 * ```
 */
export const CLIENT_IMAGE_BUDGETS: Readonly<Record<string, Readonly<ImageBudget>>> = Object.freeze({
  "claude-code": Object.freeze({ maxEdge: DEFAULT_IMAGE_MAX_EDGE, maxBytes: DEFAULT_IMAGE_MAX_BYTES }),
  "codex-mcp-client": Object.freeze({
    maxEdge: DEFAULT_IMAGE_MAX_EDGE,
    maxBytes: DEFAULT_IMAGE_MAX_BYTES,
    structuredHidesImages: true,
  }),
  "gemini-cli-mcp-client": Object.freeze({
    maxEdge: DEFAULT_IMAGE_MAX_EDGE,
    maxBytes: DEFAULT_IMAGE_MAX_BYTES,
  }),
});

/**
 * How image outputs are delivered (`ArtifactsOptions.images`, `FitOptions.images`,
 * `artifacts.image()`). `false` instead of the object turns shaping off: images are handled as
 * before (kept inline when they fit the media budget, else stored and linked).
 *
 * @example
 * ```ts
 * new Artifacts({ store, images: { maxEdge: 1024, clients: { "my-agent": { maxBytes: 200_000 } } } });
 * ```
 */
export interface ImageOptions {
  /** Long edge, in pixels, for a client without a budget of its own. @default 1568 */
  maxEdge?: number;
  /** Encoded bytes for a client without a budget of its own. @default what fits the media budget (562500) */
  maxBytes?: number;
  /** Budgets by `clientInfo.name`, over {@link CLIENT_IMAGE_BUDGETS} (the same name replaces it). @default {} */
  clients?: Record<string, Partial<ImageBudget>>;
  /**
   * `"shaped"`: the model gets a shaped image block and the original is stored and linked.
   * `"original-only"`: the original is stored and linked, no image block is sent.
   * @default "shaped"
   */
  inline?: "shaped" | "original-only";
  /** An animated GIF/WebP: its first frame is sent (`"first-frame"`), or only the link (`"link"`). @default "first-frame" */
  animated?: "first-frame" | "link";
  /**
   * An SVG: rasterized from its bytes (no base folder, so librsvg loads no external file), or only
   * linked. @default "rasterize"
   */
  svg?: "rasterize" | "link";
  /** Most pixels an input may declare; more is refused with `FILE_TOO_LARGE` before decoding. @default 100000000 */
  maxInputPixels?: number;
}

/** Options checked once: `false` (off), or every field present. */
export type CheckedImageOptions =
  | false
  | (Required<Omit<ImageOptions, "maxBytes" | "clients">> & {
      maxBytes: number | undefined;
      clients: Record<string, Partial<ImageBudget>>;
    });

function positive(value: unknown, option: string, piece: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw new FileBridgeError("INVALID_OPTION", `${piece}: ${option} must be a positive integer`, {
      data: { option },
    });
  }
  return value;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], option: string, piece: string): T {
  if (!allowed.includes(value as T)) {
    throw new FileBridgeError(
      "INVALID_OPTION",
      `${piece}: ${option} must be one of ${allowed.map((a) => `"${a}"`).join(", ")}`,
      { data: { option } },
    );
  }
  return value as T;
}

/**
 * Checks image options once (constructor time); the error names the bad field (`INVALID_OPTION`).
 *
 * @example
 * ```ts
 * checkImageOptions({ maxEdge: 0 }, "Artifacts"); // throws INVALID_OPTION, data.option "images.maxEdge"
 * ```
 */
export function checkImageOptions(
  options: ImageOptions | false | undefined,
  piece: string,
  path = "images",
): CheckedImageOptions {
  if (options === false) return false;
  const given = options ?? {};
  if (typeof given !== "object" || given === null) {
    throw new FileBridgeError("INVALID_OPTION", `${piece}: ${path} must be an object or false`, {
      data: { option: path },
    });
  }
  const clients: Record<string, Partial<ImageBudget>> = {};
  for (const [name, budget] of Object.entries(given.clients ?? {})) {
    const edge = positive(budget?.maxEdge, `${path}.clients.${name}.maxEdge`, piece);
    const bytes = positive(budget?.maxBytes, `${path}.clients.${name}.maxBytes`, piece);
    const hides = budget?.structuredHidesImages;
    if (hides !== undefined && typeof hides !== "boolean") {
      const option = `${path}.clients.${name}.structuredHidesImages`;
      throw new FileBridgeError("INVALID_OPTION", `${piece}: ${option} must be a boolean`, {
        data: { option },
      });
    }
    clients[name] = {
      ...(edge === undefined ? {} : { maxEdge: edge }),
      ...(bytes === undefined ? {} : { maxBytes: bytes }),
      ...(hides === undefined ? {} : { structuredHidesImages: hides }),
    };
  }
  return {
    maxEdge: positive(given.maxEdge, `${path}.maxEdge`, piece) ?? DEFAULT_IMAGE_MAX_EDGE,
    maxBytes: positive(given.maxBytes, `${path}.maxBytes`, piece),
    clients,
    inline: oneOf(given.inline ?? "shaped", ["shaped", "original-only"], `${path}.inline`, piece),
    animated: oneOf(given.animated ?? "first-frame", ["first-frame", "link"], `${path}.animated`, piece),
    svg: oneOf(given.svg ?? "rasterize", ["rasterize", "link"], `${path}.svg`, piece),
    maxInputPixels:
      positive(given.maxInputPixels, `${path}.maxInputPixels`, piece) ?? DEFAULT_IMAGE_MAX_PIXELS,
  };
}

/**
 * The image budget for a client, field by field: the options' entry for `client`, else the options'
 * own `maxEdge` / `maxBytes`, else the measured {@link CLIENT_IMAGE_BUDGETS} entry, else the
 * package's default. `maxBytes` never passes what `mediaChars` (the client's inline media budget,
 * base64 characters) holds.
 *
 * @example
 * ```ts
 * imageBudgetFor("codex-mcp-client"); // { maxEdge: 1568, maxBytes: 562500, structuredHidesImages: true }
 * imageBudgetFor("my-agent", { maxEdge: 800 }); // { maxEdge: 800, maxBytes: 562500 }
 * ```
 */
export function imageBudgetFor(
  client: string | undefined,
  options: Pick<ImageOptions, "maxEdge" | "maxBytes" | "clients"> = {},
  mediaChars = DEFAULT_INLINE_MEDIA_BUDGET,
): ImageBudget {
  const known = client === undefined ? undefined : CLIENT_IMAGE_BUDGETS[client];
  const own = client === undefined ? undefined : options.clients?.[client];
  const fromMedia = Math.floor((mediaChars * 3) / 4);
  const hides = own?.structuredHidesImages ?? known?.structuredHidesImages ?? false;
  return {
    maxEdge: own?.maxEdge ?? options.maxEdge ?? known?.maxEdge ?? DEFAULT_IMAGE_MAX_EDGE,
    maxBytes: Math.min(own?.maxBytes ?? options.maxBytes ?? known?.maxBytes ?? fromMedia, fromMedia),
    ...(hides ? { structuredHidesImages: true } : {}),
  };
}
