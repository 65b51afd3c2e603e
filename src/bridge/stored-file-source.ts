import { createReadStream } from "node:fs";
import type { Readable } from "node:stream";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import type { FileStore, StoredFile } from "../storage/types.js";
import type { ResolverResult } from "./types.js";

/**
 * Turns a stored file into what a {@link FileSourceResolver} returns, so resolvers for upload
 * handles and resource URIs can hand stored files to a `FileBridge`. Name, type, size and sha256
 * come from the metadata (the bridge verifies size and sha256 while copying); the bytes are read
 * from `store.localPath()` when the driver has one, else from `store.read()`. A file deleted in the
 * meantime fails with `NOT_FOUND`.
 *
 * @example
 * ```ts
 * bridge.addResolver({
 *   name: "upload handle",
 *   matches: (input) => input.startsWith("upload://"),
 *   resolve: async (input, { scope }) => {
 *     const file = await store.head(scope, idFrom(input));
 *     return file ? storedFileSource(store, file) : null;
 *   },
 * });
 * ```
 */
export function storedFileSource(store: FileStore, file: StoredFile): ResolverResult {
  return {
    name: file.name,
    mimeType: file.mimeType,
    size: file.size,
    sha256: file.sha256,
    async open(): Promise<Readable> {
      const local = store.localPath ? await store.localPath(file.scope, file.id) : null;
      if (local) {
        return await new Promise<Readable>((resolve, reject) => {
          const stream = createReadStream(local);
          stream.once("open", () => resolve(stream));
          stream.once("error", (cause) =>
            reject(
              new FileBridgeError("NOT_FOUND", "the stored file is gone", { cause, data: { id: file.id } }),
            ),
          );
        });
      }
      const stream = await store.read(file.scope, file.id);
      if (!stream)
        throw new FileBridgeError("NOT_FOUND", "the stored file is gone", { data: { id: file.id } });
      return stream;
    },
  };
}
