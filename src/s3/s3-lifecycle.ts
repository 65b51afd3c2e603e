import {
  GetBucketLifecycleConfigurationCommand,
  type LifecycleRule,
  PutBucketLifecycleConfigurationCommand,
  type S3Client,
  type Tag,
} from "@aws-sdk/client-s3";
import { FileBridgeError } from "../errors/file-bridge-error.js";

/** Tag key carrying a file's TTL, rounded up to one of {@link EXPIRY_DAYS}. */
export const EXPIRY_TAG = "mfb-expire-days";
/** The TTL buckets (in days) that get a lifecycle rule; longer TTLs rely on the sweep alone. */
export const EXPIRY_DAYS = [1, 2, 7, 30, 90, 365] as const;
const RULE_PREFIX = "mcp-file-bridge-";

/** Whether (and how) the rules were applied by this store instance. */
export interface LifecycleState {
  applied: Promise<void> | undefined;
}

/** The tag for a TTL in milliseconds, or `undefined` when it is longer than the last bucket. */
export function expiryTag(ttlMs: number): Tag | undefined {
  const days = Math.max(1, Math.ceil(ttlMs / 86_400_000));
  const bucket = EXPIRY_DAYS.find((candidate) => candidate >= days);
  return bucket === undefined ? undefined : { Key: EXPIRY_TAG, Value: String(bucket) };
}

/** The store's rules for objects under `prefix`. */
export function lifecycleRules(prefix: string): LifecycleRule[] {
  const id = (name: string) => `${RULE_PREFIX}${name}-${prefix}`.slice(0, 255);
  return [
    {
      ID: id("abort-incomplete"),
      Status: "Enabled",
      Filter: { Prefix: prefix },
      AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
    },
    ...EXPIRY_DAYS.map(
      (days): LifecycleRule => ({
        ID: id(`expire-${days}d`),
        Status: "Enabled",
        Filter: { And: { Prefix: prefix, Tags: [{ Key: EXPIRY_TAG, Value: String(days) }] } },
        Expiration: { Days: days },
      }),
    ),
  ];
}

/**
 * Merges the store's rules into the bucket's lifecycle configuration (keeping every other rule), once
 * per store instance. A failure is `STORAGE_ERROR`, and the next put tries again.
 */
export function applyLifecycle(
  client: S3Client,
  bucket: string,
  prefix: string,
  state: LifecycleState,
): Promise<void> {
  if (!state.applied) {
    state.applied = (async () => {
      let existing: LifecycleRule[] = [];
      try {
        existing =
          (await client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }))).Rules ?? [];
      } catch (error) {
        if ((error as { name?: string })?.name !== "NoSuchLifecycleConfiguration") throw error;
      }
      const ours = lifecycleRules(prefix);
      const ids = new Set(ours.map((rule) => rule.ID));
      await client.send(
        new PutBucketLifecycleConfigurationCommand({
          Bucket: bucket,
          LifecycleConfiguration: { Rules: [...existing.filter((rule) => !ids.has(rule.ID)), ...ours] },
        }),
      );
    })().catch((error: unknown) => {
      state.applied = undefined;
      throw new FileBridgeError("STORAGE_ERROR", "s3: could not set the bucket's lifecycle rules", {
        cause: error,
      });
    });
  }
  return state.applied;
}
