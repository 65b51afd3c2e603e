import { realpath, stat } from "node:fs/promises";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { FileBridgeError } from "../../errors/file-bridge-error.js";
import { type OpenedFile, openContainedFile } from "../../internal/safe-open.js";

function notAllowed(message: string, data?: Record<string, unknown>): FileBridgeError {
  return new FileBridgeError("PATH_NOT_ALLOWED", message, data ? { data } : {});
}

/**
 * True when `child` is `parent` itself or inside it, compared lexically on absolute, normalized
 * paths. `..foo` is a legal name inside `parent`; `..` and `../x` are not.
 */
export function isPathInside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  if (rel === "") return true;
  if (isAbsolute(rel)) return false;
  return rel !== ".." && !rel.startsWith(`..${sep}`) && !rel.startsWith("../");
}

/** True when a string holds a NUL byte (a classic way to truncate paths in native code). */
export function hasNulByte(text: string): boolean {
  return text.includes("\0");
}

/** True when any segment (split on `/` and `\`) is `..`. */
export function hasDotDotSegment(text: string): boolean {
  return text.split(/[/\\]/).some((segment) => segment === "..");
}

/**
 * Turns a `file://` URI into a local path, refusing anything that could climb out or smuggle bytes:
 * a host other than empty or `localhost`, percent-encoded `.`/`..` segments, encoded separators
 * (`%2f`, `%5c`), NUL bytes and malformed escapes. Throws `PATH_NOT_ALLOWED`.
 */
export function fileUriToPath(uri: string): string {
  const match = /^file:(?:\/\/([^/?#]*))?(\/[^?#]*)?([?#].*)?$/i.exec(uri);
  if (!match) throw notAllowed("malformed file:// URI");
  const [, host = "", rawPath = "", suffix] = match;
  if (suffix) throw notAllowed("file:// URI must not have a query or fragment");
  if (host !== "" && host.toLowerCase() !== "localhost") {
    throw notAllowed("file:// URI must not name a remote host");
  }
  if (rawPath === "") throw notAllowed("file:// URI has no path");
  const segments = rawPath.split("/").map((segment) => {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      throw notAllowed("file:// URI has a malformed percent-escape");
    }
    if (decoded === "." || decoded === "..") throw notAllowed("file:// URI climbs out with a dot segment");
    if (decoded.includes("/") || decoded.includes("\\")) {
      throw notAllowed("file:// URI has an encoded path separator");
    }
    if (hasNulByte(decoded)) throw notAllowed("file:// URI contains a NUL byte");
    return decoded;
  });
  let path = segments.join("/");
  // file:///C:/dir/x on Windows.
  if (process.platform === "win32" && /^\/[A-Za-z]:\//.test(path)) path = path.slice(1);
  return path;
}

/** A configured root: as given (resolved) and its real path. */
export interface Root {
  readonly resolved: string;
  readonly real: string;
}

/** Resolves the configured roots once: each must exist and be a directory. */
export async function prepareRoots(roots: readonly string[]): Promise<Root[]> {
  return Promise.all(
    roots.map(async (root) => {
      const resolved = resolve(root);
      let real: string;
      try {
        real = await realpath(resolved);
      } catch (cause) {
        throw new FileBridgeError("INVALID_OPTION", `roots: ${root} does not exist`, { cause });
      }
      const info = await stat(real);
      if (!info.isDirectory()) throw new FileBridgeError("INVALID_OPTION", `roots: ${root} is not a folder`);
      return { resolved, real };
    }),
  );
}

/** A local file that passed containment: its real path and size. */
export interface ContainedFile {
  readonly path: string;
  readonly size: number;
}

/**
 * The lexical half of the containment check: refuses (PATH_NOT_ALLOWED) NUL bytes, `..` segments and
 * anything outside every root before anything is looked at on disk. Returns the absolute candidate.
 */
function lexicalCandidate(input: string, roots: readonly Root[]): string {
  if (hasNulByte(input)) throw notAllowed("path contains a NUL byte");
  if (hasDotDotSegment(input)) throw notAllowed("path must not contain '..' segments");
  const first = roots[0];
  if (!first) throw new FileBridgeError("FORM_DISABLED", "no roots are configured; local paths are refused");
  const candidate = isAbsolute(input) ? resolve(input) : resolve(first.real, input);
  const inside = roots.some(
    (root) => isPathInside(candidate, root.resolved) || isPathInside(candidate, root.real),
  );
  if (!inside) throw notAllowed("path is outside the allowed folders", { outsideRoots: true });
  return candidate;
}

/**
 * The one containment check for local paths, and the one way to open them. Accepts an absolute
 * path, a path relative to the first root, or an already-decoded `file://` path. Refuses
 * (PATH_NOT_ALLOWED) NUL bytes, `..` segments and anything outside every root — first lexically (so
 * nothing outside is even looked at), then on the real path (a symlink inside a root that points
 * outside), then on the opened descriptor (a symlink swapped in after the check: see
 * `openContainedFile`). Missing → NOT_FOUND; a folder or other non-regular file → INVALID_INPUT.
 * The caller reads from the returned handle and closes it.
 */
export async function openContainedPath(input: string, roots: readonly Root[]): Promise<OpenedFile> {
  const candidate = lexicalCandidate(input, roots);
  return openContainedFile(candidate, (real) => roots.some((root) => isPathInside(real, root.real)));
}

/** {@link openContainedPath} for a check alone: the real path and size, the descriptor closed again. */
export async function resolveContainedPath(input: string, roots: readonly Root[]): Promise<ContainedFile> {
  const opened = await openContainedPath(input, roots);
  await opened.handle.close();
  return { path: opened.path, size: opened.size };
}
