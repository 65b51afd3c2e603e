/**
 * The connect shim's two tool adapters. Local files: a file argument naming a local path inside the
 * allowed folders is uploaded before the call (through the remote's `get_upload_url` when it offers
 * one, else sent as a `data:` URL). Remote outputs: `resource_link`s, signed download URLs and
 * embedded files in a result are saved into the local output folder, and their local paths are
 * added to the result text.
 */
import { lstat, stat } from "node:fs/promises";
import { basename } from "node:path";
import { pathToFileURL } from "node:url";
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import { collectFieldSlots, parseFieldPath } from "../internal/field-paths.js";
import type { FileOutput } from "../links/file-output.js";
import { mediaTypeFromName } from "../media/media-type.js";
import { type ConfinedFile, type Folders, isInside, openConfined } from "./confined-file.js";
import { hashFile, localPathOf, multipartBody, readAll, saveDownload } from "./local-files.js";
import { withFilesOutput } from "./output-schema.js";
import { fetchOnOrigin } from "./remote-fetch.js";
import { replaceSchemaAt } from "./schema-paths.js";
import type { CallContext, JsonObject, ToolAdapter } from "./types.js";

/** What the local-file adapter needs. */
export interface LocalUploadDeps {
  allowed: Folders;
  maxBytes: number;
  /** The remote's origin: upload URLs elsewhere are refused. */
  origin: string;
  /** Headers for requests to the remote's origin (auth). */
  headers: Record<string, string>;
  /** The remote's upload tool, when it offers one. */
  uploadTool: () => string | undefined;
  /**
   * File arguments the user named on the command line (`--file-arg`, `fileArgs`): only there may a
   * bare name (`notes.txt`) mean a local file. In an argument the remote marked (`x-mcp-file`), only
   * an explicit path (`./x`, `~/x`, absolute, `file://`) does.
   */
  userArgs?: readonly string[];
}

function sameOrigin(url: string, origin: string): boolean {
  try {
    return new URL(url).origin === origin;
  } catch {
    return false;
  }
}

async function uploadThroughTicket(
  file: ConfinedFile,
  tool: string,
  ctx: CallContext,
  deps: LocalUploadDeps,
): Promise<string> {
  const ticket = await ctx.callUpstream(tool, { filename: file.name });
  if (ticket.isError === true) {
    throw new FileBridgeError("FETCH_FAILED", `the remote's ${tool} failed`, { data: { tool } });
  }
  const structured = (ticket.structuredContent ?? {}) as JsonObject;
  const text = JSON.stringify(ticket.content ?? []);
  const url =
    typeof structured.upload_url === "string"
      ? structured.upload_url
      : /https?:\/\/[^\s"'\\]+/.exec(text)?.[0];
  if (!url || !sameOrigin(url, deps.origin)) {
    throw new FileBridgeError(
      "HOST_NOT_ALLOWED",
      "the remote's upload URL is not on the remote's own origin",
      {
        data: { tool },
      },
    );
  }
  const sha256 = await hashFile(file);
  const { body, contentType } = multipartBody(
    file,
    sha256,
    typeof structured.field === "string" ? structured.field : "file",
  );
  let response: Response;
  try {
    response = await fetchOnOrigin(url, deps.origin, {
      method: "POST",
      headers: { ...deps.headers, "content-type": contentType },
      body: body as unknown as BodyInit,
      duplex: "half",
      signal: ctx.signal,
    } as RequestInit);
  } catch (cause) {
    if (cause instanceof FileBridgeError) throw cause;
    throw new FileBridgeError("FETCH_FAILED", `uploading ${file.name} to the remote failed`, { cause });
  }
  const reply = (await response.json().catch(() => ({}))) as {
    files?: Array<{ handle?: string }>;
    error?: { code?: string };
  };
  if (!response.ok) {
    throw new FileBridgeError(
      "FETCH_FAILED",
      `the remote refused the upload of ${file.name} (HTTP ${response.status}${reply.error?.code ? ` ${reply.error.code}` : ""})`,
      {
        data: { status: response.status },
      },
    );
  }
  const handle =
    reply.files?.[0]?.handle ?? (typeof structured.handle === "string" ? structured.handle : undefined);
  if (!handle) throw new FileBridgeError("FETCH_FAILED", "the remote's upload reply names no handle");
  return handle;
}

async function isFile(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => null)) !== null;
}

/** What the model is told when a local path is refused: the shim's own folders, not the server's. */
const OUTSIDE_HINT =
  "Use a path inside a folder the local connect shim was started with (--allow-dir), or send the file's content instead.";

