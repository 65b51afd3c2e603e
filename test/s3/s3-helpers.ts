import { ListMultipartUploadsCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { requireServices } from "../../scripts/services/test-env.js";
import { SCOPE_KEY_NAME } from "../../src/s3/s3-keys.js";

/** A client on the test radosgw. */
export function testClient(endpoint = requireServices().s3.endpoint): S3Client {
  const { s3 } = requireServices();
  return new S3Client({
    endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
}

/** Connection options of s3Store for the test radosgw. */
export function connection(endpoint = requireServices().s3.endpoint) {
  const { s3 } = requireServices();
  return {
    bucket: s3.bucket,
    endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  };
}

/**
 * Every object key under `prefix`, sorted — but the store's own scope-folder secret
 * (`<prefix>.scope-key`, made once per prefix and kept: it is configuration, not data).
 */
export async function objectKeys(client: S3Client, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({
        Bucket: requireServices().s3.bucket,
        Prefix: prefix,
        ...(token ? { ContinuationToken: token } : {}),
      }),
    );
    for (const object of page.Contents ?? []) {
      if (object.Key !== `${prefix}${SCOPE_KEY_NAME}`) keys.push(object.Key as string);
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys.sort();
}

/** Unfinished multipart uploads under `prefix`. */
export async function pendingUploads(client: S3Client, prefix: string): Promise<string[]> {
  const page = await client.send(
    new ListMultipartUploadsCommand({ Bucket: requireServices().s3.bucket, Prefix: prefix }),
  );
  return (page.Uploads ?? []).map((upload) => upload.Key as string);
}
