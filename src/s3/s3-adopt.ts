/**
 * `s3Store.adopt`: takes over an object of the store's own bucket (a tus upload's completed staging
 * object) by server-side copy into the file's data key — `CopyObject` up to 5 GiB, `UploadPartCopy`
 * parts above, and for the objects of a parallel upload's partial uploads, one after another —
 * with the put pipeline's checks on the size and sha256 the caller measured while the bytes arrived.
 * The copy is complete before the file can become visible (its metadata is written at commit); a
 * failed copy leaves nothing.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectTaggingCommand,
  type S3Client,
  type Tag,
  UploadPartCopyCommand,
} from "@aws-sdk/client-s3";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { checkMeasured } from "../storage/kit/put-meter.js";
import { PUT_HEAD_BYTES, type PutPlan, storedFileOf } from "../storage/kit/put-plan.js";
import type { AdoptObjectPart, AdoptSource, StoredFile } from "../storage/types.js";
import { copySource } from "./s3-copy-source.js";

const MiB = 1024 * 1024;
/** The largest object `CopyObject` copies in one request. */
const COPY_OBJECT_MAX = 5 * 1024 * MiB;
/** Part size of a multipart copy (S3 allows up to 5 GiB a part). */
const COPY_PART = 1024 * MiB;
/** Parts copied at once. */
const COPY_QUEUE = 4;

/** What the adoption needs of its store. */
export interface S3AdoptContext {
  client: S3Client;
  bucket: string;
  /** The store's key of a file's bytes. */
  dataKey(scope: string, id: string): string;
  /** The expiry tag of a file, when the store tags them (bucket lifecycle). */
  tagFor(plan: PutPlan): Promise<Tag | undefined>;
  error(action: string, cause: unknown): FileBridgeError;
  /** Largest object copied with one `CopyObject` (tests lower it). @default 5 GiB */
  copyObjectMax?: number;
  /** Part size of a multipart copy, at least 5 MiB (tests lower it). @default 1 GiB */
  copyPart?: number;
}

/** S3's most parts of one multipart upload. */
const MAX_PARTS = 10_000;
/** S3's smallest part of a multipart upload (all but the last). */
const MIN_PART = 5 * MiB;

/** A byte range of one object, copied as one part (`end` inclusive). */
interface CopyRange {
  key: string;
  start: number;
  end: number;
}

/**
 * The parts that copy `size` bytes of `key`: ranges of `partSize`; a remainder under S3's 5 MiB
 * minimum joins the range before it unless it ends the file (`last`).
 */
function rangesOf(key: string, size: number, partSize: number, last: boolean): CopyRange[] {
  const ranges: CopyRange[] = [];
  for (let start = 0; start < size; start += partSize) {
    ranges.push({ key, start, end: Math.min(size, start + partSize) - 1 });
  }
  const tail = ranges.at(-1);
  const before = ranges.at(-2);
  if (!last && tail && before && tail.end - tail.start + 1 < MIN_PART) {
    ranges.pop();
    before.end = tail.end;
  }
  return ranges;
}

/** Copies `ranges` (in order) into `to` as the parts of one multipart upload, a few at a time. */
async function multipartCopy(
  ctx: S3AdoptContext,
  ranges: CopyRange[],
  to: string,
  tag: Tag | undefined,
): Promise<void> {
  const { client, bucket } = ctx;
  // No `Tagging` here: radosgw (16.2) ignores it on CreateMultipartUpload; the tag is set once complete.
  const created = await client.send(
    new CreateMultipartUploadCommand({ Bucket: bucket, Key: to, ContentType: "application/octet-stream" }),
  );
  const uploadId = created.UploadId as string;
  try {
    const etags: string[] = new Array(ranges.length);
    let next = 0;
    const worker = async () => {
      while (next < ranges.length) {
        const index = next++;
        const { key, start, end } = ranges[index] as CopyRange;
        const copied = await client.send(
          new UploadPartCopyCommand({
            Bucket: bucket,
            Key: to,
            UploadId: uploadId,
            PartNumber: index + 1,
            CopySource: copySource(bucket, key),
            CopySourceRange: `bytes=${start}-${end}`,
          }),
        );
        etags[index] = copied.CopyPartResult?.ETag ?? "";
      }
    };
    await Promise.all(Array.from({ length: Math.min(COPY_QUEUE, ranges.length) }, worker));
    await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: to,
        UploadId: uploadId,
        MultipartUpload: { Parts: etags.map((ETag, index) => ({ PartNumber: index + 1, ETag })) },
      }),
    );
  } catch (error) {
    await client
      .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: to, UploadId: uploadId }))
      .catch(() => undefined);
    throw error;
  }
  // A failure here leaves a complete object without its tag: the caller deletes the key.
  if (tag) {
    await client.send(new PutObjectTaggingCommand({ Bucket: bucket, Key: to, Tagging: { TagSet: [tag] } }));
  }
}

