import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import { DEFAULT_UPLOAD_MAX_BYTES, DEFAULT_UPLOAD_MAX_FILES } from "../internal/limits.js";
import { parseMediaType } from "../media/media-type.js";
import type { UploadPageLink, UploadPageRenderer } from "../routes/types.js";
import { TICKET_CLAIMS, UPLOAD_PAGE_CLAIMS } from "../uploads/upload-handle.js";

export { UPLOAD_PAGE_CLAIMS } from "../uploads/upload-handle.js";

import { optionCheck } from "../internal/options.js";
import type { UrlSigner } from "../signing/types.js";
import { askerName } from "../uploads/request-files.js";
import { PAGE_SCRIPT } from "./generated/page-assets.js";
import { escapeHtml, jsonForScript, uploaderMarkup } from "./markup.js";
import { contentSecurityPolicy, htmlDocument, pageHeaders } from "./page-document.js";
import { limitsText, utcText } from "./page-text.js";

/**
 * Options of {@link renderUploadPage}.
 *
 * @example
 * ```ts
 * const options: UploadPageOptions = {
 *   uploadUrl: ticket.upload_url,
 *   maxBytes: ticket.max_bytes,
 *   maxFiles: ticket.max_files,
 *   expiresAt: ticket.expires_at,
 *   message: "Upload the contract you want me to review.",
 * };
 * ```
 */
export interface UploadPageOptions {
  /**
   * Where the page sends the files (multipart `POST`): the signed upload URL, absolute or relative to
   * the page (the route serves the page at the upload URL itself and uses `./{token}`).
   */
  uploadUrl: string;
  /** Size cap per file, in bytes, shown before the upload and checked before any byte is sent. */
  maxBytes: number;
  /** Most files per upload. */
  maxFiles: number;
  /**
   * When the link expires (milliseconds since the epoch, a `Date` or an ISO 8601 string).
   * @default not shown
   */
  expiresAt?: number | Date | string;
  /**
   * Main heading.
   * @default "Upload a file" when `maxFiles` is 1, else "Upload files"
   */
  title?: string;
  /**
   * What is being asked for, shown under the heading (plain text).
   * @default none
   */
  message?: string;
  /**
   * Which server asks for the files, shown above the heading ("Acme Converter asks you for files")
   * and in the window title (plain text, at most 100 characters).
   * @default not shown
   */
  serverName?: string;
  /**
   * File types the picker offers (`accept` attribute: media types like `image/*` or extensions like
   * `.pdf`). A hint for the picker only: the server decides what it accepts.
   * @default any file
   */
  accept?: readonly string[];
  /**
   * Language of the page (`<html lang>`).
   * @default "en"
   */
  lang?: string;
}

/**
 * A rendered page: the HTML and the headers to send with it, including its
 * `Content-Security-Policy` (inline script and style allowed by their sha256 hashes, nothing else).
 *
 * @example
 * ```ts
 * const page: UploadPage = renderUploadPage({ uploadUrl, maxBytes, maxFiles });
 * res.writeHead(200, page.headers).end(page.html);
 * ```
 */
export interface UploadPage {
  /** The whole document. */
  html: string;
  /** The `Content-Security-Policy` header value the page needs (also in `headers`). */
  contentSecurityPolicy: string;
  /** Every response header to send: type, CSP, no caching, no referrer, no framing, nosniff. */
  headers: Record<string, string>;
}

/**
 * Why a link cannot be used, as the page tells the person: `"expired"` (410), `"used"` (410) or
 * `"invalid"` (401).
 *
 * @example
 * ```ts
 * const problem: UploadPageProblem = "expired";
 * return uploadPageResponse({ problem }); // 410, "This upload link has expired…"
 * ```
 */
export type UploadPageProblem = "expired" | "used" | "invalid";

const PROBLEMS: Record<UploadPageProblem, { status: number; title: string; text: string }> = {
  expired: {
    status: 410,
    title: "This upload link has expired",
    text: "Ask for a new link in the chat, then open that one.",
  },
  used: {
    status: 410,
    title: "This upload link was already used",
    text: "The files sent with it are stored. To send more, ask for a new link in the chat.",
  },
  invalid: {
    status: 401,
    title: "This upload link is not valid",
    text: "Check that the whole link was copied, or ask for a new one in the chat.",
  },
};

