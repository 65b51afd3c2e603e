/**
 * A client of the files extension revision Claude Code ships (2.1.331/332), written from the rules
 * issue 45 sets down (what that client's shipped code enforces), not from our server code:
 *
 * - capability: on 2026-07-28 the client declares `extensions["io.modelcontextprotocol/files"]:
 *   { upload: {}, download: {} }` in the request `_meta`; it sends files only when the **server's**
 *   entry has an `upload` object and no `revision`;
 * - marking: an argument is a file only when its `x-mcp-file` mark sits on an object
 *   `{id, mimeType, size[, name, digest]}` (following `$ref` / `$defs`); a mark anywhere else
 *   (a string branch, the union around the object) leaves the argument "untaken";
 * - call: each file argument becomes `{id: "file-N", name?, mimeType, size, digest?: {algorithm:
 *   "sha-256", value: <unpadded base64url>}}` (empty MIME → `application/octet-stream`; a zero-byte
 *   file gets no target);
 * - answer: `resultType: "upload_required"`, a string `requestState`, `uploads: [target]`, exactly one
 *   target per file with bytes, each with exactly the members `fileId`, one of `url` / `path`
 *   (≤ 4,096 chars), `method` (`PUT` default, or `POST`), `form?` (POST only), `headers?` (≤ 32),
 *   `credentials` (`"omit"` / `"include"`, required), `expiresAt?` (RFC 3339), `_meta?`; an unknown
 *   member makes the client refuse the target; then the same call again with `params.requestState`;
 *   a state-only `input_required` is retried at most ten times;
 * - downloads: `_meta["io.modelcontextprotocol/files"].downloads[]` with `name`, `mimeType` required,
 *   `size`, `digest` (sha-256 base64url), `url` or `path`, `credentials`, `headers`, `expiresAt`.
 *
 * The MCP side rides on an SDK v2 client pinned to 2026-07-28 (the SDK's own headers and `_meta`
 * envelope); the stock client refuses a `resultType` it does not know, so the raw JSON of each
 * `tools/call` answer is read from the transport's `fetch`, as Claude Code's own patched client does.
 */
import { createHash } from "node:crypto";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

export const FILES_KEY = "io.modelcontextprotocol/files";

/** What the client declares: uploads, and downloads. */
export const REVISION_CLIENT_CAPABILITIES = { extensions: { [FILES_KEY]: { upload: {}, download: {} } } };

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Whether the server's capability entry lets this client send files. */
export function serverTakesFiles(capabilities: Json | undefined): boolean {
  const entry = (capabilities?.extensions as Json | undefined)?.[FILES_KEY];
  return (
    isObject(entry) && isObject(entry.upload) && (entry.revision === undefined || entry.revision === null)
  );
}

const DESCRIPTOR_REQUIRED = ["id", "mimeType", "size"];
const DESCRIPTOR_OPTIONAL = ["name", "digest"];

function deref(node: Json, root: Json): Json | undefined {
  const ref = node.$ref;
  if (typeof ref !== "string") return node;
  const match = /^#\/(\$defs|definitions)\/([^/~%]+)$/.exec(ref);
  const defs = match ? (root[match[1] as string] as Json | undefined) : undefined;
  const target = match ? defs?.[match[2] as string] : undefined;
  return isObject(target) ? target : undefined;
}

function isDescriptorObject(node: Json): boolean {
  const required = node.required;
  return (
    node.type === "object" &&
    Array.isArray(required) &&
    DESCRIPTOR_REQUIRED.every((key) => required.includes(key)) &&
    required.every((key) => DESCRIPTOR_REQUIRED.includes(key) || DESCRIPTOR_OPTIONAL.includes(key))
  );
}

/**
 * How the client reads one argument's schema: `"file"` (a list of files when `list`), `"untaken"`
 * (marked, but not on a descriptor object: left unfilled), or `"unmarked"`.
 */
