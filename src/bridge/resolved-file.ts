import { createReadStream } from "node:fs";
import { readFile } from "node:fs/promises";
import type { Readable } from "node:stream";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { releaseCallFile } from "./call-folders.js";
import type { FileSource, ResolvedFile } from "./types.js";

/** What a {@link LocalResolvedFile} is made of. */
export interface LocalResolvedFileInit {
  name: string;
  mimeType: string;
  size: number;
  /** Lower-case hex sha256, or a function that computes it when `sha256` is first read. */
  sha256: string | (() => string);
  path: string;
  source: FileSource;
  /**
   * Set when `path` is a temp file this bridge made in the call's own `folder` (under `tmpDir`): on
   * dispose the file is unlinked and the folder either kept, empty, for later calls of `scope` or
   * removed with anything the tool left in it (bridge/call-folders.ts). Absent for local-path
   * inputs (never deleted).
   */
  owned?: OwnedFolder | undefined;
  /** Called once after the temp file is gone. */
  onDispose?: (() => void) | undefined;
}

/** The call folder a {@link LocalResolvedFile} was written in, and whose calls may reuse it. */
export interface OwnedFolder {
  readonly folder: string;
  readonly tmpDir: string;
  readonly scope: string | undefined;
}

const asyncDispose: typeof Symbol.asyncDispose = Symbol.asyncDispose ?? Symbol.for("Symbol.asyncDispose");

/** The one {@link ResolvedFile} implementation: a real local file plus its metadata. */
export class LocalResolvedFile implements ResolvedFile {
  readonly name: string;
  readonly mimeType: string;
  readonly size: number;
  declare readonly sha256: string;
  readonly path: string;
  readonly source: FileSource;
  readonly #owned: OwnedFolder | undefined;
  readonly #onDispose: (() => void) | undefined;
  #disposing: Promise<void> | undefined;
  #sha256: string | (() => string);

  /** The `sha256` accessor every instance has as an own, enumerable property (one getter for all). */
  static readonly #sha256Property: PropertyDescriptor = {
    enumerable: true,
    get(this: LocalResolvedFile): string {
      return this.#readSha256();
    },
  };

  /** The sha256, computed from the file on first read when it was not known when writing. */
  #readSha256(): string {
    let sha256 = this.#sha256;
    if (typeof sha256 === "function") {
      if (this.#disposing) {
        throw new FileBridgeError("NOT_FOUND", "sha256 was first read after dispose(); read it before");
      }
      sha256 = sha256();
      this.#sha256 = sha256;
    }
    return sha256;
  }

  constructor(init: LocalResolvedFileInit) {
    this.name = init.name;
    this.mimeType = init.mimeType;
    this.size = init.size;
    // An own, enumerable property as before, computed on first read when given as a function (one
    // getter shared by every instance: a closure per instance made construction ten times dearer).
    this.#sha256 = init.sha256;
    Object.defineProperty(this, "sha256", LocalResolvedFile.#sha256Property);
    this.path = init.path;
    this.source = init.source;
    this.#owned = init.owned;
    this.#onDispose = init.onDispose;
  }

  bytes(): Promise<Buffer> {
    return readFile(this.path);
  }

  stream(): Readable {
    return createReadStream(this.path);
  }

  dispose(): Promise<void> {
    this.#disposing ??= (async () => {
      // The one file resolve() created (unlink), then the call's folder: kept for the scope's later
      // calls when empty, else removed with what the tool left in it.
      const owned = this.#owned;
      if (owned) await releaseCallFile(owned.tmpDir, owned.scope, owned.folder, this.path);
      this.#onDispose?.();
    })();
    return this.#disposing;
  }

  [asyncDispose](): Promise<void> {
    return this.dispose();
  }
}
