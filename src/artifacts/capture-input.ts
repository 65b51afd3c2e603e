/**
 * The checks of a capture's source that need nothing loaded: `Artifacts.capture()` makes them before
 * its work loads (artifacts-work.ts, issue 39), and the work makes them again for the captures
 * `fit()` makes of a result's blocks.
 */
import { FileBridgeError } from "../errors/file-bridge-error.js";
import type { CaptureInput, EmbeddedResourceContents } from "./types.js";

/**
 * Checks the one source of `input` (`path`, `bytes` or `resource`; that there is exactly one is the
 * caller's check): a non-empty path (and root, when given), bytes as a `Uint8Array`, a resource with
 * a `uri` and exactly one of `text` or `blob`. Returns the resource's contents (unwrapped from an
 * embedded resource block) when the source is a resource. Errors: `INVALID_INPUT`.
 *
 * @example
 * ```ts
 * const contents = checkCaptureSource({ scope, resource: { uri: "mem://a.txt", text: "a" } }); // { uri, text }
 * ```
 */
export function checkCaptureSource(input: CaptureInput): EmbeddedResourceContents | undefined {
  if (input.path !== undefined) {
    if (typeof input.path !== "string" || input.path.length === 0 || input.path.includes("\0")) {
      throw new FileBridgeError("INVALID_INPUT", "path must be a non-empty string");
    }
    if (input.root !== undefined && (typeof input.root !== "string" || input.root.length === 0)) {
      throw new FileBridgeError("INVALID_INPUT", "root must be a non-empty path");
    }
    return undefined;
  }
  if (input.bytes !== undefined) {
    if (!(input.bytes instanceof Uint8Array))
      throw new FileBridgeError("INVALID_INPUT", "bytes must be a Uint8Array");
    return undefined;
  }
  const raw = input.resource as unknown as Record<string, unknown> | null;
  const inner = raw !== null && typeof raw === "object" && raw.type === "resource" ? raw.resource : raw;
  const resource = inner as EmbeddedResourceContents | null;
  if (typeof resource !== "object" || resource === null || typeof resource.uri !== "string") {
    throw new FileBridgeError("INVALID_INPUT", "resource must have a uri and text or blob");
  }
  const { text, blob } = resource;
  const one =
    (typeof text === "string" && blob === undefined) || (typeof blob === "string" && text === undefined);
  if (!one) throw new FileBridgeError("INVALID_INPUT", "resource must have exactly one of text or blob");
  return resource;
}
