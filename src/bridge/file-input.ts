import * as z from "zod/v4";
import { optionCheck } from "../internal/options.js";
import { FILE_CONSTRAINTS, notePublishedConstraints } from "./file-constraints.js";

const check = optionCheck("fileInput");

/**
 * The JSON Schema keyword that marks a file argument (in the style of SEP-2356).
 *
 * @example
 * ```ts
 * const schema = z.toJSONSchema(fileInput({ accept: ["application/pdf"] }));
 * schema[MCP_FILE_KEYWORD]; // { accept: ["application/pdf"] }
 * ```
 */
export const MCP_FILE_KEYWORD = "x-mcp-file";

/**
 * Options of {@link fileInput}.
 *
 * @example
 * ```ts
 * const options: FileInputOptions = { description: "The sheet", accept: ["text/csv"], maxBytes: 5_000_000 };
 * server.registerTool("import_sheet", { inputSchema: { sheet: fileInput(options) } }, handler);
 * ```
 */
export interface FileInputOptions {
  /** What the file is for, shown to the model before the list of accepted forms. @default "A file." */
  description?: string;
  /**
   * Media types the tool expects (e.g. `["application/pdf", "image/*"]`), advertised in the schema
   * (`x-mcp-file.accept`) and enforced by `withFiles` on what the bytes are, before the handler runs
   * (`UNSUPPORTED_MEDIA_TYPE`, reason `mimeTypeNotAccepted`), on a server the bridge is attached to
   * (`bridge.attach(server)` or any piece's `attach`); unattached, the call is refused. @default none
   */
  accept?: string[];
  /**
   * Largest decoded size the tool accepts (bytes), advertised as `x-mcp-file.maxSize` and enforced
   * by `withFiles` like `accept` (`FILE_TOO_LARGE`, reason `maxSizeExceeded`). @default none
   */
  maxBytes?: number;
  /** Mention `file://` URIs and local paths in the description (when the bridge has roots). @default false */
  paths?: boolean;
  /** Mention `https://` URLs in the description (when the bridge fetches them). @default false */
  https?: boolean;
  /**
   * The server serves the MCP files extension (`uploads.attach(server, { files: true })`): the
   * marker says `transferModes: ["inline", "upload"]`, which is how clients of the Codex variant
   * infer that they may upload the file and pass its file URI. @default false (no `transferModes`)
   */
  upload?: boolean;
  /**
   * List this field under the tool's `_meta["openai/fileParams"]` (the OpenAI Apps SDK convention),
   * so hosts that follow it (ChatGPT apps; Codex CLI, even with its files flag off) attach the
   * person's file and hand the tool a `{download_url, file_id, mime_type?, file_name?}` object.
   * The bridge fetches `download_url` only from the origins in its `https.downloadOrigins` option.
   *
   * Nothing is added to the JSON Schema (strict validators see the same schema): put
   * `bridge.fileParamsMeta(inputSchema)` in the tool's `_meta`. The convention names **top-level**
   * fields only, so a field marked here must be a property of the tool's input object itself, or
   * the element of a top-level list (`z.array(fileInput({ fileParams: true }))`, one attachment per
   * element); `fileParamsMeta` refuses anything else (nested objects, unions, lists of objects).
   * @default false
   */
  fileParams?: boolean;
  /**
   * Where the `x-mcp-file` marker goes. `"all"`: on the property, on the files extension draft's
   * `{type: "string", format: "uri"}` branch and on the file-descriptor object branch (what the draft
   * and the Codex variant read). `"object"`: on the file-descriptor object branch only, with no
   * `format: "uri"` branch — the one shape the revision Claude Code ships takes (a marker on the
   * property or on a string branch makes it leave the argument unfilled). See
   * docs/files-extension.md.
   * @default "all"
   */
  marks?: "all" | "object";
}

const alias = (of: string) => z.string().optional().describe(`Same as ${of}`);

/**
 * The object form. Every key the bridge reads is declared (the aliases too), and the object is a
 * plain `z.object`, so the published JSON Schema is strict-validator clean: no
 * `additionalProperties: {}` (which `z.looseObject` emits and schema linters such as Inspector
 * `--strict` flag as an unconstrained schema). Unknown keys are dropped, never read.
 */
function buildFileObject() {
  return z.object({
    name: z.string().optional().describe("File name with extension, e.g. report.pdf"),
    content: z.string().optional().describe("The file content, base64-encoded"),
    mimeType: z.string().optional().describe("Media type, e.g. application/pdf"),
    encoding: z.enum(["base64", "utf8"]).optional().describe('"utf8" when content is plain text'),
    uri: z.string().optional().describe("Where the file is (instead of content)"),
    size: z.number().int().nonnegative().optional().describe("Size in bytes, verified"),
    digest: z.string().optional().describe('"sha256:<hex>", verified'),
    filename: alias("name"),
    file_name: alias("name"),
    fileName: alias("name"),
    content_base64: alias("content"),
    data: alias("content"),
    mime_type: alias("mimeType"),
    mediaType: alias("mimeType"),
    contentType: alias("mimeType"),
    url: alias("uri"),
    download_url: alias("uri"),
    file_id: z.string().optional().describe("An id the client knows the file by (informational)"),
  });
}

/**
 * The file-descriptor object of the files extension revision Claude Code ships (`{id, mimeType,
 * size, name?, digest?}`): the client sends it in place of a file it uploads on the server's
 * `upload_required` answer. `withFiles` resolves it to the uploaded bytes; a model never needs to
 * write it. A plain `z.object` (unknown keys dropped), so strict validators accept it.
 */
