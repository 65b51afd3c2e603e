/**
 * `s3Store.sweep`'s walk of the bucket: expired files (without a catalog), bytes whose metadata
 * never arrived (an interrupted put, a staged file never committed) once older than `staleAfter`,
 * and multipart uploads left unfinished as long. Files of both key layouts are recognised.
 */
import {
  AbortMultipartUploadCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  type S3Client,
} from "@aws-sdk/client-s3";
import { isId } from "../internal/ids.js";
import { isExpired } from "../storage/kit/list-page.js";
import { META_SUFFIX, parseMeta, type S3Keys } from "./s3-keys.js";

/** What the sweep needs of its store. */
export interface S3SweepContext {
  client: S3Client;
  bucket: string;
  keys: S3Keys;
  staleMs: number;
  /** True when a catalog tracks expiry (metadata objects are then left to it). */
  catalog: boolean;
  getText(key: string): Promise<string | null>;
  deleteKey(key: string): Promise<void>;
  removeObjects(scope: string, id: string): Promise<void>;
}

/** Removes expired files and stale bytes without metadata under the prefix; how many went. */
export async function sweepObjects(ctx: S3SweepContext, at: number): Promise<number> {
  let removed = 0;
  let token: string | undefined;
  do {
    const response = await ctx.client.send(
      new ListObjectsV2Command({
        Bucket: ctx.bucket,
        Prefix: ctx.keys.prefix,
        MaxKeys: 1000,
        ...(token ? { ContinuationToken: token } : {}),
      }),
    );
    const objects = response.Contents ?? [];
    const names = new Set(objects.map((object) => object.Key ?? ""));
    for (const object of objects) {
      const key = object.Key ?? "";
      const slash = key.lastIndexOf("/");
      const name = key.slice(slash + 1);
      if (name.endsWith(META_SUFFIX)) {
        if (ctx.catalog) continue;
        const id = name.slice(0, -META_SUFFIX.length);
        const file = parseMeta((await ctx.getText(key)) ?? "", id);
        const own =
          file &&
          (key === ctx.keys.meta(file.scope, file.id) || key === ctx.keys.legacyMeta(file.scope, file.id));
        if (file && own && isExpired(file, at)) {
          await ctx.removeObjects(file.scope, file.id);
          removed++;
        }
      } else if (isId(name) && !names.has(key + META_SUFFIX)) {
        // Bytes without metadata: an interrupted put (or a staged file never committed).
        // Its metadata may sit on the next listing page: check before removing.
        const old = at - (object.LastModified?.getTime() ?? at) >= ctx.staleMs;
        if (old && (await ctx.getText(key + META_SUFFIX)) === null) {
          await ctx.deleteKey(key);
          removed++;
        }
      }
    }
    token = response.IsTruncated ? response.NextContinuationToken : undefined;
  } while (token);
  return removed;
}

/** Aborts multipart uploads under the prefix started more than `staleMs` ago; how many. */
export async function abortStaleUploads(ctx: S3SweepContext, at: number): Promise<number> {
  let removed = 0;
  let keyMarker: string | undefined;
  let uploadMarker: string | undefined;
  for (;;) {
    const response = await ctx.client.send(
      new ListMultipartUploadsCommand({
        Bucket: ctx.bucket,
        Prefix: ctx.keys.prefix,
        ...(keyMarker ? { KeyMarker: keyMarker, UploadIdMarker: uploadMarker } : {}),
      }),
    );
    for (const pending of response.Uploads ?? []) {
      if (at - (pending.Initiated?.getTime() ?? at) < ctx.staleMs) continue;
      await ctx.client.send(
        new AbortMultipartUploadCommand({ Bucket: ctx.bucket, Key: pending.Key, UploadId: pending.UploadId }),
      );
      removed++;
    }
    if (!response.IsTruncated) break;
    keyMarker = response.NextKeyMarker;
    uploadMarker = response.NextUploadIdMarker;
  }
  return removed;
}
