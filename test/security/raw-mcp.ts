/**
 * Raw HTTP on the MCP endpoint, for the tests that must send what an SDK client would not: 2025-era
 * sessions opened and used by hand (with any token, or none), and the JSON-RPC messages of a reply.
 */

/** The 2025 protocol version the raw sessions speak. */
export const LEGACY = "2025-06-18";

/** The headers of a JSON-RPC POST (a reply may be JSON or an event stream). */
export const JSON_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

/** A 2025-era `initialize` request body. */
export const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

const bearer = (token?: string): Record<string, string> =>
  token ? { authorization: `Bearer ${token}` } : {};

/** The JSON-RPC messages of a response (JSON or SSE). */
export async function messages(response: Response): Promise<Array<Record<string, unknown>>> {
  const text = await response.text();
  if (response.headers.get("content-type")?.startsWith("application/json")) return [JSON.parse(text)];
  return text
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => JSON.parse(line.slice(5)));
}

/**
 * Opens a 2025-era session with raw HTTP (with a bearer token when given): `initialize`, which must
 * be answered 200, then `notifications/initialized`; returns the session id.
 */
export async function openSession(mcpUrl: string | URL, token?: string): Promise<string> {
  const response = await fetch(mcpUrl, {
    method: "POST",
    headers: { ...JSON_HEADERS, ...bearer(token) },
    body: INITIALIZE,
  });
  if (response.status !== 200) {
    throw new Error(`initialize was answered ${response.status}: ${await response.text()}`);
  }
  const id = response.headers.get("mcp-session-id") as string;
  await messages(response);
  const done = await fetch(mcpUrl, {
    method: "POST",
    headers: { ...JSON_HEADERS, ...bearer(token), "mcp-session-id": id, "mcp-protocol-version": LEGACY },
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  });
  await done.text();
  return id;
}

/**
 * One request on a 2025-era session (with a bearer token when given): the status, and on a 200 the
 * first JSON-RPC message of the reply.
 */
export async function onSession(
  mcpUrl: string | URL,
  session: string,
  method: string,
  params: Record<string, unknown> = {},
  token?: string,
): Promise<{ status: number; message?: Record<string, unknown> }> {
  const response = await fetch(mcpUrl, {
    method: "POST",
    headers: {
      ...JSON_HEADERS,
      ...bearer(token),
      "mcp-session-id": session,
      "mcp-protocol-version": LEGACY,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 2, method, params }),
  });
  if (response.status !== 200) {
    await response.text();
    return { status: response.status };
  }
  return { status: 200, message: (await messages(response))[0] };
}

/** Ends a 2025-era session with `DELETE`; resolves with the status. */
export async function deleteSession(mcpUrl: string | URL, session: string): Promise<number> {
  const response = await fetch(mcpUrl, {
    method: "DELETE",
    headers: { "mcp-session-id": session, "mcp-protocol-version": LEGACY },
  });
  await response.text();
  return response.status;
}
