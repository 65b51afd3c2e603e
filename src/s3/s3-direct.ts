/**
 * Direct uploads of `s3Store`: a presigned `PUT` of a staging object
 * (`<prefix><scope hash>/staging/<id>`: never a file id, so never readable as a file), and the
 * commit that verifies it and moves it into the store's place. The commit reads the object once
 * through the put pipeline's meter (size cap, declared size, sha-256; S3-compatible servers differ
 * in which checksums they keep, Ceph radosgw 16 keeps none), then copies it server-side to a fresh
 * id on the condition that it is still the object that was read (`x-amz-copy-source-if-match`), so
 * a `PUT` racing the commit cannot swap the bytes. Whatever happens, the staging object goes.
 */
import { type Readable, Writable } from "node:stream";
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
  type Tag,
} from "@aws-sdk/client-s3";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { isId } from "../internal/ids.js";
import { assertScope } from "../scope/scope.js";
import { streamPut } from "../storage/kit/put-pipeline.js";
import { planPut, storedFileOf } from "../storage/kit/put-plan.js";
import type { DirectUploads, PresignPutOptions, PutOptions, StoredFile } from "../storage/types.js";
import type { S3Keys } from "./s3-keys.js";

/** What the direct uploads borrow from their store. */
export interface S3DirectContext {
  client: S3Client;
  bucket: string;
  keys: S3Keys;
  now: () => number;
  /** Writes the metadata (and catalog entry) that make a file visible; removes its objects on failure. */
  commit(file: StoredFile): Promise<void>;
  /** The lifecycle tag of a file with this TTL, when the store tags files. */
  tagFor(ttlMs: number | undefined): Promise<Tag | undefined>;
  /** Maps an S3 failure to `STORAGE_ERROR` (a `FileBridgeError` stays as it is). */
  error(action: string, error: unknown): FileBridgeError;
  isMissing(error: unknown): boolean;
}

/** The staging object of an upload: in the scope's folder, under `staging/`, where no file id can be. */
export function stagingKey(keys: S3Keys, scope: string, stagingId: string): string {
  assertScope(scope);
  if (!isId(stagingId)) throw new FileBridgeError("INVALID_INPUT", "stagingId must be an id");
  return `${keys.scopeFolder(scope)}staging/${stagingId}`;
}

/** A sink that drops what it is given (the commit only measures the bytes). */
function discardSink(): Writable {
  return new Writable({
    write(_chunk, _encoding, callback) {
      callback();
    },
  });
}

/** The direct uploads of one `s3Store`. */
export function s3DirectUploads(ctx: S3DirectContext): DirectUploads {
  const { client, bucket, keys } = ctx;

  async function remove(key: string): Promise<void> {
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
  }

  /** Size and ETag of the staged object; `null` when nothing was uploaded. */
  async function headOf(key: string): Promise<{ size: number; etag: string } | null> {
    try {
      const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return { size: head.ContentLength ?? 0, etag: head.ETag ?? "" };
    } catch (error) {
      if (ctx.isMissing(error)) return null;
      throw ctx.error("read the staged upload", error);
    }
  }

  /** Reads the staged object once through the meter; fails with the put pipeline's errors. */
  async function measure(key: string, etag: string, plan: ReturnType<typeof planPut>) {
    const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key, IfMatch: etag }));
    return streamPut(response.Body as Readable, plan, discardSink());
  }

  async function commitStaged(
    key: string,
    head: { size: number; etag: string },
    options: PutOptions,
  ): Promise<StoredFile> {
    const plan = planPut(options, ctx.now());
    if (plan.maxBytes !== undefined && head.size > plan.maxBytes) {
      throw new FileBridgeError("FILE_TOO_LARGE", `the file exceeds the limit of ${plan.maxBytes} bytes`, {
        data: { limit: plan.maxBytes },
      });
    }
    if (plan.expectedSize !== undefined && head.size !== plan.expectedSize) {
      throw new FileBridgeError(
        "DIGEST_MISMATCH",
        `the content has ${head.size} bytes, ${plan.expectedSize} were declared`,
        { data: { expectedSize: plan.expectedSize, size: head.size } },
      );
    }
    const file = storedFileOf(plan, await measure(key, head.etag, plan));
    const dataKey = keys.data(file.scope, file.id);
    const tag = await ctx.tagFor(file.expiresAt === undefined ? undefined : file.expiresAt - file.createdAt);
    try {
      await client.send(
        new CopyObjectCommand({
          Bucket: bucket,
          Key: dataKey,
          CopySource: `${bucket}/${key.split("/").map(encodeURIComponent).join("/")}`,
          CopySourceIfMatch: head.etag,
          MetadataDirective: "REPLACE",
          ContentType: "application/octet-stream",
          ...(tag ? { TaggingDirective: "REPLACE", Tagging: `${tag.Key}=${tag.Value}` } : {}),
        }),
      );
    } catch (error) {
      await remove(dataKey).catch(() => {});
      throw ctx.error("move the staged upload", error);
    }
    await ctx.commit(file);
    return file;
  }

  return {
    async presignPut(options: PresignPutOptions) {
      const key = stagingKey(keys, options.scope, options.stagingId);
      const { getSignedUrl } = await import("@aws-sdk/s3-request-presigner");
      const checksum =
        options.sha256 === undefined ? undefined : Buffer.from(options.sha256, "hex").toString("base64");
      const command = new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        ...(options.size === undefined ? {} : { ContentLength: options.size }),
        ...(options.mimeType === undefined ? {} : { ContentType: options.mimeType }),
        ...(checksum === undefined ? {} : { ChecksumSHA256: checksum }),
      });
      const signed = new Set<string>();
      if (options.size !== undefined) signed.add("content-length");
      if (options.mimeType !== undefined) signed.add("content-type");
      try {
        const url = await getSignedUrl(client, command, {
          expiresIn: Math.max(1, Math.floor(options.expiresIn)),
          ...(options.signingDate === undefined ? {} : { signingDate: options.signingDate }),
          signableHeaders: signed,
          // Signed as a header, not hoisted into the query: the client must send it, and S3 checks it.
          ...(checksum === undefined ? {} : { unhoistableHeaders: new Set(["x-amz-checksum-sha256"]) }),
        });
        const headers: Record<string, string> = {};
        if (options.mimeType !== undefined) headers["content-type"] = options.mimeType;
        if (checksum !== undefined) headers["x-amz-checksum-sha256"] = checksum;
        return { url, headers };
      } catch (error) {
        throw ctx.error("presign an upload", error);
      }
    },

    async commit(scope: string, stagingId: string, options: PutOptions): Promise<StoredFile | null> {
      const key = stagingKey(keys, scope, stagingId);
      if (options?.scope !== scope) throw new FileBridgeError("INVALID_INPUT", "options.scope must be scope");
      const head = await headOf(key);
      if (!head) return null;
      try {
        return await commitStaged(key, head, options);
      } catch (error) {
        throw ctx.error("commit the staged upload", error);
      } finally {
        // Committed (copied) or refused: the staging object goes either way.
        await remove(key).catch(() => {});
      }
    },

    async discard(scope: string, stagingId: string): Promise<boolean> {
      const key = stagingKey(keys, scope, stagingId);
      const head = await headOf(key);
      if (!head) return false;
      try {
        await remove(key);
      } catch (error) {
        throw ctx.error("remove the staged upload", error);
      }
      return true;
    },
  };
}
