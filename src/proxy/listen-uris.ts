/**
 * Which `resourceSubscriptions` of a 2026-07-28 `subscriptions/listen` request the proxy honours
 * (issue 21 part 4): `resources/updated` must not tell a caller that another user stored a file.
 */
import type { ResourceRegistry } from "../registry/resource-registry.js";
import type { SignedUrlMinter } from "../signing/signed-url-minter.js";
import type { ProxyAuthInfo } from "./http-host.js";
import type { ProxyCore } from "./proxy-core.js";

/**
 * The URIs of a `subscriptions/listen` request a caller may hear `resources/updated` for: upstream
 * URIs (not the proxy's own), and the proxy's own files' URIs of the caller's scope. A caller
 * without a scope hears about none of the proxy's files.
 */
export function ownListenUris(
  uris: readonly string[],
  authInfo: ProxyAuthInfo | undefined,
  core: ProxyCore,
  registry: ResourceRegistry,
  minter: SignedUrlMinter,
): string[] {
  let scope: string | undefined;
  try {
    scope = core.scopeOf({
      extra: { ...(authInfo ? { authInfo } : {}), transport: "http", requestInfo: { headers: {} } },
      signal: new AbortController().signal,
    });
  } catch {
    scope = undefined;
  }
  return uris.filter((uri) => {
    const parsed = registry.parseUri(uri);
    if (!parsed) return true;
    if (scope === undefined) return false;
    if (parsed.scope !== undefined) return parsed.scope === scope;
    if (parsed.scopeRef !== undefined) return minter.scopeRefs.matches(parsed.scopeRef, scope);
    return true;
  });
}
