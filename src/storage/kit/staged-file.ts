/**
 * The staged-file state machine every driver shares: a file written but not yet visible, committed
 * once or discarded.
 */
import { FileBridgeError } from "../../errors/file-bridge-error.js";
import type { StagedFile, StoredFile } from "../types.js";

/**
 * A {@link StagedFile} around a driver's own commit and discard steps, with the state rules every
 * driver needs: `commit()` runs the step once (later calls share its promise) and a failed commit
 * leaves the file aborted; `abort()` discards a file that is still staged and is a no-op otherwise;
 * committing an aborted file fails with `ABORTED`.
 *
 * @example
 * ```ts
 * const { file, temp } = await writeTemp(source, options);
 * return stagedFile(file, () => rename(temp, finalPath), () => unlink(temp));
 * ```
 */
export function stagedFile(
  file: StoredFile,
  commitStep: (file: StoredFile) => Promise<unknown>,
  discardStep: (file: StoredFile) => Promise<unknown>,
): StagedFile {
  let state: "staged" | "committing" | "committed" | "aborted" = "staged";
  let committing: Promise<StoredFile> | undefined;
  return {
    file,
    commit(): Promise<StoredFile> {
      if (state === "aborted") {
        return Promise.reject(
          new FileBridgeError("ABORTED", "the staged file was aborted and cannot be committed"),
        );
      }
      if (!committing) {
        state = "committing";
        committing = commitStep(file).then(
          () => {
            state = "committed";
            return file;
          },
          (error: unknown) => {
            state = "aborted";
            throw error;
          },
        );
      }
      return committing;
    },
    async abort(): Promise<void> {
      if (state !== "staged") return;
      state = "aborted";
      await discardStep(file).catch(() => {});
    },
  };
}
