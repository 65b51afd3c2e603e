import { FileBridgeError } from "../errors/file-bridge-error.js";
import { type HostInput, isMcpHost, type McpHost } from "./host.js";
import { isV1LowLevelServer, isV1McpServer, v1Host } from "./v1/host.js";
import { isV2LowLevelServer, isV2McpServer, v2Host } from "./v2/host.js";

/**
 * The host port of a server: an SDK v2 (`@modelcontextprotocol/server` 2.x) `McpServer` or low-level
 * `Server` gets the v2 adapter, an SDK v1 (`@modelcontextprotocol/sdk` 1.x) one the v1 adapter (one
 * per server, so pieces attached to the same server share it); a host port passes through. The two
 * generations have the same method names; v2's `Server` also has `getNegotiatedProtocolVersion()`,
 * which v1's lacks, so v2 is checked first. Every piece
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
  if (isV2McpServer(target) || isV2LowLevelServer(target)) return v2Host(target);
  if (isV1McpServer(target) || isV1LowLevelServer(target)) return v1Host(target);
  throw new FileBridgeError(
    "INVALID_INPUT",
    `${caller} needs an McpServer, a low-level Server or a host port`,
  );
}
