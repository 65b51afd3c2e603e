/**
 * `UploadHandleResolver.rewrite()`: upload handles at argument paths replaced by paths of local
 * copies, for tools that must not know about handles. A field that takes one file gets one copy; a
 * list item gets a copy of every file its handle stands for, spliced in at its position.
 */

import { materializeStoredFile } from "../bridge/materialize.js";
import type { ResolvedFile } from "../bridge/types.js";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { collectFieldSlots, type FieldSlot, parseFieldPath } from "../internal/field-paths.js";
import { placeInSlots } from "../internal/place-slots.js";
import { type ScopeRefs, UNKEYED_SCOPE_REFS } from "../scope/scope-refs.js";
import type { FileStore, StoredFile } from "../storage/types.js";
import type { RewrittenArgs } from "./types.js";
import { UPLOAD_HANDLE_PREFIX, uploadHandleOf } from "./upload-handle.js";

/** What {@link rewriteHandles} needs from the resolver. */
export interface RewriteDeps {
  store: FileStore;
  tmpDir: string;
  /** Every stored file a handle stands for in the caller's scope, `null` when none. */
  filesFor(handle: string, options: { scope: string }): Promise<StoredFile[] | null>;
  /** How scopes become references in handles (the minter's). @default the unkeyed ones */
  refs?: ScopeRefs;
}

/**
 * `INVALID_INPUT` for a handle that stands for several files where one file is expected: names how
 * many, the handles of the single files (`files[i].handle` of the upload's reply) and the list form.
 *
 * @example
 * ```ts
 * if (files.length > 1) throw severalFiles(files, "file");
 * ```
 */
export function severalFiles(
  files: readonly StoredFile[],
  field?: string,
  refs: ScopeRefs = UNKEYED_SCOPE_REFS,
): FileBridgeError {
  const handles = files.map((file) => uploadHandleOf(file, refs));
  const shown = handles.slice(0, 5).join(", ") + (handles.length > 5 ? ", …" : "");
  const where = field ? `${field} takes one file` : "one file is expected here";
  return new FileBridgeError(
    "INVALID_INPUT",
    `this upload handle stands for ${files.length} files, but ${where}: pass one file's own handle ` +
      `(files[i].handle in the upload's reply: ${shown}), or pass the upload handle in a list of ` +
      "files to use all of them",
    { data: { count: files.length, handles, ...(field ? { field } : {}) } },
  );
}

/**
 * Copies the files behind the upload handles at `paths` (each distinct handle once per call, at
 * most `maxFiles` files in all, `TOO_MANY_FILES` before anything is copied) and puts their local
 * paths in a copy of `args`. `NOT_FOUND` for a handle that does not resolve in `scope`; all or
 * nothing.
 */
export async function rewriteHandles<T>(
  deps: RewriteDeps,
  args: T,
  paths: readonly string[],
  options: { scope: string; maxFiles: number },
): Promise<RewrittenArgs<T>> {
  const steps = paths.map((path) => parseFieldPath(path, "paths"));
  const copy = structuredClone(args);
  const slots = steps
    .flatMap((path) => collectFieldSlots(copy, path))
    .filter((slot) => typeof slot.value === "string" && slot.value.startsWith(UPLOAD_HANDLE_PREFIX));
  const stored = await lookUp(deps, slots, options);
  const files: ResolvedFile[] = [];
  const dispose = async () => {
    await Promise.all(files.map((file) => file.dispose()));
  };
  try {
    const copies = new Map<string, string[]>();
    for (const [handle, found] of stored) {
      const local: string[] = [];
      for (const file of found) {
        const made = await materializeStoredFile(
          {
            tmpDir: deps.tmpDir,
            scope: options.scope,
            maxBytes: Number.POSITIVE_INFINITY,
            signal: undefined,
            allowEmpty: true,
            fallbackName: undefined,
          },
          deps.store,
          file,
          { kind: "resolver", detail: "upload handle" },
        );
        files.push(made);
        local.push(made.path);
      }
      copies.set(handle, local);
    }
    placeInSlots(slots, (slot) => copies.get(slot.value as string) as string[]);
  } catch (error) {
    await dispose();
    throw error;
  }
  return { args: copy, dispose, [Symbol.asyncDispose]: dispose };
}

/** The stored files of each distinct handle, checked: found, one file where one is expected, at most `maxFiles`. */
async function lookUp(
  deps: RewriteDeps,
  slots: readonly FieldSlot[],
  options: { scope: string; maxFiles: number },
): Promise<Map<string, StoredFile[]>> {
  const distinct = new Set(slots.map((slot) => slot.value as string));
  const tooMany = (count: number) =>
    new FileBridgeError("TOO_MANY_FILES", `at most ${options.maxFiles} files can be sent at once`, {
      data: { limit: options.maxFiles, count },
    });
  if (distinct.size > options.maxFiles) throw tooMany(distinct.size);
  const stored = new Map<string, StoredFile[]>();
  let count = 0;
  for (const slot of slots) {
    const handle = slot.value as string;
    let found = stored.get(handle);
    if (!found) {
      found = (await deps.filesFor(handle, { scope: options.scope })) ?? undefined;
      if (!found) {
        throw new FileBridgeError("NOT_FOUND", `${slot.label}: no such upload`, {
          data: { field: slot.label },
        });
      }
      stored.set(handle, found);
      count += found.length;
      if (count > options.maxFiles) throw tooMany(count);
    }
    if (!Array.isArray(slot.container) && found.length > 1) throw severalFiles(found, slot.label, deps.refs);
  }
  return stored;
}
