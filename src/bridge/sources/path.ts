/**
 * Input form: a local path or `file://` URI inside the configured roots. The file is opened once,
 * checked through its descriptor, and copied from it into the call's private folder.
 */
import { FileBridgeError } from "../../errors/file-bridge-error.js";
import { baseName } from "../../internal/file-name.js";
import type { CallContext } from "../call-context.js";
import { tooLarge } from "../failures.js";
import { materializeStream } from "../materialize.js";
import type { ResolvedFile } from "../types.js";
import { openContainedPath, type Root } from "./path-containment.js";

/**
 * Resolves a local path (or a `file://` URI already turned into one) inside `roots`: the file is
 * opened once (see `openContainedPath`) and copied from that descriptor into the call's private
 * folder, so the bytes hashed are the bytes the handler gets, and a later swap of the original
 * changes nothing. The handler never receives the original path.
 */
export async function fromPath(
  path: string,
  detail: string,
  ctx: CallContext,
  roots: readonly Root[],
): Promise<ResolvedFile> {
  const opened = await openContainedPath(path, roots);
  try {
    if (opened.size > ctx.maxBytes) throw tooLarge(opened.size, ctx.maxBytes);
    if (opened.size === 0 && !ctx.allowEmpty) throw new FileBridgeError("EMPTY_FILE", "the file is empty");
  } catch (error) {
    await opened.handle.close();
    throw error;
  }
  return materializeStream(
    ctx,
    { kind: "path", detail, name: baseName(opened.path.replaceAll("\\", "/")), mimeType: undefined },
    () => opened.handle.createReadStream({ start: 0, autoClose: true }),
  ).finally(() => opened.handle.close().catch(() => {}));
}

export { looksLikePath } from "./form-tests.js";
