/**
 * The metadata objects of one scope, listed in id order from its folders (the keyed one and, while
 * files of the unkeyed layout are read, the legacy one), merged: what `s3Store.list` pages through
 * when it has no catalog.
 */
import { ListObjectsV2Command, type S3Client } from "@aws-sdk/client-s3";
import { isId } from "../internal/ids.js";
import { META_SUFFIX } from "./s3-keys.js";

/** One file's metadata object. */
export interface MetaEntry {
  id: string;
  key: string;
}

/** The metadata objects of one folder with an id after `after`, in id order. */
async function* folderEntries(
  client: S3Client,
  bucket: string,
  folder: string,
  after: string | undefined,
): AsyncGenerator<MetaEntry> {
  let token: string | undefined;
  for (;;) {
    const response = await client.send(
      new ListObjectsV2Command({
        Bucket: bucket,
        Prefix: folder,
        MaxKeys: 1000,
        ...(token ? { ContinuationToken: token } : after ? { StartAfter: folder + after + META_SUFFIX } : {}),
      }),
    );
    for (const object of response.Contents ?? []) {
      const name = (object.Key ?? "").slice(folder.length);
      const id = name.slice(0, -META_SUFFIX.length);
      if (name.endsWith(META_SUFFIX) && isId(id)) yield { id, key: object.Key as string };
    }
    if (!response.IsTruncated || !response.NextContinuationToken) return;
    token = response.NextContinuationToken;
  }
}

/**
 * The metadata objects of `folders`, merged in id order (an id in two folders — a file caught
 * mid-migration — is listed once, from the first folder).
 */
export async function* metaEntries(
  client: S3Client,
  bucket: string,
  folders: readonly string[],
  after: string | undefined,
): AsyncGenerator<MetaEntry> {
  const sources = folders.map((folder) => folderEntries(client, bucket, folder, after));
  const heads = await Promise.all(sources.map((source) => source.next()));
  for (;;) {
    let pick = -1;
    for (const [index, head] of heads.entries()) {
      if (head.done) continue;
      const best = pick < 0 ? undefined : heads[pick];
      if (!best || best.done || head.value.id < best.value.id) pick = index;
    }
    if (pick < 0) return;
    const chosen = heads[pick] as IteratorYieldResult<MetaEntry>;
    yield chosen.value;
    for (const [index, head] of heads.entries()) {
      if (!head.done && head.value.id === chosen.value.id)
        heads[index] = await (sources[index] as AsyncGenerator<MetaEntry>).next();
    }
  }
}