/** The first bytes of an object, for media-type sniffing. */
async function headBytes(ctx: S3AdoptContext, key: string, size: number): Promise<Uint8Array> {
  if (size === 0) return new Uint8Array(0);
  const end = Math.min(size, PUT_HEAD_BYTES) - 1;
  const response = await ctx.client.send(
    new GetObjectCommand({ Bucket: ctx.bucket, Key: key, Range: `bytes=0-${end}` }),
  );
  return (await response.Body?.transformToByteArray()) ?? new Uint8Array(0);
}

/**
 * The objects of `source` in order (`object`, or `objects`), or `null` when this store cannot copy
 * them: another client or bucket, none at all, or a part but the last under S3's 5 MiB minimum.
 */
function sourceObjects(ctx: S3AdoptContext, source: AdoptSource): readonly AdoptObjectPart[] | null {
  const parts = source.objects ?? (source.object ? [{ object: source.object, size: source.size }] : []);
  if (parts.length === 0) return null;
  for (const [index, { object, size }] of parts.entries()) {
    if (object.client !== ctx.client || object.bucket !== ctx.bucket) return null;
    if (index < parts.length - 1 && size < MIN_PART) return null;
  }
  return parts;
}

/**
 * Copies an adoptable object (or the objects that make the file, in order) into the file's data
 * key, after the size cap, declared size and sha256 checks on the measured figures, and a check
 * that each object has the size it was measured at. Resolves the file it will be once committed,
 * or `null` when the source is not objects this store can copy (see {@link sourceObjects}) or the
 * copy would take more than S3's 10,000 parts.
 */
export async function adoptObject(
  ctx: S3AdoptContext,
  source: AdoptSource,
  plan: PutPlan,
): Promise<StoredFile | null> {
  const parts = sourceObjects(ctx, source);
  if (!parts) return null;
  if (parts.reduce((sum, part) => sum + part.size, 0) !== source.size) {
    throw new FileBridgeError("INVALID_INPUT", "the adopted objects do not add up to the size measured");
  }
  const only = parts.length === 1 ? (parts[0] as AdoptObjectPart) : undefined;
  const partSize = ctx.copyPart ?? COPY_PART;
  const ranges =
    only && source.size <= (ctx.copyObjectMax ?? COPY_OBJECT_MAX)
      ? undefined
      : parts.flatMap(({ object, size }, index) =>
          rangesOf(object.key, size, partSize, index === parts.length - 1),
        );
  // More parts than S3 takes in one multipart upload: not this store's to copy (stream it).
  if (ranges && ranges.length > MAX_PARTS) return null;
  checkMeasured(plan, source.size, source.sha256);
  const { client, bucket } = ctx;
  const to = ctx.dataKey(plan.scope, plan.id);
  let head: Uint8Array;
  try {
    await Promise.all(
      parts.map(async ({ object, size }) => {
        const info = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: object.key }));
        if (info.ContentLength !== size) {
          throw new FileBridgeError(
            "INVALID_INPUT",
            "the adopted object does not have the size it was measured at",
          );
        }
      }),
    );
    const first = parts.find((part) => part.size > 0) ?? (parts[0] as AdoptObjectPart);
    head = await headBytes(ctx, first.object.key, first.size);
  } catch (error) {
    throw ctx.error("read the adopted object", error);
  }
  const tag = await ctx.tagFor(plan);
  try {
    if (!ranges) {
      await client.send(
        new CopyObjectCommand({
          Bucket: bucket,
          Key: to,
          CopySource: copySource(bucket, (only as AdoptObjectPart).object.key),
          MetadataDirective: "REPLACE",
          ContentType: "application/octet-stream",
          ...(tag ? { TaggingDirective: "REPLACE", Tagging: `${tag.Key}=${tag.Value}` } : {}),
        }),
      );
    } else {
      await multipartCopy(ctx, ranges, to, tag);
    }
  } catch (error) {
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: to })).catch(() => undefined);
    throw ctx.error("copy the adopted object", error);
  }
  return storedFileOf(plan, { size: source.size, sha256: source.sha256, head });
}
