/** The expiry sweep of the S3 tus staging: multipart uploads and tail objects of expired uploads. */
import {
  AbortMultipartUploadCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  type S3Client,
} from "@aws-sdk/client-s3";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import type { StateStore } from "../storage/types.js";

/** What the sweep needs of its staging. */
export interface SweepContext {
  client: S3Client;
  bucket: string;
  prefix: string;
  state: StateStore;
  deleteKey(key: string): Promise<void>;
}

/** The state store key of an upload's staging record. */
export function recordKey(id: string): string {
  return `mcp-file-bridge:tus-s3:${id}`;
}

/** A multipart upload in progress. */
export interface PendingUpload {
  key: string;
  uploadId: string;
}

/** Every multipart upload in progress under `prefix`, all pages. */
export async function multipartUploads(
  client: S3Client,
  bucket: string,
  prefix: string,
): Promise<PendingUpload[]> {
  const uploads: PendingUpload[] = [];
  let keyMarker: string | undefined;
  let uploadMarker: string | undefined;
  for (;;) {
    const page = await client.send(
      new ListMultipartUploadsCommand({
        Bucket: bucket,
        Prefix: prefix,
        ...(keyMarker ? { KeyMarker: keyMarker, UploadIdMarker: uploadMarker } : {}),
      }),
    );
    for (const upload of page.Uploads ?? []) {
      uploads.push({ key: upload.Key as string, uploadId: upload.UploadId as string });
    }
    if (!page.IsTruncated) return uploads;
    keyMarker = page.NextKeyMarker;
    uploadMarker = page.NextUploadIdMarker;
  }
}

/**
 * Aborts the multipart uploads and deletes the objects under the staging prefix whose upload has no
 * record or is past its expiry; resolves with how many uploads it removed.
 */
export async function sweepStaging(ctx: SweepContext, now: number): Promise<number> {
  const { client, bucket, prefix, state, deleteKey } = ctx;
  const idOf = (key: string) => key.slice(prefix.length).split(".")[0] as string;
  const objects: string[] = [];
  const uploads: PendingUpload[] = [];
  try {
    let token: string | undefined;
    do {
      const page = await client.send(
        new ListObjectsV2Command({
          Bucket: bucket,
          Prefix: prefix,
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      for (const object of page.Contents ?? []) objects.push(object.Key as string);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    uploads.push(...(await multipartUploads(client, bucket, prefix)));
    const ids = new Set([...objects, ...uploads.map((upload) => upload.key)].map(idOf));
    let removed = 0;
    for (const id of ids) {
      const record = await state.get<{ expiresAt: number }>(recordKey(id));
      // No record: expired past its grace, removed, or never recorded (a crash): nothing uses it.
      if (record && record.expiresAt > now) continue;
      for (const upload of uploads.filter((each) => idOf(each.key) === id)) {
        await client.send(
          new AbortMultipartUploadCommand({ Bucket: bucket, Key: upload.key, UploadId: upload.uploadId }),
        );
      }
      await Promise.all(objects.filter((key) => idOf(key) === id).map(deleteKey));
      await state.delete(recordKey(id));
      removed++;
    }
    return removed;
  } catch (error) {
    throw error instanceof FileBridgeError
      ? error
      : new FileBridgeError("STORAGE_ERROR", "tus s3 staging: could not sweep", { cause: error });
  }
}
