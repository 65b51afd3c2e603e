import { createFileRoutes, type FileRoutes, SignedUrlMinter } from "mcp-file-bridge";
import { durableObjectState, r2Store } from "mcp-file-bridge/cloudflare";
import type { Env } from "./env.js";

/** The largest file one upload may carry: under the plan's request body cap (100 MB on Free). */
export const MAX_FILE_BYTES = 64 * 1024 * 1024;

/** The pieces every request of an isolate shares, built on first use (workerd forbids random values at module scope). */
export interface Pieces {
  store: ReturnType<typeof r2Store>;
  state: ReturnType<typeof durableObjectState>;
  minter: SignedUrlMinter;
  routes: FileRoutes;
}

const built = new Map<string, Pieces>();
/**
 * Most origins one isolate keeps pieces for. Without `PUBLIC_URL` the origin comes from the request,
 * and behind a wildcard route any host name reaches the Worker: the oldest set is dropped past this.
 */
const MAX_ORIGINS = 8;

/**
 * The store (R2), the state (Durable Object), the minter and the file routes for one origin (the
 * base of signed URLs). One set per isolate and origin.
 */
export function piecesFor(env: Env, origin: string): Pieces {
  const known = built.get(origin);
  if (known) return known;
  const store = r2Store({
    bucket: env.FILES,
    ...(env.SCOPE_KEY_SECRET ? { keySecret: env.SCOPE_KEY_SECRET } : {}),
  });
  const state = durableObjectState({ namespace: env.STATE });
  const minter = new SignedUrlMinter({ secret: env.SIGNING_SECRET, baseUrl: origin, state });
  // Single-request uploads (form POST, raw PUT), tus, and ranged downloads; tus bytes are staged
  // in R2 by the store itself, so an upload resumes in any isolate (see docs/runtimes.md).
  const routes = createFileRoutes({
    store,
    minter,
    state,
    maxBytes: MAX_FILE_BYTES,
    // Server-side failures: the client gets a plain 500, the cause goes to the Worker's logs.
    onError: (error) => console.error("mcp-file-bridge route failed:", error),
  });
  const pieces = { store, state, minter, routes };
  if (built.size >= MAX_ORIGINS) built.delete(built.keys().next().value as string);
  built.set(origin, pieces);
  return pieces;
}

/** Where signed URLs point: the configured public origin, else the request's. */
export function originOf(request: Request, env: Env): string {
  return env.PUBLIC_URL ? env.PUBLIC_URL.replace(/\/+$/, "") : new URL(request.url).origin;
}
