import { FileBridgeError } from "../errors/file-bridge-error.js";
import { DEFAULT_INLINE_MEDIA_BUDGET, DEFAULT_INLINE_TEXT_BUDGET } from "../internal/limits.js";

/**
 * How much of a tool result a client can take inline. Text over `text` characters and media over
 * `media` base64 characters are stored as artifacts by `Artifacts.fit`, leaving a short preview and
 * the link; blobs that are not images or audio are never inline.
 *
 * @example
 * ```ts
 * const budget: InlineBudget = { text: 10_000, media: 750_000 };
 * ```
 */
export interface InlineBudget {
  /** Characters of text (text blocks and embedded text resources) kept inline. */
  text: number;
  /** Base64 characters of images and audio kept inline. */
  media: number;
}

/**
 * Options of the inline budget (`ArtifactsOptions.inlineBudget`, `FitOptions.budget`).
 *
 * @example
 * ```ts
 * new Artifacts({ store, inlineBudget: { text: 20_000, clients: { "my-agent": { text: 4_000 } } } });
 * ```
 */
export interface InlineBudgetOptions {
  /** @default 10000 (`DEFAULT_INLINE_TEXT_BUDGET`), or the known client's budget */
  text?: number;
  /** @default 750000 (`DEFAULT_INLINE_MEDIA_BUDGET`), or the known client's budget */
  media?: number;
  /**
   * Budgets by `clientInfo.name`, over `CLIENT_INLINE_BUDGETS` (the same name replaces it).
   * @default {}
   */
  clients?: Record<string, Partial<InlineBudget>>;
}

/**
 * Budgets of the clients measured by the client matrix (`test/clients/`), by the `clientInfo.name`
 * each sends: Claude Code (`claude-code`) persists a result over 50,000 characters to a file of its
 * own and shows the model a 2 KB preview (a tool whose *tools/list* entry carries
 * `_meta: { "anthropic/maxResultSizeChars": n }` raises that cap to `n`, up to 500,000: pass a
 * matching `budget` to `fit` then); Codex CLI (`codex-mcp-client`) cuts text near 11,000 characters; Gemini CLI
 * (`gemini-cli-mcp-client`) keeps the first 8,000 and last 32,000 of 40,000.
 *
 * @example
 * ```ts
 * CLIENT_INLINE_BUDGETS["codex-mcp-client"]?.text; // 10000
 * ```
 */
export const CLIENT_INLINE_BUDGETS: Readonly<Record<string, Readonly<InlineBudget>>> = Object.freeze({
  "claude-code": Object.freeze({ text: 40_000, media: DEFAULT_INLINE_MEDIA_BUDGET }),
  "codex-mcp-client": Object.freeze({ text: 10_000, media: DEFAULT_INLINE_MEDIA_BUDGET }),
  "gemini-cli-mcp-client": Object.freeze({ text: 30_000, media: DEFAULT_INLINE_MEDIA_BUDGET }),
});

/**
 * The most one result may carry inline, text and media together: Claude Desktop rejects 1 MB.
 *
 * @example
 * ```ts
 * inlineBudgetFor("x", { text: 5_000_000 }).text === MAX_INLINE_RESULT_CHARS; // true
 * ```
 */
export const MAX_INLINE_RESULT_CHARS = 900_000;

function checkCount(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new FileBridgeError("INVALID_OPTION", `inlineBudget: ${name} must be a non-negative integer`, {
      data: { option: `inlineBudget.${name}` },
    });
  }
  return value;
}

/**
 * Checks inline budget options once (constructor time); the error names the bad field.
 *
 * @throws FileBridgeError `INVALID_OPTION`
 */
export function checkInlineBudget(options: InlineBudgetOptions | undefined): InlineBudgetOptions {
  if (options === undefined) return {};
  if (typeof options !== "object" || options === null) {
    throw new FileBridgeError("INVALID_OPTION", "inlineBudget must be an object", {
      data: { option: "inlineBudget" },
    });
  }
  checkCount(options.text, "text");
  checkCount(options.media, "media");
  for (const [name, budget] of Object.entries(options.clients ?? {})) {
    checkCount(budget?.text, `clients.${name}.text`);
    checkCount(budget?.media, `clients.${name}.media`);
  }
  return options;
}

/**
 * The inline budget for a client: the override's entry for `client`, else the measured
 * `CLIENT_INLINE_BUDGETS` entry, else the override's (or the package's) default; never above
 * {@link MAX_INLINE_RESULT_CHARS}.
 *
 * @example
 * ```ts
 * inlineBudgetFor("codex-mcp-client"); // { text: 10000, media: 750000 }
 * inlineBudgetFor("my-agent", { text: 4000 }); // { text: 4000, media: 750000 }
 * ```
 */
export function inlineBudgetFor(client: string | undefined, options: InlineBudgetOptions = {}): InlineBudget {
  const known = client === undefined ? undefined : CLIENT_INLINE_BUDGETS[client];
  const own = client === undefined ? undefined : options.clients?.[client];
  const text = own?.text ?? known?.text ?? options.text ?? DEFAULT_INLINE_TEXT_BUDGET;
  const media = own?.media ?? known?.media ?? options.media ?? DEFAULT_INLINE_MEDIA_BUDGET;
  return {
    text: Math.min(text, MAX_INLINE_RESULT_CHARS),
    media: Math.min(media, MAX_INLINE_RESULT_CHARS),
  };
}
