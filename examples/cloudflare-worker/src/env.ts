import type { DurableObjectNamespaceBinding, R2BucketBinding } from "mcp-file-bridge/cloudflare";

/** The Worker's bindings (wrangler.jsonc) and secrets (`.dev.vars` locally, `wrangler secret put` deployed). */
export interface Env {
  /** The R2 bucket files live in. */
  FILES: R2BucketBinding;
  /** `FileBridgeStateObject`: upload tickets, single-use nonces, upload handles, tus records. */
  STATE: DurableObjectNamespaceBinding;
  /** `FilesAgent`: one McpAgent per MCP session. */
  MCP_OBJECT: DurableObjectNamespace;
  /** HMAC secret of signed upload and download URLs (at least 32 bytes). */
  SIGNING_SECRET: string;
  /** Key of the scope folders' names in the bucket (optional: the store makes one if absent). */
  SCOPE_KEY_SECRET?: string;
  /** Who may call: `token=user` pairs separated by commas, e.g. `"s3cr3t-a=alice,s3cr3t-b=bob"`. */
  USER_TOKENS: string;
  /** The Worker's public origin, e.g. `https://files.example.com`: the base of signed URLs. @default the request's origin */
  PUBLIC_URL?: string;
}

/** What the Worker verified about the caller, handed to the session's agent as its props. */
export interface Props extends Record<string, unknown> {
  /** The verified user: the scope of every file, ticket and handle of the session. */
  userId: string;
  /** Origin signed URLs are built on. */
  origin: string;
}
