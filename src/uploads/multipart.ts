/** Staging a `multipart/form-data` upload: every file part streamed into the store as it arrives. */
import type { Readable } from "node:stream";
import type { BusboyFileStream, BusboyInstance } from "@fastify/busboy";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { sanitizeFileName } from "../internal/file-name.js";
import { chooseMediaType } from "../media/media-type.js";
import type { FileStore, StagedFile } from "../storage/types.js";
import { declaredSha256, type StagedPart, type UploadLimits } from "./upload-staging.js";

const MAX_FORM_FIELDS = 64;

/** busboy's factory. */
export type MultipartParser = typeof import("@fastify/busboy").Busboy;

let parser: Promise<MultipartParser> | undefined;

/**
 * Loads busboy on the first multipart upload, so nothing that never parses a form loads it (and a
 * bundle of code that never reaches a form leaves it out). Await it before the body starts to flow.
 */
export function loadMultipartParser(): Promise<MultipartParser> {
  parser ??= import("@fastify/busboy").then((module) => module.Busboy);
  return parser;
}

/**
 * Parses a `multipart/form-data` body with busboy (from {@link loadMultipartParser}) and stages every file part as it streams. On any
 * failure (a cap, a malformed body, a bad digest field) every part staged so far is aborted.
 */
export function stageMultipart(
  Busboy: MultipartParser,
  config: { store: FileStore },
  body: Readable,
  contentType: string,
  limits: UploadLimits,
  controller: Pick<AbortController, "signal" | "abort">,
): Promise<StagedPart[]> {
  let parser: BusboyInstance;
  try {
    parser = Busboy({
      headers: { "content-type": contentType },
      preservePath: false,
      limits: {
        files: limits.maxFiles,
        fields: MAX_FORM_FIELDS,
        parts: limits.maxFiles + MAX_FORM_FIELDS,
        fieldSize: 1024,
        fieldNameSize: 100,
        headerPairs: 64,
      },
    });
  } catch (cause) {
    return Promise.reject(new FileBridgeError("INVALID_REQUEST", "Malformed multipart request", { cause }));
  }

  return new Promise<StagedPart[]>((resolve, reject) => {
    const pending: Array<Promise<StagedFile>> = [];
    const active = new Set<BusboyFileStream>();
    // The n-th `sha256` field is the digest of the n-th file part (busboy emits parts in body order);
    // an empty value means "no digest for this file". Any other count than one per file is refused,
    // so a digest can never silently end up checked against the wrong file, or against none.
    const digests: Array<string | undefined> = [];
    let failure: unknown;
    let parsed = false;

    const settle = async () => {
      const results = await Promise.allSettled(pending);
      const staged = results.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
      const rejected = results.find((result) => result.status === "rejected");
      const error = failure ?? (rejected as PromiseRejectedResult | undefined)?.reason;
      if (error !== undefined) {
        await Promise.allSettled(staged.map((part) => part.abort()));
        reject(error);
        return;
      }
      if (staged.length === 0) {
        reject(new FileBridgeError("INVALID_REQUEST", "The form has no file part"));
        return;
      }
      if (digests.length > 0 && digests.length !== staged.length) {
        await Promise.allSettled(staged.map((part) => part.abort()));
        reject(
          new FileBridgeError(
            "INVALID_REQUEST",
            `Got ${digests.length} sha256 fields for ${staged.length} files: send one per file, in file order (empty to skip one), or none`,
            { data: { files: staged.length, digests: digests.length } },
          ),
        );
        return;
      }
      resolve(staged.map((part, index) => ({ staged: part, sha256: digests[index] })));
    };

    const fail = (error: unknown) => {
      if (failure !== undefined || parsed) return;
      failure = error;
      parsed = true;
      controller.abort(error);
      body.unpipe(parser);
      for (const stream of active) stream.destroy();
      void settle();
    };

    parser.on("file", (_field, stream, filename, _encoding, mimeType) => {
      if (failure !== undefined) {
        stream.resume();
        return;
      }
      active.add(stream);
      stream.on("error", () => {}); // failures surface through the store's promise
      stream.once("close", () => active.delete(stream));
      stream.once("end", () => active.delete(stream));
      const name = sanitizeFileName(filename);
      const staging = config.store.stage(stream, {
        scope: limits.scope,
        name,
        mimeType: chooseMediaType(mimeType, name),
        typeFromBytes: true,
        kind: limits.kind,
        ttl: limits.ttlMs / 1000,
        maxBytes: limits.maxBytes,
        signal: controller.signal,
      });
      staging.catch(fail);
      pending.push(staging);
    });
    parser.on("field", (field, value) => {
      if (field !== "sha256") return;
      try {
        digests.push(value.trim() === "" ? undefined : declaredSha256(value, "sha256"));
      } catch (error) {
        fail(error);
      }
    });
    parser.on("filesLimit", () =>
      fail(
        new FileBridgeError("INVALID_REQUEST", `At most ${limits.maxFiles} files per upload`, {
          data: { maxFiles: limits.maxFiles },
        }),
      ),
    );
    parser.on("partsLimit", () => fail(new FileBridgeError("INVALID_REQUEST", "Too many form parts")));
    parser.on("fieldsLimit", () => fail(new FileBridgeError("INVALID_REQUEST", "Too many form fields")));
    parser.on("error", (cause: unknown) =>
      fail(new FileBridgeError("INVALID_REQUEST", "Malformed multipart request", { cause })),
    );
    parser.on("finish", () => {
      if (parsed) return;
      parsed = true;
      void settle();
    });
    // A timeout (or the client leaving) fails the parse even while no file part is streaming.
    if (controller.signal.aborted) fail(controller.signal.reason);
    else controller.signal.addEventListener("abort", () => fail(controller.signal.reason), { once: true });
    body.on("error", (cause) =>
      fail(new FileBridgeError("ABORTED", "The request body ended early", { cause })),
    );
    body.pipe(parser);
  });
}
