/**
 * The document around the upload page and its problem pages: the HTML shell with the inline
 * stylesheet, and the headers, including a `Content-Security-Policy` that allows the inline script
 * and style by their sha256 hashes and nothing else.
 */
import { createHash } from "node:crypto";
import { PAGE_SCRIPT, UPLOAD_CSS } from "./generated/page-assets.js";
import { escapeHtml } from "./markup.js";

function sha256Source(text: string): string {
  return `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
}

let hashes: { script: string; style: string } | undefined;
function assetHashes(): { script: string; style: string } {
  hashes ??= { script: sha256Source(PAGE_SCRIPT), style: sha256Source(UPLOAD_CSS) };
  return hashes;
}

/** The page's CSP: its own inline script (or none) and style, connections only to `connect`. */
export function contentSecurityPolicy(connect: readonly string[], withScript: boolean): string {
  const { script, style } = assetHashes();
  return [
    "default-src 'none'",
    withScript ? `script-src ${script}` : "script-src 'none'",
    `style-src ${style}`,
    `connect-src ${connect.length > 0 ? connect.join(" ") : "'none'"}`,
    "img-src data:",
    "form-action 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** Every response header of a page: type, CSP, no caching, no referrer, no framing, nosniff. */
export function pageHeaders(csp: string): Record<string, string> {
  return {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": csp,
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
  };
}

/** The whole document: `<head>` with the stylesheet, then `body` and the script, if any. */
export function htmlDocument(lang: string, title: string, body: string, script: string | undefined): string {
  return `<!doctype html>
<html lang="${escapeHtml(lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${UPLOAD_CSS}</style>
</head>
<body>
${body}
${script ?? ""}
</body>
</html>
`;
}
