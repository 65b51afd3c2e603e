/** An SDK v1 `Client` connected to a server in the same process, over `InMemoryTransport`. */
import { Client, type ClientOptions } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Implementation } from "@modelcontextprotocol/sdk/types.js";

/** What {@link connectInMemory} needs of a server: SDK v1's `McpServer` and low-level `Server` both fit. */
export interface InMemoryServer {
  connect(transport: Transport): Promise<void>;
  close(): Promise<void>;
}

/** A client connected by {@link connectInMemory}. */
export interface InMemoryConnection {
  /** The connected client (its `initialize` is done). */
  readonly client: Client;
  /** Closes the client, then the server. */
  close(): Promise<void>;
}

/**
 * Connects a new SDK v1 `Client` (made with `clientInfo` and `clientOptions`, such as the
 * capabilities it declares) to `server` over a linked `InMemoryTransport` pair. The test closes it
 * with `close()` (in a `finally` or an `afterEach`). For SDK v2, a custom transport, or a client
 * that needs something set before it connects, connect by hand.
 */
export async function connectInMemory(
  server: InMemoryServer,
  clientInfo: Implementation = { name: "test-client", version: "1.0.0" },
  clientOptions?: ClientOptions,
): Promise<InMemoryConnection> {
  const client = new Client(clientInfo, clientOptions);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return {
    client,
    async close() {
      await client.close();
      await server.close();
    },
  };
}
