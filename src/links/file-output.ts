import * as z from "zod/v4";
import type { ContentBlock } from "../mcp/types.js";

/**
 * The output contract: what a model needs to act on a file a tool produced, as data. Measured in
 * real agents (docs/client-compatibility.md): Claude Code and Codex CLI show only
 * `structuredContent` when a result has it (text blocks dropped, Codex drops `resource_link` too),
 * Gemini CLI ignores `structuredContent`. So a file output goes into the text content (the
 * `links/file-link.ts` text block) **and**, whenever the result has `structuredContent`, into its
 * `files` array, while the `resource_link` stays for the clients that render it.
 *
 * The schemas (zod) are here; `withFileOutputs`, which needs no zod, is links/with-file-outputs.ts,
 * so the code that calls it on first use (artifacts-work.ts) does not reach zod through an
 * `import()` (a bundler would wrap every zod module in a lazy initializer: issue 39).
 */

/**
 * One file output, as it appears in `structuredContent.files` (and as `registry.link()`'s
 * `structuredContent`).
 *
 * @example
 * ```ts
 * const output: FileOutput = { uri: "artifact://sessions/q3X0…/01jc…/out.html", name: "out.html", mimeType: "text/html", size: 96 };
 * ```
 */
export interface FileOutput {
  [key: string]: unknown;
  /** The resource URI (pass it back to tools, or read it with `resources/read`). */
  uri: string;
  name: string;
  mimeType: string;
  size: number;
  sha256?: string;
  /** Creation time, ISO 8601. */
  lastModified?: string;
  /** Signed download URL, when a minter is configured. */
  downloadUrl?: string;
  /** When `downloadUrl` expires, ISO 8601. */
  downloadUrlExpiresAt?: string;
  /** Where a local client (the `connect` shim) saved the file. */
  localPath?: string;
  /** The first characters of a text output that was too large to return inline. */
  preview?: string;
}

function buildFileOutputSchema() {
  return z.object({
    uri: z.string().describe("Resource URI: pass it to tools, or read it with resources/read"),
    name: z.string(),
    mimeType: z.string(),
    size: z.number().int().nonnegative(),
    sha256: z.string().optional(),
    lastModified: z.string().optional(),
    downloadUrl: z.string().optional().describe("Signed download URL"),
    downloadUrlExpiresAt: z.string().optional(),
    localPath: z.string().optional().describe("Where the file was saved on this machine"),
    preview: z.string().optional(),
  });
}

/**
 * The zod schema of one {@link FileOutput} (what `buildFileOutputSchema` makes): the element of
 * {@link fileOutputFields}' `files`, whose public annotation spells it out (documented as written).
 */
type FileOutputZod =
  (typeof fileOutputFields)["files"] extends z.ZodOptional<z.ZodArray<infer One>> ? One : never;

let outputSchema: FileOutputZod | undefined;
let filesField: z.ZodOptional<z.ZodArray<FileOutputZod>> | undefined;

/**
 * The zod schema of one {@link FileOutput}, built on its first use (not at import: issue 39) and the
 * same schema every time: what {@link fileOutputFields} lists, so a result that carries file outputs
 * validates on the client, which checks `structuredContent` against the listed schema
 * (`additionalProperties: false` included).
 *
 * @example
 * ```ts
 * const outputSchema = { report: fileOutputSchema(), pages: z.number() };
 * ```
 */
export function fileOutputSchema(): FileOutputZod {
  outputSchema ??= buildFileOutputSchema();
  return outputSchema;
}

/**
 * The `files` field `withFileOutputs`, `Artifacts.withArtifacts` and `Artifacts.fit` add to
 * a result's `structuredContent`: spread it into the `outputSchema` of a tool that returns files.
 * Without it a client that validates `structuredContent` refuses the result (`-32602`, "data must
 * NOT have additional properties"). Its schema is built when first read (spreading it reads it),
 * not at import (issue 39), and is the same schema every time.
 *
 * @example
 * ```ts
 * server.registerTool("render", { inputSchema, outputSchema: { pages: z.number(), ...fileOutputFields } }, handler);
 * ```
 */
export const fileOutputFields: {
  readonly files: z.ZodOptional<
    z.ZodArray<
      z.ZodObject<
        {
          uri: z.ZodString;
          name: z.ZodString;
          mimeType: z.ZodString;
          size: z.ZodNumber;
          sha256: z.ZodOptional<z.ZodString>;
          lastModified: z.ZodOptional<z.ZodString>;
          downloadUrl: z.ZodOptional<z.ZodString>;
          downloadUrlExpiresAt: z.ZodOptional<z.ZodString>;
          localPath: z.ZodOptional<z.ZodString>;
          preview: z.ZodOptional<z.ZodString>;
        },
        z.core.$strip
      >
    >
  >;
} = {
  get files() {
    filesField ??= z.array(fileOutputSchema()).optional().describe("Files this call produced");
    return filesField;
  },
};

/**
 * Blocks to append for one file plus its structured form (`registry.link()`, `artifacts.capture()`).
 *
 * @example
 * ```ts
 * const output: FileOutputBlocks = await registry.link(file);
 * ```
 */
export interface FileOutputBlocks {
  content: readonly ContentBlock[];
  structuredContent: FileOutput;
}
