/**
 * The keyed layout of `s3Store`'s object keys (issue 40, item 3): where the secret that keys the
 * scope folders comes from, and the one-shot move of files written under the unkeyed layout.
 *
 * Without an operator's `keySecret`, the store keeps its own: 32 random bytes in the object
 * `<prefix>.scope-key`, created once with `If-None-Match: *` (the first replica to start makes it,
 * the others read it), so every replica and every restart key the folders alike. Whoever can read
 * the bucket can read it, and could read every metadata object (which names its scope) anyway;
 * what it protects against is a holder of one object key (a presigned URL, an upload form).
 */
import { randomBytes } from "node:crypto";
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { copySource } from "./s3-copy-source.js";
import { META_SUFFIX, parseMeta, type S3Keys } from "./s3-keys.js";

/** What the layout needs of its store. */
export interface S3LayoutContext {
  client: S3Client;
  bucket: string;
  keys: S3Keys;
  isMissing(error: unknown): boolean;
  error(action: string, error: unknown): FileBridgeError;
}

/** The smallest secret, bytes. */
export const MIN_KEY_SECRET = 32;

function isPreconditionFailed(error: unknown): boolean {
  const status = (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
  return (error as { name?: string } | null)?.name === "PreconditionFailed" || status === 412;
}

async function readSecret(ctx: S3LayoutContext): Promise<Buffer | null> {
  try {
    const response = await ctx.client.send(
      new GetObjectCommand({ Bucket: ctx.bucket, Key: ctx.keys.secretObject }),
    );
    const text = (await response.Body?.transformToString("utf8")) ?? "";
    const secret = Buffer.from(text.trim(), "base64url");
    if (secret.length < MIN_KEY_SECRET) {
      throw new FileBridgeError(
        "STORAGE_ERROR",
        `s3: ${ctx.keys.secretObject} is not a scope-folder secret (restore it, or set keySecret)`,
      );
    }
    return secret;
  } catch (error) {
    if (ctx.isMissing(error)) return null;
    throw error;
  }
}

/** The bucket's own scope-folder secret: read, or made once (the first replica wins the race). */
export async function bucketSecret(ctx: S3LayoutContext): Promise<Buffer> {
  try {
    const existing = await readSecret(ctx);
    if (existing) return existing;
    try {
      await ctx.client.send(
        new PutObjectCommand({
          Bucket: ctx.bucket,
          Key: ctx.keys.secretObject,
          Body: randomBytes(MIN_KEY_SECRET).toString("base64url"),
          ContentType: "text/plain",
          IfNoneMatch: "*",
        }),
      );
    } catch (error) {
      if (!isPreconditionFailed(error)) throw error;
    }
    // Read back what is there: ours, or the secret of the replica that made it first.
    const made = await readSecret(ctx);
    if (!made) throw new FileBridgeError("STORAGE_ERROR", "s3: the scope-folder secret vanished");
    return made;
  } catch (error) {
    throw ctx.error("load the scope-folder secret", error);
  }
}

/**
 * Moves every file of the unkeyed layout (`<prefix><sha256(scope)[0..32]>/<id>` and its `.json`)
 * to its keyed folder: bytes copied first, then the metadata written (the file is whole in its new
 * place), then the old metadata and bytes removed. Safe to run while the store serves (it reads
 * both layouts meanwhile) and again (what was moved is gone from the old layout). Unfinished
 * staging objects of the old layout are left to `sweep()`.
 */
export async function migrateLegacyKeys(ctx: S3LayoutContext): Promise<{ moved: number }> {
  const { client, bucket, keys } = ctx;
  let moved = 0;
  let token: string | undefined;
  try {
    do {
      const page = await client.send(
        new ListObjectsV2Command({
          Bucket: bucket,
          Prefix: keys.prefix,
          MaxKeys: 1000,
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      for (const object of page.Contents ?? []) {
        const key = object.Key ?? "";
        if (!keys.isLegacyMeta(key)) continue;
        const id = key.slice(key.lastIndexOf("/") + 1, -META_SUFFIX.length);
        let text: string;
        try {
          const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
          text = (await response.Body?.transformToString("utf8")) ?? "";
        } catch (error) {
          if (ctx.isMissing(error)) continue; // removed meanwhile
          throw error;
        }
        const file = parseMeta(text, id);
        // Only a record whose folder is its own scope's hash (anything else is not ours to move).
        if (!file || keys.legacyMeta(file.scope, file.id) !== key) continue;
        try {
          await client.send(
            new CopyObjectCommand({
              Bucket: bucket,
              Key: keys.data(file.scope, file.id),
              CopySource: copySource(bucket, keys.legacyData(file.scope, file.id)),
            }),
          );
        } catch (error) {
          if (ctx.isMissing(error) || (error as { name?: string }).name === "NoSuchKey") continue;
          throw error;
        }
        await client.send(
          new PutObjectCommand({
            Bucket: bucket,
            Key: keys.meta(file.scope, file.id),
            Body: text,
            ContentType: "application/json",
          }),
        );
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
        await client.send(
          new DeleteObjectCommand({ Bucket: bucket, Key: keys.legacyData(file.scope, file.id) }),
        );
        moved++;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  } catch (error) {
    throw ctx.error("migrate the key layout", error);
  }
  return { moved };
}
