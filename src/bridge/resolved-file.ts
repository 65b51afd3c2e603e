import { createReadStream } from "node:fs";
import { readFile } from "node:fs/promises";
import type { Readable } from "node:stream";
import { removeDir } from "../internal/temp-dir.js";
import type { FileSource, ResolvedFile } from "./types.js";

/** What a {@link LocalResolvedFile} is made of. */
export interface LocalResolvedFileInit {
  name: string;
  mimeType: string;
  size: number;
  sha256: string;
  path: string;
  source: FileSource;
  /** The per-call temp folder to remove on dispose; absent for local-path inputs (never deleted). */
  tempDir?: string | undefined;
  /** Called once after the temp folder is gone. */
  onDispose?: (() => void) | undefined;
}

const asyncDispose: typeof Symbol.asyncDispose = Symbol.asyncDispose ?? Symbol.for("Symbol.asyncDispose");

/** The one {@link ResolvedFile} implementation: a real local file plus its metadata. */
export class LocalResolvedFile implements ResolvedFile {
  readonly name: string;
  readonly mimeType: string;
  readonly size: number;
  readonly sha256: string;
  readonly path: string;
  readonly source: FileSource;
  readonly #tempDir: string | undefined;
  readonly #onDispose: (() => void) | undefined;
  #disposing: Promise<void> | undefined;

  constructor(init: LocalResolvedFileInit) {
    this.name = init.name;
    this.mimeType = init.mimeType;
    this.size = init.size;
    this.sha256 = init.sha256;
    this.path = init.path;
    this.source = init.source;
    this.#tempDir = init.tempDir;
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
      if (this.#tempDir) await removeDir(this.#tempDir);
      this.#onDispose?.();
    })();
    return this.#disposing;
  }

  [asyncDispose](): Promise<void> {
    return this.dispose();
  }
}
