import type { Duration } from "../internal/duration.js";
import type { ScopeRefs } from "../scope/scope-refs.js";

/**
 * The part of a `SignedUrlMinter` the resolver uses to mint upload tickets.
 *
 * @example
 * ```ts
 * const minter: UploadTicketMinter = new SignedUrlMinter({ secret, baseUrl: "https://files.example.com", state });
 * const uploads = new UploadHandleResolver({ store, minter, state });
 * ```
 */
export interface UploadTicketMinter {
  /**
   * How scopes become opaque references in URIs and handles (`SignedUrlMinter` has one, keyed by
   * its secret). Without it, the unkeyed reference.
   */
  readonly scopeRefs?: ScopeRefs;
  mint(options: {
    scope: string;
    fileId: string;
    action: "upload";
    ttl?: Duration;
    singleUse?: boolean;
    claims?: Record<string, string | number | boolean>;
  }): Promise<{ url: string; token: string; expiresAt: number }>;
}
