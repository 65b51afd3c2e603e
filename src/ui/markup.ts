/**
 * The HTML both the upload page and the upload widget are made of. The browser code
 * (`src/ui/client/uploader.ts`) binds to these element ids.
 */

/** Escapes text for HTML element content and double-quoted attribute values. */
export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/**
 * JSON for a `<script type="application/json">` data block: `<`, `>`, `&` and the line separators
 * are escaped, so no value can close the element or start a comment.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/** What the uploader markup shows. */
export interface UploaderMarkupOptions {
  /** Main heading. */
  title: string;
  /** Optional request text under the heading (plain text; escaped). */
  message?: string | undefined;
  /** Which server asks for the files (its title or name; plain text, escaped). */
  asker?: string | undefined;
  /** `accept` attribute of the file input (media types and extensions). */
  accept?: readonly string[] | undefined;
  /** Text of the done state. */
  doneText: string;
  /** The limits line as rendered before the script runs (the script rewrites it). */
  limitsText?: string | undefined;
  /** When the link expires (ISO 8601) and how that reads in UTC; the script adds the local time. */
  expiry?: { iso: string; text: string } | undefined;
}

/** An upload arrow: decoration only (`aria-hidden`), drawn inline so the CSP needs no image source. */
const ICON =
  '<svg class="icon" aria-hidden="true" focusable="false" viewBox="0 0 24 24" width="40" height="40"><path d="M12 16V4m0 0-5 5m5-5 5 5M5 15v3a2 2 0 0 0 2 2h10a2 2 0 0 0 2-2v-3" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round"/></svg>';

/**
 * The `<main>` element of the upload UI. Its `data-state` says what the person sees: `waiting` (no
 * file chosen yet), `ready`, `uploading`, `done`, `expired` or `error`; the script keeps it current.
 */
export function uploaderMarkup(options: UploaderMarkupOptions): string {
  const accept =
    options.accept && options.accept.length > 0 ? ` accept="${escapeHtml(options.accept.join(","))}"` : "";
  const asker = options.asker
    ? `\n<p id="asker" class="asker"><strong>${escapeHtml(options.asker)}</strong> asks you for files</p>`
    : "";
  const message = options.message
    ? `\n<p id="message" class="message">${escapeHtml(options.message)}</p>`
    : "";
  const expiry = options.expiry
    ? `\n<li id="expiry"><span id="expiry-label">Link expires</span> <time id="expiry-time" datetime="${escapeHtml(options.expiry.iso)}">${escapeHtml(options.expiry.text)}</time></li>`
    : "";
  return `<main id="uploader" data-state="waiting" aria-labelledby="title">
<header class="head">${asker}
<h1 id="title">${escapeHtml(options.title)}</h1>${message}
</header>
<div class="card">
<ul class="facts" aria-label="About this upload link">
<li id="limits">${escapeHtml(options.limitsText ?? "")}</li>${expiry}
</ul>
<div id="drop" class="drop" role="group" aria-labelledby="drop-label">
${ICON}
<p id="drop-label">Drop files here, or</p>
<input type="file" id="picker" class="visually-hidden" multiple${accept}>
<label for="picker" class="button">Choose files</label>
<p id="pick-hint" class="muted" hidden></p>
</div>
<p id="error" class="error" role="alert" hidden></p>
<ul id="files" class="files" aria-label="Chosen files"></ul>
<div class="actions"><button id="upload" type="button" disabled>Upload</button>
<p id="status" role="status" class="muted"></p></div>
<section id="done" class="done" tabindex="-1" aria-labelledby="done-title" hidden>
<h2 id="done-title">Done</h2>
<p id="done-text">${escapeHtml(options.doneText)}</p>
</section>
</div>
</main>`;
}
