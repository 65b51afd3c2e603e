/**
 * `x-amz-copy-source` of an object: bucket and key, each path segment URL-encoded. Shared by the S3
 * store's adopt (CopyObject, UploadPartCopy) and the S3 tus staging (the tail's UploadPartCopy).
 */
export function copySource(bucket: string, key: string): string {
  return `${bucket}/${key.split("/").map(encodeURIComponent).join("/")}`;
}
