/**
 * The MCP wire shapes the pieces produce, written down structurally so that no piece (and no public
 * declaration of a piece) needs an SDK's types. They match the 2025-11-25 schema that SDK v1 and
 * SDK v2 both validate against; an SDK's own types are assignable to them and back.
 */

/**
 * Optional annotations of a content block or resource.
 *
 * @example
 * ```ts
 * const annotations: McpAnnotations = { lastModified: new Date().toISOString() };
 * ```
 */
export interface McpAnnotations {
  [key: string]: unknown;
  audience?: ("user" | "assistant")[];
  priority?: number;
  /** ISO 8601. */
  lastModified?: string;
}

/**
 * A `text` content block.
 *
 * @example
 * ```ts
 * const block: TextContent = { type: "text", text: "Done." };
 * ```
 */
export interface TextContent {
  [key: string]: unknown;
  type: "text";
  text: string;
  annotations?: McpAnnotations;
  _meta?: Record<string, unknown>;
}

/**
 * A `resource_link` content block: a URI the client can read with `resources/read`.
 *
 * @example
 * ```ts
 * const link: ResourceLink = { type: "resource_link", uri: "file://uploads/s1/a.txt", name: "a.txt" };
 * ```
 */
export interface ResourceLink {
  [key: string]: unknown;
  type: "resource_link";
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  annotations?: McpAnnotations;
  _meta?: Record<string, unknown>;
}

/**
 * An `image` or `audio` content block (base64 `data`).
 *
 * @example
 * ```ts
 * const image: MediaContent = { type: "image", data: pngBase64, mimeType: "image/png" };
 * ```
 */
export interface MediaContent {
  [key: string]: unknown;
  type: "image" | "audio";
  data: string;
  mimeType: string;
  annotations?: McpAnnotations;
  _meta?: Record<string, unknown>;
}

/**
 * A `resource` content block: a resource's contents embedded in the result.
 *
 * @example
 * ```ts
 * const embedded: EmbeddedResource = { type: "resource", resource: { uri: "mem://a.txt", text: "hi" } };
 * ```
 */
export interface EmbeddedResource {
  [key: string]: unknown;
  type: "resource";
  resource: McpResourceContents;
  annotations?: McpAnnotations;
  _meta?: Record<string, unknown>;
}

/**
 * Any content block of a tool result.
 *
 * @example
 * ```ts
 * const blocks: ContentBlock[] = [{ type: "text", text: "Done." }];
 * ```
 */
export type ContentBlock = TextContent | MediaContent | ResourceLink | EmbeddedResource;

/**
 * The result of a `tools/call`, as a tool handler returns it.
 *
 * @example
 * ```ts
 * const result: CallToolResult = { content: [{ type: "text", text: "Done." }] };
 * ```
 */
export interface CallToolResult {
  [key: string]: unknown;
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/**
 * One entry of `resources/list`.
 *
 * @example
 * ```ts
 * const entry: McpResource = { uri: "file://uploads/q3X0…/a.pdf", name: "a.pdf", mimeType: "application/pdf", size: 1024 };
 * ```
 */
export interface McpResource {
  [key: string]: unknown;
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  annotations?: McpAnnotations;
}

/**
 * One entry of `resources/templates/list`.
 *
 * @example
 * ```ts
 * const template: McpResourceTemplate = { uriTemplate: "file://uploads/{scope}/{+path}", name: "uploads" };
 * ```
 */
export interface McpResourceTemplate {
  [key: string]: unknown;
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

/**
 * The result of `resources/list`.
 *
 * @example
 * ```ts
 * const page: ListResourcesResult = { resources: [], nextCursor: "eyJ…" };
 * ```
 */
export interface ListResourcesResult {
  [key: string]: unknown;
  resources: McpResource[];
  nextCursor?: string;
}

/**
 * The result of `resources/templates/list`.
 *
 * @example
 * ```ts
 * const result: ListResourceTemplatesResult = { resourceTemplates: [] };
 * ```
 */
export interface ListResourceTemplatesResult {
  [key: string]: unknown;
  resourceTemplates: McpResourceTemplate[];
  nextCursor?: string;
}

/**
 * One entry of a `resources/read` result (or an embedded resource): text or base64 `blob`.
 *
 * @example
 * ```ts
 * const contents: McpResourceContents = { uri, mimeType: "text/plain", text: "hello" };
 * ```
 */
export type McpResourceContents =
  | { [key: string]: unknown; uri: string; mimeType?: string; text: string; _meta?: Record<string, unknown> }
  | { [key: string]: unknown; uri: string; mimeType?: string; blob: string; _meta?: Record<string, unknown> };

/**
 * The result of `resources/read`.
 *
 * @example
 * ```ts
 * const result: ReadResourceResult = { contents: [{ uri, mimeType: "image/png", blob: base64 }] };
 * ```
 */
export interface ReadResourceResult {
  [key: string]: unknown;
  contents: McpResourceContents[];
}

/**
 * What `completion/complete` refers to: a prompt or a resource template.
 *
 * @example
 * ```ts
 * const ref: CompletionReference = { type: "ref/resource", uri: "file://uploads/{scope}/{+path}" };
 * ```
 */
export type CompletionReference =
  | { type: "ref/prompt"; name: string }
  | { type: "ref/resource"; uri: string };

/**
 * The params of `completion/complete`.
 *
 * @example
 * ```ts
 * const params: CompleteParams = { ref, argument: { name: "path", value: "rep" } };
 * ```
 */
export interface CompleteParams {
  ref: CompletionReference;
  argument: { name: string; value: string };
  context?: { arguments?: Record<string, string> };
}

/**
 * The result of `completion/complete`.
 *
 * @example
 * ```ts
 * const result: CompleteResult = { completion: { values: ["report.pdf"], hasMore: false } };
 * ```
 */
export interface CompleteResult {
  [key: string]: unknown;
  completion: { values: string[]; total?: number; hasMore?: boolean };
}

/**
 * An empty result (`resources/subscribe`, `resources/unsubscribe`).
 *
 * @example
 * ```ts
 * const ok: EmptyResult = {};
 * ```
 */
export type EmptyResult = Record<string, never>;
