import * as z from "zod/v4";

/**
 * The request schemas the v1 adapter mounts handlers with. SDK v1's `setRequestHandler` takes a zod
 * object schema whose `method` is a literal and accepts zod v4 schemas from any zod instance, so
 * these are built with the package's own zod instead of imported from the SDK at run time: the
 * package loads without `@modelcontextprotocol/sdk` installed. Objects are loose, as the SDK's own
 * schemas are, so `_meta` and future fields pass through. Built on first use (when a server is
 * attached), not when the package is imported.
 */

/**
 * The method our resource-template completions are dispatched under (see `v1/host.ts`): a request
 * for `completion/complete` that one of our providers handles is renamed to it on arrival, so the
 * server's own `completion/complete` handler (an `McpServer`'s prompts) stays untouched.
 */
export const PRIVATE_COMPLETE_METHOD = "mcp-file-bridge/complete";

let built: ReturnType<typeof buildSchemas> | undefined;

/** The schemas, built once. */
export function v1Schemas(): ReturnType<typeof buildSchemas> {
  built ??= buildSchemas();
  return built;
}

function buildSchemas() {
  const meta = { _meta: z.optional(z.record(z.string(), z.unknown())) };
  const paginated = z.optional(z.looseObject({ cursor: z.optional(z.string()), ...meta }));
  const byUri = z.looseObject({ uri: z.string(), ...meta });

  const ListResourcesRequestSchema = z.looseObject({
    method: z.literal("resources/list"),
    params: paginated,
  });

  const ListResourceTemplatesRequestSchema = z.looseObject({
    method: z.literal("resources/templates/list"),
    params: paginated,
  });

  const ReadResourceRequestSchema = z.looseObject({
    method: z.literal("resources/read"),
    params: byUri,
  });

  const SubscribeRequestSchema = z.looseObject({
    method: z.literal("resources/subscribe"),
    params: byUri,
  });

  const UnsubscribeRequestSchema = z.looseObject({
    method: z.literal("resources/unsubscribe"),
    params: byUri,
  });

  const filesParams = z.optional(z.looseObject({ ...meta }));
  const filesRequest = <M extends string>(method: M) =>
    z.looseObject({ method: z.literal(method), params: filesParams });

  /** The `files/*` requests of the files extension: loose params, checked by the piece that serves them. */
  const FilesRequestSchemas = {
    "files/authorizeUpload": filesRequest("files/authorizeUpload"),
    "files/authorizeDownload": filesRequest("files/authorizeDownload"),
    "files/prepareUpload": filesRequest("files/prepareUpload"),
    "files/completeUpload": filesRequest("files/completeUpload"),
    "files/getDownload": filesRequest("files/getDownload"),
  } as const;

  /** The params schema SDK v2 validates a `files/*` request with (custom methods take one). */
  const FilesParamsSchema = z.looseObject({ ...meta });

  const CompletionReferenceSchema = z.union([
    z.looseObject({ type: z.literal("ref/prompt"), name: z.string() }),
    z.looseObject({ type: z.literal("ref/resource"), uri: z.string() }),
  ]);

  const completeParams = z.looseObject({
    ref: CompletionReferenceSchema,
    argument: z.looseObject({ name: z.string(), value: z.string() }),
    context: z.optional(z.looseObject({ arguments: z.optional(z.record(z.string(), z.string())) })),
    ...meta,
  });

  const PrivateCompleteRequestSchema = z.looseObject({
    method: z.literal(PRIVATE_COMPLETE_METHOD),
    params: completeParams,
  });

  /** The result of `elicitation/create` (`content` only comes with form mode). */
  const ElicitResultSchema = z.looseObject({
    action: z.enum(["accept", "decline", "cancel"]),
    content: z.optional(z.record(z.string(), z.unknown())),
    ...meta,
  });

  return {
    ListResourcesRequestSchema,
    ListResourceTemplatesRequestSchema,
    ReadResourceRequestSchema,
    SubscribeRequestSchema,
    UnsubscribeRequestSchema,
    FilesRequestSchemas,
    FilesParamsSchema,
    CompletionReferenceSchema,
    PrivateCompleteRequestSchema,
    ElicitResultSchema,
  };
}
