import { baseName } from "../internal/file-name.js";
import type { HostClientCapabilities } from "../mcp/host.js";
import type { ResourceLink, TextContent } from "../mcp/types.js";
import type { ScopeRefs } from "../scope/scope-refs.js";
import { clientFilesCapability, type FileValue, fileValueOf } from "../uploads/files-wire.js";
import { formatUploadHandle } from "../uploads/upload-handle.js";
import type { FileOutput } from "./file-output.js";

/**
 * The one builder of the blocks a tool returns for a stored file: a `resource_link` plus a text
 * block carrying the URI and, when one was minted, the signed download URL — many clients drop
 * `resource_link`, so the text is the fallback the model and the person can still use. Used by
 * `ResourceRegistry.link()` and by `Artifacts`. Each piece mints its own download URL (their
 * minters take different options) and hands it in.
 *
 * Its own module rather than part of the registry so `Artifacts` keeps working without a registry,
 * and not in `internal/` because it produces MCP content (it imports the port's wire types).
 */

/** The parts of a stored file a link shows. */
export interface LinkedFile {
  name: string;
  mimeType: string;
  size: number;
  /** Ms since the epoch. */
  createdAt: number;
  sha256?: string;
}

/** A minted download URL and when it expires (ms since the epoch). */
export interface MintedDownload {
  url: string;
  expiresAt: number;
}

/** What the text block says besides the file and its URI. */
export interface FileLinkText {
  /** First word of the text block: `File`, `Artifact`. */
  noun: string;
  /** Lines between the URI and the download URL. */
  notes?: readonly string[];
  /** The download URL, last. */
  download?: MintedDownload | undefined;
}

/** `[resource_link, text]` for `file` at `uri`. */
export function fileLinkContent(
  file: LinkedFile,
  uri: string,
  text: FileLinkText,
): [ResourceLink, TextContent] {
  const link: ResourceLink = {
    type: "resource_link",
    uri,
    name: file.name,
    title: baseName(file.name),
    mimeType: file.mimeType,
    size: file.size,
    annotations: { lastModified: new Date(file.createdAt).toISOString() },
  };
  const lines = [
    `${text.noun} "${file.name}" (${file.mimeType}, ${file.size} bytes)`,
    `Resource URI: ${uri}`,
    ...(text.notes ?? []),
  ];
  if (text.download) {
    lines.push(
      `Download URL (valid until ${new Date(text.download.expiresAt).toISOString()}): ${text.download.url}`,
    );
  }
  return [link, { type: "text", text: lines.join("\n") }];
}

/** The structured form of the same link: a {@link FileOutput} for `structuredContent`. */
export function fileOutputOf(file: LinkedFile, uri: string, download?: MintedDownload): FileOutput {
  return {
    uri,
    name: file.name,
    mimeType: file.mimeType,
    size: file.size,
    ...(file.sha256 === undefined ? {} : { sha256: file.sha256 }),
    lastModified: new Date(file.createdAt).toISOString(),
    ...(download
      ? { downloadUrl: download.url, downloadUrlExpiresAt: new Date(download.expiresAt).toISOString() }
      : {}),
  };
}

/**
 * The files extension's form of an output, for a client that declared the `files` capability: the
 * `FileValue`, under the file's `upload://` handle (which `files/authorizeDownload` takes), with its
 * sha-256. `undefined` for every other client, which keeps the `resource_link` + text + URL alone.
 * The draft's `{type: "file"}` content block is not sent: both SDK generations' servers refuse a
 * tool result with an unknown block type (`-32602 Invalid tools/call result`), so the `FileValue`
 * travels in `structuredContent.file`.
 */
export function fileValueOutput(
  file: LinkedFile & { scope: string; id: string; sha256: string },
  capabilities: HostClientCapabilities | undefined,
  refs: ScopeRefs,
): FileValue | undefined {
  if (!clientFilesCapability(capabilities)) return undefined;
  return fileValueOf(file, formatUploadHandle(file.scope, file.id, refs));
}