export function classifyArgument(
  schema: unknown,
  root: Json,
): { kind: "file" | "untaken" | "unmarked"; list: boolean } {
  const marked: Json[] = [];
  let list = false;
  const visit = (value: unknown, depth: number) => {
    if (!isObject(value) || depth > 8) return;
    const node = deref(value, root);
    if (!node) return;
    if ("x-mcp-file" in value || "x-mcp-file" in node) marked.push(node);
    if (node.type === "array") {
      list = true;
      visit(node.items, depth + 1);
    }
    for (const key of ["anyOf", "oneOf"]) {
      const branches = node[key];
      if (Array.isArray(branches)) for (const branch of branches) visit(branch, depth + 1);
    }
  };
  visit(schema, 0);
  if (marked.length === 0) return { kind: "unmarked", list: false };
  return { kind: marked.every(isDescriptorObject) ? "file" : "untaken", list };
}

/**
 * How the client reads a whole tool's input schema: each argument's kind, with the tool-wide rule
 * on top — one marked argument that is not taken (a mark off a descriptor object) and the client
 * takes no file argument of the tool: every marked argument is left unfilled (`"untaken"`).
 */
export function classifyTool(
  inputSchema: Json,
): Record<string, { kind: "file" | "untaken" | "unmarked"; list: boolean }> {
  const properties = (isObject(inputSchema.properties) ? inputSchema.properties : {}) as Json;
  const kinds = Object.fromEntries(
    Object.entries(properties).map(([name, schema]) => [name, classifyArgument(schema, inputSchema)]),
  );
  if (Object.values(kinds).some((each) => each.kind === "untaken")) {
    for (const each of Object.values(kinds)) if (each.kind === "file") each.kind = "untaken";
  }
  return kinds;
}

/** The unpadded base64url sha-256 of `bytes`. */
export const sha256Base64url = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("base64url");

/** The descriptor the client sends for one local file. */
export function descriptorOf(
  id: string,
  file: { bytes: Uint8Array; name?: string; mimeType?: string },
  options: { digest?: boolean } = {},
): Json {
  return {
    id,
    ...(file.name === undefined ? {} : { name: file.name }),
    mimeType:
      file.mimeType === undefined || file.mimeType === "" ? "application/octet-stream" : file.mimeType,
    size: file.bytes.byteLength,
    ...(options.digest === false
      ? {}
      : { digest: { algorithm: "sha-256", value: sha256Base64url(file.bytes) } }),
  };
}

const TARGET_MEMBERS = new Set([
  "fileId",
  "url",
  "path",
  "method",
  "form",
  "headers",
  "credentials",
  "expiresAt",
  "_meta",
]);
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

export interface UploadTarget {
  fileId: string;
  url?: string;
  path?: string;
  method: "PUT" | "POST";
  form?: { fields: Array<{ name: string; value: string }>; fileField: string };
  headers: Record<string, string>;
  credentials: "omit" | "include";
  expiresAt?: string;
}

/**
 * The upload targets of an `upload_required` answer, checked as the client checks them; throws
 * naming the rule a target breaks (the client would refuse it).
 */
export function uploadTargets(
  result: Json,
  fileIds: readonly string[],
): { requestState: string; targets: UploadTarget[] } {
  if (result.resultType !== "upload_required")
    throw new Error(`not upload_required: ${String(result.resultType)}`);
  const { requestState, uploads } = result;
  if (typeof requestState !== "string") throw new Error("request_state");
  if (!Array.isArray(uploads)) throw new Error("uploads");
  const seen = new Map<string, UploadTarget>();
  for (const target of uploads) {
    if (!isObject(target)) throw new Error("target");
    const extra = Object.keys(target).filter((key) => !TARGET_MEMBERS.has(key));
    if (extra.length > 0) throw new Error(`target_member: ${extra.join(", ")}`);
    const { fileId, url, path, credentials, headers, expiresAt, form } = target;
    if (typeof fileId !== "string" || fileId === "") throw new Error("file_id");
    if ((url === undefined) === (path === undefined)) throw new Error("url_or_path");
    const where = url ?? path;
    if (typeof where !== "string" || where === "" || where.length > 4096) throw new Error("url");
    const method = target.method ?? "PUT";
    if (method !== "PUT" && method !== "POST") throw new Error("target_method");
    if (form !== undefined && method !== "POST") throw new Error("form");
    if (credentials !== "omit" && credentials !== "include") throw new Error("credentials");
    if (headers !== undefined && !isObject(headers)) throw new Error("headers");
    const entries = Object.entries(headers ?? {});
    if (
      entries.length > 32 ||
      entries.some(([name, value]) => typeof value !== "string" || name.length > 4096 || value.length > 4096)
    ) {
      throw new Error("headers");
    }
    if (expiresAt !== undefined && (typeof expiresAt !== "string" || !RFC3339.test(expiresAt)))
      throw new Error("expires_at");
    if (!fileIds.includes(fileId)) throw new Error("unknown_file");
    if (seen.has(fileId)) throw new Error("repeated_file");
    seen.set(fileId, {
      fileId,
      ...(url === undefined ? { path: path as string } : { url: url as string }),
      method,
      ...(form === undefined ? {} : { form: form as UploadTarget["form"] }),
      headers: Object.fromEntries(entries) as Record<string, string>,
      credentials,
      ...(expiresAt === undefined ? {} : { expiresAt }),
    });
  }
  const targets = fileIds.map((id) => {
    const target = seen.get(id);
    if (!target) throw new Error("missing_file");
    return target;
  });
  return { requestState, targets };
}

