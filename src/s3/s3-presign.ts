import { GetObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { formatContentDisposition } from "../internal/content-disposition.js";
import type { StoredFile } from "../storage/types.js";

/**
 * A presigned GET for a data object that downloads under the file's own name and type.
 * `@aws-sdk/s3-request-presigner` is loaded only here, so it is needed only with `presign` on.
 */
export async function presignDownload(
  client: S3Client,
  bucket: string,
  key: string,
  file: StoredFile,
  expiresInSeconds: number,
  inline: boolean,
): Promise<string> {
  const { getSignedUrl } = await import("@aws-sdk/s3-request-presigner");
  const command = new GetObjectCommand({
    Bucket: bucket,
    Key: key,
    ResponseContentType: file.mimeType,
    ResponseContentDisposition: formatContentDisposition(inline ? "inline" : "attachment", file.name),
  });
  return getSignedUrl(client, command, { expiresIn: Math.max(1, Math.floor(expiresInSeconds)) });
}
