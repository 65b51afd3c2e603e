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
  /** `accept` attribute of the file input (media types and extensions). */
  accept?: readonly string[] | undefined;
  /** Text of the done state. */
  doneText: string;
}

/** The `<main>` element of the upload UI. */
export function uploaderMarkup(options: UploaderMarkupOptions): string {
  const accept =
    options.accept && options.accept.length > 0 ? ` accept="${escapeHtml(options.accept.join(","))}"` : "";
  const message = options.message ? `\n<p id="message">${escapeHtml(options.message)}</p>` : "";
  return `<main>
<h1>${escapeHtml(options.title)}</h1>${message}
<p id="limits" class="muted"></p>
<div id="drop" class="drop">
<p>Drop files here, or</p>
<input type="file" id="picker" class="visually-hidden" multiple${accept}>
<label for="picker" class="button">Choose files</label>
<p id="pick-hint" class="muted" hidden></p>
</div>
<p id="error" class="error" role="alert" hidden></p>
<ul id="files" class="files" aria-label="Chosen files"></ul>
<div class="actions"><button id="upload" type="button" disabled>Upload</button></div>
<p id="status" role="status" class="muted"></p>
<section id="done" class="done" tabindex="-1" aria-labelledby="done-title" hidden>
<h2 id="done-title">Done</h2>
<p id="done-text">${escapeHtml(options.doneText)}</p>
</section>
</main>`;
}