/** `openConfined`, with a refusal that names the shim's `--allow-dir` folders. */
async function openLocal(path: string, deps: LocalUploadDeps): Promise<ConfinedFile> {
  try {
    return await openConfined(path, deps.allowed, { maxBytes: deps.maxBytes });
  } catch (error) {
    if (!isFileBridgeError(error, "PATH_NOT_ALLOWED")) throw error;
    throw new FileBridgeError("PATH_NOT_ALLOWED", error.message, {
      cause: error,
      hint: OUTSIDE_HINT,
      ...(error.data === undefined ? {} : { data: error.data }),
    });
  }
}

/**
 * Uploads local files named in the arguments at `paths` before the call.
 */
export function localUploads(paths: string[], deps: LocalUploadDeps): ToolAdapter {
  const steps = paths.map((path) => ({
    step: parseFieldPath(path, "fileArgs"),
    byUser: !!deps.userArgs?.includes(path),
  }));
  const where = deps.allowed.real.join(", ");
  return {
    describe(tool) {
      const inputSchema = (tool.inputSchema ?? { type: "object" }) as JsonObject;
      for (const path of paths) {
        replaceSchemaAt(inputSchema, path, (old) => ({
          ...old,
          description: `${typeof old.description === "string" ? `${old.description} ` : ""}A local file path inside ${where} also works: it is uploaded for you.`,
        }));
      }
      return { ...tool, inputSchema };
    },
    async before(args, ctx) {
      const copy = structuredClone(args);
      const base = deps.allowed.real[0] ?? process.cwd();
      const slots: Array<{ slot: ReturnType<typeof collectFieldSlots>[number]; path: string }> = [];
      const found = steps.flatMap(({ step, byUser }) =>
        collectFieldSlots(copy, step).map((slot) => ({ slot, byUser })),
      );
      for (const { slot, byUser } of found) {
        if (typeof slot.value !== "string") continue;
        const local = localPathOf(slot.value, base);
        if (!local) continue;
        // A bare name is a local file only in an argument the user marked, and only if one exists
        // there; otherwise (and always in an argument only the remote marked) it goes as is.
        if (
          !local.explicit &&
          (!byUser ||
            !(deps.allowed.real.length > 0 && isInside(base, local.path) && (await isFile(local.path))))
        ) {
          continue;
        }
        slots.push({ slot, path: local.path });
      }
      // Every path is checked (and opened) before anything is sent.
      const opened: ConfinedFile[] = [];
      try {
        for (const { path } of slots) opened.push(await openLocal(path, deps));
        const tool = deps.uploadTool();
        for (const [index, { slot }] of slots.entries()) {
          const file = opened[index] as ConfinedFile;
          let value: string;
          if (tool) value = await uploadThroughTicket(file, tool, ctx, deps);
          else {
            const type = mediaTypeFromName(file.name) ?? "application/octet-stream";
            value = `data:${type};name=${encodeURIComponent(file.name)};base64,${(await readAll(file)).toString("base64")}`;
          }
          (slot.container as Record<string | number, unknown>)[slot.key] = value;
        }
      } finally {
        await Promise.allSettled(opened.map((file) => file.close()));
      }
      return { args: copy };
    },
  };
}

/** What the download adapter needs. */
export interface RemoteDownloadDeps {
  outputDir: string;
  maxBytes: number;
  /** Most outputs one result saves (the rest are skipped, and the result says how many). */
  maxOutputs: number;
  /** Most bytes one result saves in all. */
  maxOutputBytes: number;
  origin: string;
  headers: Record<string, string>;
}

interface Target {
  name: string;
  url?: string;
  uri?: string;
  bytes?: Buffer;
  mimeType?: string;
  /** Index of an embedded `resource` block: replaced by its saved path, never forwarded as bytes too. */
  embedded?: number;
}

const URL_PATTERN = /https?:\/\/[^\s"'<>)\]]+/g;

function nameFromDisposition(header: string | null): string | undefined {
  if (!header) return undefined;
  const star = /filename\*=UTF-8''([^;]+)/i.exec(header);
  if (star?.[1]) {
    try {
      return decodeURIComponent(star[1]);
    } catch {
      // fall through
    }
  }
  return /filename="([^"]*)"/i.exec(header)?.[1];
}

