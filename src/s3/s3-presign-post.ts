/**
 * A presigned S3 `POST` (browser-based upload, SigV4 POST policy) of one staging object. Unlike a
 * presigned `PUT`, whose signature covers only the headers it lists (Ceph radosgw obeys any other
 * `x-amz-*` header the client adds: `x-amz-copy-source` turns the upload into a server-side copy,
 * `x-amz-acl` makes the object public), a POST cannot copy, and its policy names every form field
 * the request may carry: the key, the ACL (`private`), the content type, the size range; S3 refuses
 * a form with a field the policy does not name. Written here (a few HMACs) rather than pulling in
 * `@aws-sdk/s3-presigned-post`.
 */
import { createHmac } from "node:crypto";
import { HeadBucketCommand, type S3Client } from "@aws-sdk/client-s3";

/** What one presigned POST pins. */
export interface PresignPostOptions {
  bucket: string;
  key: string;
  /** Lifetime of the policy, seconds. */
  expiresIn: number;
  /** Time the policy is signed at. @default now */
  signingDate?: Date;
  /** Smallest and largest body accepted, bytes. */
  minBytes: number;
  maxBytes: number;
  /** The `Content-Type` the object gets (the form field is pinned to it). */
  contentType: string;
  /** Extra fields pinned with their exact value (e.g. `x-amz-checksum-sha256`). */
  fields?: Record<string, string>;
}

/** The URL to POST the form to, and the form fields (the file goes last, as field `file`). */
export interface PresignedPost {
  url: string;
  fields: Record<string, string>;
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac("sha256", key).update(data, "utf8").digest();
}

/** `20260102T030405Z` */
function amzDate(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
}

/** The bucket's POST URL as the client addresses it (path or virtual-hosted style, its endpoint). */
async function bucketUrl(client: S3Client, bucket: string): Promise<string> {
  const { getSignedUrl } = await import("@aws-sdk/s3-request-presigner");
  const signed = new URL(
    await getSignedUrl(client, new HeadBucketCommand({ Bucket: bucket }), { expiresIn: 1 }),
  );
  signed.search = "";
  if (!signed.pathname.endsWith("/")) signed.pathname += "/";
  return signed.href;
}

/**
 * Signs a POST policy with the client's own credentials and region.
 *
 * @example
 * ```ts
 * const { url, fields } = await presignPost(client, { bucket, key, expiresIn: 600, minBytes: 0, maxBytes: 1 << 20, contentType: "text/plain" });
 * const form = new FormData();
 * for (const [name, value] of Object.entries(fields)) form.append(name, value);
 * form.append("file", new Blob([bytes]));
 * await fetch(url, { method: "POST", body: form });
 * ```
 */
export async function presignPost(client: S3Client, options: PresignPostOptions): Promise<PresignedPost> {
  const credentials = await client.config.credentials();
  const region = await client.config.region();
  const date = options.signingDate ?? new Date();
  const stamp = amzDate(date);
  const day = stamp.slice(0, 8);
  const credential = `${credentials.accessKeyId}/${day}/${region}/s3/aws4_request`;
  const fields: Record<string, string> = {
    key: options.key,
    "Content-Type": options.contentType,
    ...options.fields,
    "x-amz-algorithm": "AWS4-HMAC-SHA256",
    "x-amz-credential": credential,
    "x-amz-date": stamp,
    ...(credentials.sessionToken === undefined ? {} : { "x-amz-security-token": credentials.sessionToken }),
  };
  const expiration = new Date(date.getTime() + Math.max(1, Math.floor(options.expiresIn)) * 1000);
  const policy = {
    expiration: expiration.toISOString(),
    conditions: [
      { bucket: options.bucket },
      ...Object.entries(fields).map(([name, value]) => ({ [name]: value })),
      ["content-length-range", options.minBytes, options.maxBytes],
    ],
  };
  const encoded = Buffer.from(JSON.stringify(policy), "utf8").toString("base64");
  const signingKey = hmac(
    hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, day), region), "s3"),
    "aws4_request",
  );
  fields.policy = encoded;
  fields["x-amz-signature"] = createHmac("sha256", signingKey).update(encoded, "utf8").digest("hex");
  return { url: await bucketUrl(client, options.bucket), fields };
}