const DONE_TEXT = "Your files are uploaded. You can close this page and go back to the chat.";

function expiryDate(value: UploadPageOptions["expiresAt"]): Date | undefined {
  if (value === undefined) return undefined;
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** A server name fit to show: whitespace folded, 1 to 100 characters, or none. */
const serverNameOf = askerName;

const check = optionCheck("renderUploadPage");

/**
 * Renders the upload page for a signed upload URL: a small, self-contained, accessible HTML
 * document (no external assets; inline CSS and script allowed by hash in a strict CSP). The person
 * picks or drops files, sees the limits before uploading (files over the size cap are refused
 * before any byte is sent), follows a progress bar per file, gets a plain error (too large, link
 * expired or used, network) or a done state that sends them back to the chat.
 *
 * @example
 * ```ts
 * const page = renderUploadPage({ uploadUrl: ticket.upload_url, maxBytes: ticket.max_bytes, maxFiles: ticket.max_files });
 * return new Response(page.html, { headers: page.headers });
 * ```
 */
export function renderUploadPage(options: UploadPageOptions): UploadPage {
  if (typeof options?.uploadUrl !== "string" || options.uploadUrl.length === 0) {
    throw check.error("uploadUrl", "must be a non-empty URL");
  }
  if (!Number.isSafeInteger(options.maxBytes) || options.maxBytes <= 0) {
    throw check.error("maxBytes", "must be a positive integer");
  }
  if (!Number.isSafeInteger(options.maxFiles) || options.maxFiles <= 0) {
    throw check.error("maxFiles", "must be a positive integer");
  }
  if (options.serverName !== undefined && serverNameOf(options.serverName) === undefined) {
    throw check.error("serverName", "must be 1 to 100 characters");
  }
  let connect = "'self'";
  try {
    const absolute = new URL(options.uploadUrl);
    if (absolute.protocol !== "https:" && absolute.protocol !== "http:") {
      throw check.error("uploadUrl", "must be an http(s) URL");
    }
    connect = absolute.origin;
  } catch (error) {
    if (isFileBridgeError(error)) throw error;
    // Relative to the page: same origin.
  }
  const title = options.title ?? (options.maxFiles === 1 ? "Upload a file" : "Upload files");
  const expires = expiryDate(options.expiresAt);
  const asker = serverNameOf(options.serverName);
  const config = {
    uploadUrl: options.uploadUrl,
    maxBytes: options.maxBytes,
    maxFiles: options.maxFiles,
    expiresAt: expires?.toISOString(),
  };
  const markup = uploaderMarkup({
    title,
    message: options.message,
    asker,
    accept: options.accept,
    doneText: DONE_TEXT,
    limitsText: limitsText(options.maxFiles, options.maxBytes),
    expiry: expires ? { iso: expires.toISOString(), text: utcText(expires) } : undefined,
  });
  const body = `${markup}
<noscript><p class="error">This page needs JavaScript to upload files.</p></noscript>
<script type="application/json" id="upload-config">${jsonForScript(config)}</script>`;
  const csp = contentSecurityPolicy([connect], true);
  return {
    html: htmlDocument(
      options.lang ?? "en",
      asker ? `${title} · ${asker}` : title,
      body,
      `<script>${PAGE_SCRIPT}</script>`,
    ),
    contentSecurityPolicy: csp,
    headers: pageHeaders(csp),
  };
}

/**
 * Renders the page a person sees when the link cannot be used: expired, already used, or not valid.
 * No script; the same look as the upload page.
 *
 * @example
 * ```ts
 * const page = renderUploadPageProblem("expired");
 * return new Response(page.html, { status: 410, headers: page.headers });
 * ```
 */
export function renderUploadPageProblem(
  problem: UploadPageProblem,
  options: { lang?: string } = {},
): UploadPage {
  const info = PROBLEMS[problem];
  if (!info) throw check.error("problem", 'must be "expired", "used" or "invalid"');
  const body = `<main id="uploader" data-state="${problem === "expired" ? "expired" : "error"}" aria-labelledby="title">
<header class="head"><h1 id="title">${escapeHtml(info.title)}</h1></header>
<div class="card"><p id="problem" class="problem" role="alert">${escapeHtml(info.text)}</p></div>
</main>`;
  const csp = contentSecurityPolicy([], false);
  return {
    html: htmlDocument(options.lang ?? "en", info.title, body, undefined),
    contentSecurityPolicy: csp,
    headers: pageHeaders(csp),
  };
}

/**
 * A web-standard `Response` with the upload page (200), or with the page for an unusable link
 * (`{ problem }`: 410 for expired or used, 401 for invalid). For `HEAD`, the same headers without
 * a body.
 *
 * @example
 * ```ts
 * app.get("/upload-page", () => uploadPageResponse({ uploadUrl, maxBytes: 10_000_000, maxFiles: 3 }));
 * ```
 */
export function uploadPageResponse(
  input: UploadPageOptions | { problem: UploadPageProblem; lang?: string },
  init: { method?: string } = {},
): Response {
  const problem = "problem" in input ? input.problem : undefined;
  const page =
    problem !== undefined
      ? renderUploadPageProblem(problem, input.lang !== undefined ? { lang: input.lang } : {})
      : renderUploadPage(input as UploadPageOptions);
  const status = problem !== undefined ? PROBLEMS[problem].status : 200;
  return new Response(init.method === "HEAD" ? null : page.html, { status, headers: page.headers });
}

/**
 * Whether a request asks for the upload page: a `GET` or `HEAD` whose `Accept` header lists
 * `text/html` (what a browser sends when a person opens a link). Programs that `POST` or `PUT` the
 * bytes, or `GET` without `text/html`, are not page requests.
 *
 * @example
 * ```ts
 * if (route === "upload" && wantsUploadPage(request)) return uploadPageForToken(request, { verifier: minter, token });
 * ```
 */
export function wantsUploadPage(request: Request): boolean {
  if (request.method !== "GET" && request.method !== "HEAD") return false;
  const accept = request.headers.get("accept");
  if (!accept) return false;
  return accept.split(",").some((part) => {
    const type = parseMediaType(part.trim());
    if (type?.essence !== "text/html") return false;
    const q = /;\s*q=([0-9.]+)/i.exec(part);
    return !q || Number(q[1]) > 0;
  });
}

/**
 * Options of {@link uploadPageForToken}.
 *
 * @example
 * ```ts
 * const options: UploadPageForTokenOptions = { verifier: minter, token, maxBytes: 100 * 1024 * 1024, maxFiles: 10 };
 * ```
 */
export interface UploadPageForTokenOptions {
  /** Verifies the upload token; must support `consume: false` (a `SignedUrlMinter` does). */
  verifier: Pick<UrlSigner, "verify" | "consume">;
  /** The token from the URL. */
  token: string;
  /**
   * Size cap for tickets that carry none (the routes' `maxBytes`).
   * @default 104857600 (100 MiB)
   */
  maxBytes?: number;
  /**
   * Most files for tickets that carry no limit (the routes' `maxFiles`).
   * @default 10
   */
  maxFiles?: number;
  /**
   * Where the page posts the files.
   * @default `./{token}` — the page is served at the upload URL itself
   */
  uploadUrl?: string;
  /**
   * Heading of the page.
   * @default "Upload a file" for a one-file ticket, else "Upload files"
   */
  title?: string;
  /**
   * Which server asks, for tickets that do not name it (`UploadHandleResolver` puts the MCP server's
   * title or name in the ticket).
   * @default not shown
   */
  serverName?: string;
}

function positive(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : fallback;
}

/**
 * What a file route answers to a browser opening an upload link (`GET {basePath}/upload/{token}`
 * with `Accept: text/html`): checks the token without using it up (a single-use ticket stays
 * usable for the upload itself), then answers the upload page with the ticket's limits, expiry and
 * request text — or the expired (410), used (410) or invalid (401) page.
 *
 * @example
 * ```ts
 * // inside a router, before the upload route's 405 for GET:
 * if (route === "upload" && wantsUploadPage(request)) {
 *   return uploadPageForToken(request, { verifier: minter, token, maxBytes, maxFiles });
 * }
 * ```
 */
export async function uploadPageForToken(
  request: Request,
  options: UploadPageForTokenOptions,
): Promise<Response> {
  const { verifier, token } = options;
  if (typeof verifier?.consume !== "function") {
    // A verifier that cannot check without using the ticket up must not see page views.
    throw new FileBridgeError(
      "INVALID_OPTION",
      "uploadPageForToken: verifier must support verify(token, { consume: false }) and consume()",
      { data: { option: "verifier" } },
    );
  }
  const method = request.method;
  let verified: Awaited<ReturnType<UrlSigner["verify"]>>;
  try {
    verified = await verifier.verify(token, { action: "upload", consume: false });
  } catch (error) {
    if (isFileBridgeError(error, "TOKEN_EXPIRED"))
      return uploadPageResponse({ problem: "expired" }, { method });
    if (isFileBridgeError(error, "TOKEN_ALREADY_USED"))
      return uploadPageResponse({ problem: "used" }, { method });
    if (isFileBridgeError(error, "INVALID_TOKEN") || isFileBridgeError(error, "NOT_FOUND")) {
      return uploadPageResponse({ problem: "invalid" }, { method });
    }
    throw error;
  }
  const claims = verified.claims ?? {};
  const message = claims[UPLOAD_PAGE_CLAIMS.message];
  const accept = claims[UPLOAD_PAGE_CLAIMS.accept];
  const page: UploadPageOptions = {
    uploadUrl: options.uploadUrl ?? `./${token}`,
    maxBytes: positive(claims[TICKET_CLAIMS.maxBytes], options.maxBytes ?? DEFAULT_UPLOAD_MAX_BYTES),
    maxFiles: positive(claims[TICKET_CLAIMS.maxFiles], options.maxFiles ?? DEFAULT_UPLOAD_MAX_FILES),
  };
  if (typeof verified.exp === "number") page.expiresAt = verified.exp;
  if (typeof message === "string" && message.length > 0) page.message = message;
  if (typeof accept === "string" && accept.length > 0) {
    page.accept = accept
      .split(",")
      .map((part) => part.trim())
      .filter(Boolean);
  }
  if (options.title !== undefined) page.title = options.title;
  const serverName = serverNameOf(claims[UPLOAD_PAGE_CLAIMS.server]) ?? serverNameOf(options.serverName);
  if (serverName !== undefined) page.serverName = serverName;
  return uploadPageResponse(page, { method });
}

const TOKEN_SEGMENT = /^[A-Za-z0-9_\-.~]+$/;

/**
 * The built-in upload page for `createFileRoutes({ uploadPage })`: the routes call it for a browser
 * opening an upload link, and it answers with {@link uploadPageForToken} (the link checked without
 * using it up) — or the invalid-link page for a token that is not even well-formed. `serverName`
 * says which server asks when the ticket does not. Fails with `INVALID_OPTION` (option
 * `uploadPage`) for a bad `title` or `serverName`.
 *
 * @example
 * ```ts
 * import { uploadPageRenderer } from "mcp-file-bridge/ui";
 * const routes = createFileRoutes({ store, minter, state, uploadPage: uploadPageRenderer({ title: "Send us the files" }) });
 * // Tickets from an UploadHandleResolver name their MCP server; for others, name it here:
 * uploadPageRenderer({ serverName: "Acme Converter" });
 * ```
 */
export function uploadPageRenderer(
  options: { title?: string; serverName?: string } = {},
): UploadPageRenderer {
  if (typeof options !== "object" || options === null) {
    throw new FileBridgeError("INVALID_OPTION", "uploadPageRenderer: options must be { title, serverName }", {
      data: { option: "uploadPage" },
    });
  }
  const { title, serverName } = options;
  if (serverName !== undefined && serverNameOf(serverName) === undefined) {
    throw new FileBridgeError(
      "INVALID_OPTION",
      "uploadPageRenderer: serverName must be 1 to 100 characters",
      {
        data: { option: "uploadPage" },
      },
    );
  }
  if (title !== undefined && (typeof title !== "string" || title.trim() === "" || title.length > 200)) {
    throw new FileBridgeError("INVALID_OPTION", "uploadPageRenderer: title must be 1 to 200 characters", {
      data: { option: "uploadPage" },
    });
  }
  return {
    wants: wantsUploadPage,
    render: async (request: Request, link: UploadPageLink) => {
      if (!TOKEN_SEGMENT.test(link.token)) return uploadPageResponse({ problem: "invalid" }, request);
      return uploadPageForToken(request, {
        ...link,
        ...(title === undefined ? {} : { title }),
        ...(serverName === undefined ? {} : { serverName }),
      });
    },
  };
}