function buildFileDescriptor() {
  return z
    .object({
      id: z.string().min(1).describe("The client's id of the file in this call"),
      mimeType: z.string().describe("Media type"),
      size: z.number().int().nonnegative().describe("Size in bytes"),
      name: z.string().optional().describe("File name"),
      digest: z
        .object({ algorithm: z.string(), value: z.string() })
        .optional()
        .describe('{"algorithm": "sha-256", "value": "<unpadded base64url>"}'),
    })
    .describe("A file the client attaches itself (MCP files extension); filled in by the client.");
}

let shared:
  | { fileObject: ReturnType<typeof buildFileObject>; fileDescriptor: ReturnType<typeof buildFileDescriptor> }
  | undefined;
/**
 * The object and descriptor forms, built at the first {@link fileInput} call and shared by every
 * later one (not at import: issue 39, test/package/budgets.test.ts).
 */
function objectForms() {
  shared ??= { fileObject: buildFileObject(), fileDescriptor: buildFileDescriptor() };
  return shared;
}

/**
 * A zod schema for one file argument of a tool: a string (data URL, handle, URI or path) or an
 * object with base64 content or a `uri`. Its description tells the model which forms to use, and the
 * JSON Schema the SDK publishes carries an `x-mcp-file` marker (SEP-2356 style) so clients that
 * understand it can attach files directly. Pair it with `FileBridge.withFiles`.
 *
 * @example
 * ```ts
 * server.registerTool(
 *   "summarize",
 *   { inputSchema: { document: fileInput({ description: "The PDF to summarize", accept: ["application/pdf"] }) } },
 *   bridge.withFiles(async ({ document }) => summarize(document as string), { fields: ["document"] }),
 * );
 * ```
 */
export function fileInput(options: FileInputOptions = {}) {
  return makeFileInput(options, undefined);
}

/**
 * {@link fileInput}, with the `maxBytes` a bridge publishes when the options give none (its own cap,
 * which the bridge holds on every call anyway, so it needs no schema to be enforced).
 */
export function makeFileInput(options: FileInputOptions, bridgeMaxBytes: number | undefined) {
  check.object(options);
  check.require(
    options.description === undefined || typeof options.description === "string",
    "description",
    "must be a string",
  );
  check.require(
    options.accept === undefined ||
      (Array.isArray(options.accept) && options.accept.every((t) => typeof t === "string")),
    "accept",
    "must be a list of media types",
  );
  if (options.maxBytes !== undefined) check.integer(options.maxBytes, "maxBytes", 0, { min: 1 });
  check.require(
    options.marks === undefined || options.marks === "all" || options.marks === "object",
    "marks",
    'must be "all" or "object"',
  );
  for (const key of ["upload", "fileParams"] as const) {
    check.require(options[key] === undefined || typeof options[key] === "boolean", key, "must be a boolean");
  }
  const forms = [
    'a data URL ("data:<type>;name=<file name>;base64,<data>")',
    'an object {"name": "<file name>", "content": "<base64>", "mimeType": "<type>"}',
    "an upload handle or resource URI returned by this server",
  ];
  if (options.https) forms.push("an https:// URL");
  if (options.paths) forms.push("a file:// URI or a path inside the server's shared folders");
  const given = options.description?.trim() || "A file.";
  // "The PDF to summarize" + "Send it as …": sentences joined with their full stop.
  const lead = /[.!?:]$/.test(given) ? given : `${given}.`;
  const description = `${lead} Send it as ${forms.join("; or ")}.`;
  const marker: Record<string, unknown> = {};
  if (options.accept) marker.accept = [...options.accept];
  const maxBytes = options.maxBytes ?? bridgeMaxBytes;
  if (maxBytes !== undefined) marker.maxSize = maxBytes;
  if (options.upload) marker.transferModes = ["inline", "upload"];
  // The files extension's form (SEP-2631): a `{type: "string", format: "uri"}` branch carrying the
  // marker (a data: URI or a file URI); the marker also stays on the property itself, where the
  // variant clients look. The plain string branch keeps handles, paths and URLs valid.
  // The revision Claude Code ships: the marker on the descriptor object, which goes before the
  // object form (a union takes its first match, and the object form would drop `id`).
  const { fileObject, fileDescriptor } = objectForms();
  const descriptor = fileDescriptor.meta({ [MCP_FILE_KEYWORD]: { ...marker } });
  const schema =
    options.marks === "object"
      ? z.union([z.string().min(1), descriptor, fileObject]).meta({ description })
      : z
          .union([
            z.url().meta({ [MCP_FILE_KEYWORD]: { ...marker } }),
            z.string().min(1),
            descriptor,
            fileObject,
          ])
          .meta({ description, [MCP_FILE_KEYWORD]: marker });
  if (options.fileParams) FILE_PARAMS.add(schema._zod.def);
  if (options.accept || options.maxBytes !== undefined) notePublishedConstraints();
  if (options.accept || maxBytes !== undefined) {
    FILE_CONSTRAINTS.set(schema._zod.def, {
      ...(options.accept ? { accept: [...options.accept] } : {}),
      ...(maxBytes !== undefined ? { maxSize: maxBytes } : {}),
      ...(options.maxBytes === undefined && maxBytes !== undefined ? { maxSizeIsBridgeDefault: true } : {}),
    });
  }
  return schema;
}

/**
 * The definitions of the `fileInput()` schemas made with `fileParams: true` (a definition, so
 * `.describe()` and `.meta()` copies, which share it, stay marked). Kept out of the JSON Schema (an unknown
 * key there would be one more keyword for strict validators); `fileParamsMeta` reads it.
 */
export const FILE_PARAMS = new WeakSet<object>();