/** Sends a file's bytes as its target says. */
export function sendTo(target: UploadTarget, bytes: Uint8Array, base: URL): Promise<Response> {
  const url = target.url ?? new URL(target.path as string, base).href;
  return fetch(url, {
    method: target.method,
    headers: target.headers,
    body: new Uint8Array(bytes),
    credentials: target.credentials,
  });
}

/** A connected revision client: the SDK v2 client plus the raw answers of its tool calls. */
export interface RevisionClient {
  client: Client;
  serverCapabilities(): Json | undefined;
  /** Every raw answer of the last `call` (the SDK itself retries a state-only `input_required`). */
  rounds: Json[];
  /** `tools/call` (with `requestState` on a retry): the raw JSON-RPC result of its first request. */
  call(name: string, args: Json, requestState?: string): Promise<Json>;
  close(): Promise<void>;
}

/** Connects over Streamable HTTP pinned to 2026-07-28, declaring the revision's capability. */
export async function connectRevisionClient(
  url: URL,
  token: string,
  capabilities: Json = REVISION_CLIENT_CAPABILITIES,
): Promise<RevisionClient> {
  const raw = new Map<string | number, Json>();
  const recording = async (input: string | URL | Request, init?: RequestInit) => {
    const response = await fetch(input, init);
    if (init?.method === "POST" && response.headers.get("content-type")?.startsWith("application/json")) {
      const body = JSON.parse(String(init.body)) as { id?: string | number; method?: string };
      const answer = (await response.clone().json()) as { result?: Json };
      if (body.method === "tools/call" && body.id !== undefined && answer.result)
        raw.set(body.id, answer.result);
    }
    return response;
  };
  const client = new Client({ name: "revision-client", version: "1.0.0" }, {
    capabilities,
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  } as never);
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
      fetch: recording,
    }),
  );
  if (client.getProtocolEra() !== "modern") throw new Error("not 2026-07-28");
  const connected: RevisionClient = {
    client,
    serverCapabilities: () => client.getServerCapabilities() as Json | undefined,
    rounds: [],
    async call(name, args, requestState) {
      const before = new Set(raw.keys());
      try {
        // The SDK retries a state-only `input_required` itself, as Claude Code does (up to ten times).
        await client.callTool({
          name,
          arguments: args,
          ...(requestState === undefined ? {} : { requestState }),
        } as never);
      } catch {
        // The stock client refuses `upload_required`; the raw answer was recorded.
      }
      const ids = [...raw.keys()].filter((key) => !before.has(key));
      if (ids.length === 0) throw new Error(`no tools/call answer was recorded for ${name}`);
      connected.rounds = ids.map((id) => raw.get(id) as Json);
      return raw.get(ids[0] as string | number) as Json;
    },
    close: () => client.close(),
  };
  return connected;
}

/** The error code of a tool error result (`Error <CODE>: …`), or undefined. */
export function errorCode(result: Json): string | undefined {
  if (result.isError !== true) return undefined;
  const text = ((result.content as Array<{ text?: string }> | undefined) ?? [])[0]?.text ?? "";
  return /^Error ([A-Z_]+):/.exec(text)?.[1];
}
