import { FileBridgeError } from "../errors/file-bridge-error.js";
import { type HostInput, isMcpHost, type McpHost } from "./host.js";
import { isV1LowLevelServer, isV1McpServer, v1Host } from "./v1/host.js";

/**
 * The host port of a server: an SDK v1 `McpServer` or low-level `Server` gets its v1 adapter (one per
 * server, so pieces attached to the same server share it); a host port passes through. Every piece
 * that meets MCP calls this on what it was given, so it accepts any of them.
 *
 * @throws FileBridgeError `INVALID_INPUT` for anything else.
 * @example
 * ```ts
 * const host = toHost(new McpServer({ name: "files", version: "1.0.0" }));
 * registry.attach(host); // the same as registry.attach(server)
 * ```
 */
export function toHost(target: HostInput, caller = "attach()"): McpHost {
  if (isMcpHost(target)) return target;
  // An SDK v2 adapter is detected here, before v1 (docs/architecture.md, "Adapters").
  if (isV1McpServer(target) || isV1LowLevelServer(target)) return v1Host(target);
  throw new FileBridgeError(
    "INVALID_INPUT",
    `${caller} needs an McpServer, a low-level Server or a host port`,
  );
}
