/**
 * Direct uploads of `s3Store`: a presigned `POST` of a staging object
 * (`<prefix><scope folder>/staging/<id>`: never a file id, so never readable as a file), and the
 * commit that verifies it and moves it into the store's place.
 *
 * Why a POST and not a presigned `PUT`: a PUT's signature covers only the headers it lists, and Ceph
 * radosgw obeys every other `x-amz-*` header the client adds — `x-amz-copy-source` makes the upload
 * a server-side copy of any object the server's credentials can read, `x-amz-acl: public-read`
 * makes it public, `x-amz-meta-*` is stored. A POST cannot copy, S3 (and radosgw, tested) refuses a
 * form field its policy does not name, and the policy pins the key, the content type and the size
 * range, and names no ACL or metadata field (`s3-presign-post.ts`). The commit still checks what it takes: a staged object
 * carrying user metadata or an ACL grant beyond its owner's is refused (a store that does not
 * enforce POST policies).
 *
 * The commit copies first and verifies the copy: `CopyObject` into the file's fresh data key (which
 * no descriptor can write), then reads that copy once through the put pipeline's meter (size cap,
 * declared size, sha-256). So the bytes placed are the bytes hashed even on a store that ignores
 * copy preconditions (radosgw ignores `x-amz-copy-source-if-match`): an upload racing the commit
 * lands in the staging object, never in the file. Whatever happens, the staging object goes.
 */
import { type Readable, Writable } from "node:stream";
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectAclCommand,
  type GetObjectAclCommandOutput,
  GetObjectCommand,
  HeadObjectCommand,
  type S3Client,
  type Tag,
} from "@aws-sdk/client-s3";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { isId } from "../internal/ids.js";
import { assertScope } from "../scope/scope.js";
import { streamPut } from "../storage/kit/put-pipeline.js";
import { planPut, storedFileOf } from "../storage/kit/put-plan.js";
import type {
  DirectUploads,
  PresignedUpload,
  PresignUploadOptions,
  PutOptions,
  StoredFile,
} from "../storage/types.js";
import { copySource } from "./s3-copy-source.js";
import type { S3Keys } from "./s3-keys.js";
import { presignPost } from "./s3-presign-post.js";

/** The largest object one POST uploads (S3's limit). */
const MAX_POST_BYTES = 5 * 1024 * 1024 * 1024;
/** The form field that carries the file. */
const FILE_FIELD = "file";

/** What the direct uploads borrow from their store. */
export interface S3DirectContext {
  client: S3Client;
  bucket: string;
  keys: S3Keys;
  /** Resolves once `keys` can name scope folders (the store's secret is loaded). */
  ready(): Promise<void>;
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

/** What the commit refuses a staged object for: anything the server did not set. */
function untrusted(reason: string): FileBridgeError {
  return new FileBridgeError(
    "INVALID_INPUT",
    `the staged upload carries ${reason} the server did not set: refused`,
    { data: { reason: "untrustedStagedObject" } },
  );
}

/** The direct uploads of one `s3Store`. */
export function s3DirectUploads(ctx: S3DirectContext): DirectUploads {
  const { client, bucket, keys } = ctx;

  async function remove(key: string): Promise<void> {
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
  }

  /** Size and user metadata of the staged object; `null` when nothing was uploaded. */
  async function headOf(key: string): Promise<{ size: number; metadata: Record<string, string> } | null> {
    try {
      const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return { size: head.ContentLength ?? 0, metadata: head.Metadata ?? {} };
    } catch (error) {
      if (ctx.isMissing(error)) return null;
      throw ctx.error("read the staged upload", error);
    }
  }

  /** Refuses an object whose ACL grants anything to anyone but its owner (no ACLs at all: fine). */
  async function checkAcl(key: string): Promise<void> {
    let acl: GetObjectAclCommandOutput;
    try {
      acl = await client.send(new GetObjectAclCommand({ Bucket: bucket, Key: key }));
    } catch (error) {
      const name = (error as { name?: string } | null)?.name;
      if (name === "NotImplemented") return; // a store without ACLs (R2): nothing can be granted
      throw ctx.error("read the staged upload's ACL", error);
    }
    const owner = acl.Owner?.ID;
    for (const grant of acl.Grants ?? []) {
      if (grant.Grantee?.Type !== "CanonicalUser" || grant.Grantee.ID !== owner)
        throw untrusted("an ACL grant");
    }
  }

  /** Reads the placed copy once through the meter; fails with the put pipeline's errors. */
  async function measure(key: string, plan: ReturnType<typeof planPut>) {
    const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return streamPut(response.Body as Readable, plan, discardSink());
  }

  async function commitStaged(
    key: string,
    head: { size: number; metadata: Record<string, string> },
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
    if (Object.keys(head.metadata).length > 0) throw untrusted("user metadata");
    await checkAcl(key);
    const dataKey = keys.data(plan.scope, plan.id);
    const tag = await ctx.tagFor(plan.expiresAt === undefined ? undefined : plan.expiresAt - plan.createdAt);
    let file: StoredFile;
    try {
      // Copy first, then verify the copy: the file's key is ours alone, so what was hashed stays.
      await client.send(
        new CopyObjectCommand({
          Bucket: bucket,
          Key: dataKey,
          CopySource: copySource(bucket, key),
          MetadataDirective: "REPLACE",
          ContentType: "application/octet-stream",
          ...(tag ? { TaggingDirective: "REPLACE", Tagging: `${tag.Key}=${tag.Value}` } : {}),
        }),
      );
      file = storedFileOf(plan, await measure(dataKey, plan));
    } catch (error) {
      await remove(dataKey).catch(() => {});
      throw ctx.error("move the staged upload", error);
    }
    await ctx.commit(file);
    return file;
  }

  return {
    async presignUpload(options: PresignUploadOptions): Promise<PresignedUpload> {
      await ctx.ready();
      const key = stagingKey(keys, options.scope, options.stagingId);
      const maxBytes = options.size ?? Math.min(options.maxBytes ?? MAX_POST_BYTES, MAX_POST_BYTES);
      try {
        const { url, fields } = await presignPost(client, {
          bucket,
          key,
          expiresIn: options.expiresIn,
          ...(options.signingDate === undefined ? {} : { signingDate: options.signingDate }),
          minBytes: options.size ?? 0,
          maxBytes,
          contentType: options.mimeType ?? "application/octet-stream",
        });
        return { method: "POST", url, fields, fileField: FILE_FIELD };
      } catch (error) {
        throw ctx.error("presign an upload", error);
      }
    },
    async commit(scope: string, stagingId: string, options: PutOptions): Promise<StoredFile | null> {
      await ctx.ready();
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
      await ctx.ready();
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
