/**
 * The quick tests `FileBridge`'s call path (resolution.ts) runs on a string to pick its input form,
 * before that form's own code (`sources/*`) runs.
 */

/** True when the string starts with the `data:` scheme (any case). */
export function isDataUrl(input: string): boolean {
  return /^data:/i.test(input);
}

/** Whether a string that matched no other form is meant as a path (for `FORM_DISABLED` vs `UNSUPPORTED_INPUT`). */
export function looksLikePath(input: string): boolean {
  return (
    input.startsWith("/") ||
    input.startsWith("./") ||
    input.startsWith("../") ||
    input.startsWith("~") ||
    input.startsWith("\\") ||
    /^[A-Za-z]:[\\/]/.test(input) ||
    /[/\\]/.test(input) ||
    /^[^\s]+\.[A-Za-z0-9]{1,10}$/.test(input)
  );
}

/** Characters a string must be made of to be considered base64 at all (before strict checks). */
export const BASE64_CHARSET = /^[A-Za-z0-9+/_\-\t\n\f\r ]+={0,2}[\t\n\f\r ]*$/;