/** The remote outputs of a result: links (with their download URLs), lone download URLs, embedded files. */
function targetsOf(result: JsonObject, origin: string): Target[] {
  const content = Array.isArray(result.content) ? (result.content as JsonObject[]) : [];
  const texts = content
    .filter((b) => b.type === "text" && typeof b.text === "string")
    .map((b) => b.text as string);
  const urls = new Set(
    texts
      .flatMap((text) => [...text.matchAll(URL_PATTERN)].map((m) => m[0]))
      .filter((u) => sameOrigin(u, origin) && /\/download\//.test(u)),
  );
  const meta = (result._meta ?? {}) as JsonObject;
  const targets: Target[] = [];
  for (const [index, block] of content.entries()) {
    if (block.type === "resource_link" && typeof block.uri === "string") {
      const uri = block.uri;
      const text = texts.find((t) => t.includes(uri));
      let url = text ? [...text.matchAll(URL_PATTERN)].map((m) => m[0]).find((u) => urls.has(u)) : undefined;
      if (
        !url &&
        meta.artifact_uri === uri &&
        typeof meta.download_url === "string" &&
        sameOrigin(meta.download_url, origin)
      ) {
        url = meta.download_url;
      }
      if (url) urls.delete(url);
      const name = typeof block.name === "string" ? block.name : (uri.split("/").pop() ?? "download");
      const mimeType = typeof block.mimeType === "string" ? { mimeType: block.mimeType } : {};
      targets.push({ name: decodeSafe(name), uri, ...(url ? { url } : {}), ...mimeType });
    } else if (block.type === "resource" && typeof block.resource === "object" && block.resource !== null) {
      const resource = block.resource as JsonObject;
      const name = decodeSafe(
        String(resource.uri ?? "")
          .split("/")
          .pop() || `resource-${index + 1}`,
      );
      const mimeType = typeof resource.mimeType === "string" ? { mimeType: resource.mimeType } : {};
      const uri = typeof resource.uri === "string" ? { uri: resource.uri } : {};
      const bytes =
        typeof resource.blob === "string"
          ? Buffer.from(resource.blob, "base64")
          : typeof resource.text === "string"
            ? Buffer.from(resource.text, "utf8")
            : undefined;
      if (bytes) targets.push({ name, bytes, embedded: index, ...mimeType, ...uri });
    } else if ((block.type === "image" || block.type === "audio") && typeof block.data === "string") {
      const ext =
        String(block.mimeType ?? "")
          .split("/")[1]
          ?.replace(/[^a-z0-9]/gi, "") || "bin";
      targets.push({ name: `${block.type}-${index + 1}.${ext}`, bytes: Buffer.from(block.data, "base64") });
    }
  }
  for (const url of urls) targets.push({ name: "download", url });
  return targets;
}

function decodeSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * The result with the saved paths in it, by the output contract (`links/file-output.ts`): a
 * "Saved to PATH" line in the text (an embedded file's block is replaced by it, so its bytes are
 * not forwarded a second time), and, when the result has `structuredContent`, `localPath` on the
 * matching `files` entry or a new entry — Claude Code and Codex CLI show only `structuredContent`.
 */
async function withSavedPaths(
  result: JsonObject,
  targets: Target[],
  saved: string[],
  notes: string[] = [],
  extraMeta: JsonObject = {},
): Promise<JsonObject> {
  const content = [...((result.content as JsonObject[] | undefined) ?? [])];
  const lines: string[] = [];
  const outputs: FileOutput[] = [];
  for (const [i, target] of targets.entries()) {
    const path = saved[i] as string;
    const size = (await stat(path)).size;
    const mimeType = target.mimeType ?? mediaTypeFromName(target.name) ?? "application/octet-stream";
    const line = `Saved to ${path}`;
    if (target.embedded !== undefined) {
      content[target.embedded] = {
        type: "text",
        text: `${basename(path)} (${mimeType}, ${size} bytes). ${line}`,
      };
    } else lines.push(line);
    outputs.push({
      uri: target.uri ?? pathToFileURL(path).href,
      name: basename(path),
      mimeType,
      size,
      localPath: path,
    });
  }
  lines.push(...notes);
  if (lines.length > 0) content.push({ type: "text", text: lines.join("\n") });
  const meta = { ...((result._meta as JsonObject | undefined) ?? {}), local_paths: saved, ...extraMeta };
  const next: JsonObject = { ...result, content, _meta: meta };
  const structured = result.structuredContent as JsonObject | undefined;
  if (structured === null || typeof structured !== "object" || Array.isArray(structured)) return next;
  const files = structured.files;
  if (files !== undefined && !Array.isArray(files)) return next;
  const listed = [...((files as JsonObject[] | undefined) ?? [])];
  for (const output of outputs) {
    const at = listed.findIndex((entry) => entry.uri === output.uri);
    if (at >= 0) listed[at] = { ...listed[at], localPath: output.localPath };
    else listed.push(output);
  }
  return { ...next, structuredContent: { ...structured, files: listed } };
}

/**
 * Saves the remote outputs of every result into the local output folder and adds their local paths
 * to the result (text and `structuredContent.files`). A download that fails makes the result an error; nothing partial is kept.
 */
export function remoteDownloads(deps: RemoteDownloadDeps): ToolAdapter {
  async function fetchTo(target: Target, url: string, ctx: CallContext, limit: number): Promise<string> {
    let response: Response;
    try {
      response = await fetchOnOrigin(url, deps.origin, { headers: deps.headers, signal: ctx.signal });
    } catch (cause) {
      if (cause instanceof FileBridgeError) throw cause;
      throw new FileBridgeError("FETCH_FAILED", `downloading ${target.name} from the remote failed`, {
        cause,
      });
    }
    if (!response.ok || !response.body) {
      throw new FileBridgeError(
        "FETCH_FAILED",
        `the remote answered HTTP ${response.status} for ${target.name}`,
        {
          data: { status: response.status },
        },
      );
    }
    const length = Number(response.headers.get("content-length") ?? Number.NaN);
    if (Number.isFinite(length) && length > limit) {
      await response.body.cancel().catch(() => undefined);
      throw new FileBridgeError(
        "FILE_TOO_LARGE",
        `${target.name} is ${length} bytes; the limit is ${limit}`,
        {
          data: { limit: limit },
        },
      );
    }
    const name =
      target.url === url && target.name === "download"
        ? (nameFromDisposition(response.headers.get("content-disposition")) ?? target.name)
        : target.name;
    try {
      return await saveDownload(
        deps.outputDir,
        name,
        response.body as unknown as AsyncIterable<Uint8Array>,
        limit,
      );
    } catch (cause) {
      if (cause instanceof FileBridgeError) throw cause;
      throw new FileBridgeError("FETCH_FAILED", `the download of ${target.name} broke off`, { cause });
    }
  }

  async function save(target: Target, ctx: CallContext, limit: number): Promise<string> {
    if (target.bytes) return await saveDownload(deps.outputDir, target.name, target.bytes, limit);
    if (target.url) return await fetchTo(target, target.url, ctx, limit);
    const read = await ctx.readUpstream(target.uri as string);
    const first = ((read.contents as JsonObject[] | undefined) ?? [])[0];
    if (!first) throw new FileBridgeError("NOT_FOUND", `the remote has no content for ${target.uri}`);
    if (first.mimeType === "text/uri-list" && typeof first.text === "string") {
      const url = first.text.split(/\r?\n/).find((line) => line && !line.startsWith("#"));
      if (url && sameOrigin(url, deps.origin)) return await fetchTo(target, url, ctx, limit);
      throw new FileBridgeError(
        "HOST_NOT_ALLOWED",
        `the remote's link for ${target.name} is not on its own origin`,
      );
    }
    if (typeof first.blob === "string")
      return await saveDownload(deps.outputDir, target.name, Buffer.from(first.blob, "base64"), limit);
    if (typeof first.text === "string")
      return await saveDownload(deps.outputDir, target.name, Buffer.from(first.text, "utf8"), limit);
    throw new FileBridgeError("NOT_FOUND", `the remote has no content for ${target.uri}`);
  }

  return {
    // Saved outputs land in `structuredContent.files` (with `localPath`): the listed schema allows it.
    describe: withFilesOutput,
    async after(result, ctx) {
      const found = targetsOf(result, deps.origin);
      if (found.length === 0) return result;
      // One result saves at most maxOutputs files and maxOutputBytes bytes; the rest is skipped.
      const targets = found.slice(0, deps.maxOutputs);
      let skipped = found.length - targets.length;
      let budget = deps.maxOutputBytes;
      const saved: string[] = [];
      const savedTargets: Target[] = [];
      try {
        for (const target of targets) {
          const limit = Math.min(deps.maxBytes, budget);
          if (limit <= 0) {
            skipped++;
            continue;
          }
          try {
            const path = await save(target, ctx, limit);
            budget -= (await stat(path)).size;
            saved.push(path);
            savedTargets.push(target);
          } catch (error) {
            if (
              !(limit < deps.maxBytes && error instanceof FileBridgeError && error.code === "FILE_TOO_LARGE")
            ) {
              throw error;
            }
            skipped++;
          }
        }
      } catch (error) {
        const message =
          error instanceof FileBridgeError
            ? `Error ${error.code}: ${error.message}.`
            : "Error FETCH_FAILED: a remote output could not be saved.";
        return {
          ...result,
          isError: true,
          content: [
            {
              type: "text",
              text: `${message} Nothing partial was kept; ${saved.length} other file(s) were saved${saved.length ? `: ${saved.join(", ")}` : ""}.`,
            },
            ...((result.content as JsonObject[]) ?? []),
          ],
        };
      }
      const notes =
        skipped > 0
          ? [
              `Skipped ${skipped} more remote output(s): one result saves at most ${deps.maxOutputs} files and ${deps.maxOutputBytes} bytes.`,
            ]
          : [];
      return withSavedPaths(
        result,
        savedTargets,
        saved,
        notes,
        skipped > 0 ? { skipped_outputs: skipped } : {},
      );
    },
  };
}
