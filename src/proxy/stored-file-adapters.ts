/**
 * The gateway's two tool adapters. Upload consumers: file arguments accept every form `FileBridge`
 * accepts and reach the upstream as a path in the handoff folder, base64, or a data URL. Artifact
 * producers: files the upstream wrote (named in its text, its `structuredContent`, a pre-allocated
 * output path) or embedded in its result are stored as artifacts and linked in the result.
 */
import { constants } from "node:fs";
import { copyFile, mkdir, mkdtemp, rm, unlink } from "node:fs/promises";
import { basename, join } from "node:path";
import * as z from "zod/v4";
import type { FileBridge } from "../bridge/file-bridge.js";
import { answerDescriptors, type DescriptorAnswerer } from "../bridge/file-descriptors.js";
import { fileInput } from "../bridge/file-input.js";
import type { ResolvedFile } from "../bridge/types.js";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { checkImageOptions, type ImageOptions, imageBudgetFor } from "../images/image-options.js";
import { imageBlockOf, shapedNote, shapeStoredImage } from "../images/stored-image.js";
import { type Duration, durationToMs } from "../internal/duration.js";
import { collectFieldSlots, parseFieldPath } from "../internal/field-paths.js";
import { baseName, sanitizeFileName } from "../internal/file-name.js";
import type { FileOutput } from "../links/file-output.js";
import { withFileOutputs } from "../links/with-file-outputs.js";
import type { CallToolResult, ContentBlock } from "../mcp/types.js";
import { mediaTypeFromName } from "../media/media-type.js";
import type { ResourceRegistry } from "../registry/resource-registry.js";
import type { FileStore, PutSource, StoredFile } from "../storage/types.js";
import type { UploadHandleResolver } from "../uploads/upload-handle-resolver.js";
import {
  assertWrittenDuringCall,
  type CallFolder,
  type CallStart,
  makeCallFolder,
  markCallStart,
  notWrittenByCall,
  outputPath,
} from "./call-outputs.js";
import type { ArtifactRule } from "./config.js";
import { type Folders, openConfined } from "./confined-file.js";
import { locateOutputs } from "./locators.js";
import { withFilesOutput } from "./output-schema.js";
import { makeOptional, replaceSchemaAt, withoutArgument } from "./schema-paths.js";
import type { CallContext, JsonObject, PreparedCall, ToolAdapter } from "./types.js";

/** What upload consumers need. */
export interface UploadConsumerDeps {
  /** Resolves every accepted form; its `tmpDir` is the handoff folder. */
  bridge: FileBridge;
  uploads?: UploadHandleResolver;
  store: FileStore;
  /** The folder the upstream reads handed-over files from. */
  handoffDir?: string;
  /** Most files per call. */
  maxFiles: number;
  /**
   * Answers file descriptors (the files extension revision Claude Code ships): `upload_required`
   * first, then the uploaded files' handles. @default none: a descriptor is `UNSUPPORTED_INPUT`
   */
  descriptors?: DescriptorAnswerer;
}

/** The JSON Schema of a file argument, keeping the upstream's own description first. */
function fileArgumentSchema(old: JsonObject, passThrough?: "relative-paths"): JsonObject {
  const own = typeof old.description === "string" ? old.description : undefined;
  const passed = passThrough ? "A relative path inside the server's own folder is used as it is." : undefined;
  const description = [own, passed].filter(Boolean).join(" ") || undefined;
  const schema = z.toJSONSchema(fileInput(description ? { description } : {})) as JsonObject;
  delete schema.$schema;
  return schema;
}

/**
 * A plain relative path the upstream resolves in its own folder: no scheme (`file:`, `upload:`,
 * `data:`), not absolute (`/`, `\\`, `C:`), no home (`~`), no `..` segment, no NUL. What
 * `passThrough: relative-paths` hands on unchanged.
 */
export function isPlainRelativePath(value: unknown): value is string {
  if (typeof value !== "string" || value.length === 0 || value.length > 4096) return false;
  if (value.includes("\0") || /^[A-Za-z][A-Za-z0-9+.-]*:/.test(value)) return false;
  if (value.startsWith("/") || value.startsWith("\\") || value.startsWith("~")) return false;
  return !value.split(/[\\/]/).some((segment) => segment === "..");
}

/**
 * An upload handle of another MCP session where the scope is the caller's MCP session (anonymous
 * callers on the default scope rule): say so, and how to change it, instead of "it may have expired".
 */
function perSessionNotFound(error: unknown, value: unknown, ctx: CallContext): unknown {
  if (!(error instanceof FileBridgeError) || error.code !== "NOT_FOUND") return error;
  if (typeof value !== "string" || !value.startsWith("upload://")) return error;
  if (ctx.extra.sessionId === undefined || ctx.scope !== ctx.extra.sessionId) return error;
  return new FileBridgeError("NOT_FOUND", `${error.message.replace(/\.$/, "")} in this MCP session`, {
    data: { ...error.data, scope: "mcp_session" },
    hint: PER_SESSION_HINT,
    cause: error,
  });
}

/** What an anonymous caller is told about handles of another connection. */
export const PER_SESSION_HINT =
  "Callers are not signed in, so uploads and their handles live per MCP session: a handle from another " +
  "connection is not found here. Use the handle in the session that asked for the upload URL, or have the " +
  "proxy's operator configure proxy.auth (bearer tokens) so a signed-in user keeps the files across sessions.";

/**
 * An upload consumer: the arguments at `args` take files in any accepted form; the upstream gets a
 * path in the handoff folder (`as: "path"`), base64 (`"base64"`) or a data URL (`"data_url"`).
 */
export function uploadConsumer(
  rule: { args: string[]; as: "path" | "base64" | "data_url"; passThrough?: "relative-paths" | undefined },
  deps: UploadConsumerDeps,
): ToolAdapter {
  const steps = rule.args.map((path) => parseFieldPath(path, "upload.args"));
  return {
    describe(tool) {
      const inputSchema = (tool.inputSchema ?? { type: "object" }) as JsonObject;
      for (const path of rule.args) {
        replaceSchemaAt(inputSchema, path, (old) => fileArgumentSchema(old, rule.passThrough));
      }
      return { ...tool, inputSchema };
    },
    async before(args, ctx) {
      const copy = structuredClone(args);
      const slots = steps.flatMap((path) => collectFieldSlots(copy, path));
      if (slots.length > deps.maxFiles) {
        throw new FileBridgeError("TOO_MANY_FILES", `at most ${deps.maxFiles} files per call`, {
          data: { limit: deps.maxFiles },
        });
      }
      const resolved: ResolvedFile[] = [];
      let callDir: string | undefined;
      const dispose = async () => {
        await Promise.allSettled(resolved.map((file) => file.dispose()));
        if (callDir) await rm(callDir, { recursive: true, force: true });
      };
      // Descriptors (the files extension revision Claude Code ships): upload_required first, then
      // each stands for its uploaded, checked bytes (an upload handle) and goes on as any other value.
      const answered = await answerDescriptors(
        slots.map((slot) => slot.value),
        deps.descriptors,
        { scope: ctx.scope, extra: ctx.extra },
      );
      if ("result" in answered) return { args: copy, result: answered.result };
      let failed: unknown;
      try {
        for (const [index, slot] of slots.entries()) {
          const value = answered.values[index];
          failed = value;
          const set = (next: string) => {
            (slot.container as Record<string | number, unknown>)[slot.key] = next;
          };
          // What the upstream itself understands, where the operator allows it: left as it is.
          if (rule.passThrough === "relative-paths" && isPlainRelativePath(value)) continue;
          if (rule.as === "path" && deps.handoffDir && typeof value === "string" && deps.uploads) {
            // Fast path: an uploaded file is copied by the kernel (a reflink where the file system can).
            const fast = await handoffCopy(value, index, ctx, deps, async () => {
              callDir ??= await mkdtemp(join(deps.handoffDir as string, "call-"));
              return callDir;
            });
            if (fast) {
              set(fast);
              continue;
            }
          }
          const file = await deps.bridge.resolve(value, { scope: ctx.scope, signal: ctx.signal });
          resolved.push(file);
          if (rule.as === "path") set(file.path);
          else {
            const base64 = (await file.bytes()).toString("base64");
            set(
              rule.as === "base64"
                ? base64
                : `data:${file.mimeType};name=${encodeURIComponent(file.name)};base64,${base64}`,
            );
          }
        }
      } catch (error) {
        await dispose();
        throw perSessionNotFound(error, failed, ctx);
      }
      return { args: copy, dispose };
    },
  };
}

async function handoffCopy(
  value: string,
  index: number,
  ctx: CallContext,
  deps: UploadConsumerDeps,
  dir: () => Promise<string>,
): Promise<string | undefined> {
  if (!value.startsWith("upload://") || !deps.uploads || !deps.store.localPath) return undefined;
  const file = await deps.uploads.fileFor(value, { scope: ctx.scope });
  // Not stored (yet): the bridge's resolver answers UPLOAD_PENDING or NOT_FOUND for it.
  if (!file) return undefined;
  const local = await deps.store.localPath(file.scope, file.id);
  if (!local) return undefined;
  const folder = join(await dir(), String(index));
  await mkdir(folder, { mode: 0o700 });
  const target = join(folder, sanitizeFileName(baseName(file.name)));
  await copyFile(local, target, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
  return target;
}

/** What artifact producers need. */
export interface ArtifactProducerDeps {
  registry: ResourceRegistry;
  /** The upstream's output folders (paths it names must be inside). */
  outputs: Folders;
  maxBytes: number;
  ttl: Duration;
  /** The store under the registry (image originals are shaped from it). */
  store: FileStore;
  /** The tool's `images` rule: `false` links images only; unset shapes them when `sharp` loads. */
  images?: ImageOptions | false | undefined;
}

/** The `none` locator's call: the path it pre-allocated, in a folder of its own. */
interface NoneState extends CallFolder {
  path: string;
}

interface Captured {
  file: StoredFile;
  content: JsonObject[];
  uri: string;
  downloadUrl?: string;
  /** The structured form (`structuredContent.files` entry) of the artifact. */
  output: FileOutput;
  /** The upstream's path it was read from (deleted after the call): replaced by `uri` in the result. */
  path?: string;
}

/** `value` with every string's occurrences of each `[from, to]` pair replaced (JSON values only). */
function replaceStrings(value: unknown, pairs: Array<[string, string]>): unknown {
  if (typeof value === "string") return pairs.reduce((text, [from, to]) => text.split(from).join(to), value);
  if (Array.isArray(value)) return value.map((item) => replaceStrings(item, pairs));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, replaceStrings(item, pairs)]));
  }
  return value;
}

const EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/svg+xml": "svg",
  "audio/mpeg": "mp3",
  "audio/wav": "wav",
  "audio/ogg": "ogg",
  "application/pdf": "pdf",
  "text/plain": "txt",
};

/**
 * An artifact producer: after the upstream answers, the files its result names (or embeds) are
 * stored as artifacts and linked in the result (`resource_link` + text with URI and download URL,
 * `structuredContent.files` when the upstream returned `structuredContent`, `_meta.artifact_uri` /
 * `_meta.download_url` / `_meta.artifacts`); the upstream's own paths of them, deleted after the
 * call, are replaced by the artifact URIs.
 */
export function artifactProducer(rule: ArtifactRule, deps: ArtifactProducerDeps): ToolAdapter {
  const ttlSeconds = durationToMs(deps.ttl, "ttl.artifacts") / 1000;
  const images = checkImageOptions(deps.images, "proxy", "images");
  const imageMode = deps.images === undefined ? "auto" : "on";

  /**
   * A stored image's shaped copy goes in front of its link (the default budget: the proxy serves
   * every client alike), the link's text says what was shown; a failure removes what the call stored.
   */
  async function shapeCaptured(captured: Captured[], ctx: CallContext): Promise<{ shaped: boolean }> {
    let shaped = false;
    for (const one of captured) {
      let image: Awaited<ReturnType<typeof shapeStoredImage>>;
      try {
        image = await shapeStoredImage(
          deps.store,
          one.file,
          imageBudgetFor(undefined, images || {}),
          images,
          imageMode,
        );
      } catch (error) {
        await Promise.all(
          captured.map((c) => deps.registry.remove(ctx.scope, c.file.id).catch(() => undefined)),
        );
        throw error;
      }
      if (image === undefined) continue;
      const note = shapedNote(image);
      const content = one.content.map((block) =>
        block.type === "text" ? { ...block, text: `${String(block.text)}\n${note}` } : block,
      );
      one.content =
        "linkOnly" in image ? content : [imageBlockOf(image) as unknown as JsonObject, ...content];
      shaped = shaped || !("linkOnly" in image);
    }
    return { shaped };
  }

  async function store(
    source: PutSource,
    name: string,
    mimeType: string | undefined,
    ctx: CallContext,
  ): Promise<Captured> {
    const file = await deps.registry.add(source, {
      scope: ctx.scope,
      name: sanitizeFileName(name, "artifact"),
      kind: "artifact",
      ttl: ttlSeconds,
      maxBytes: deps.maxBytes,
      metadata: { tool: ctx.tool, upstream: ctx.upstream },
      ...(mimeType ? { mimeType } : {}),
      signal: ctx.signal,
    });
    const link = await deps.registry.link(file, { scope: ctx.scope, extra: ctx.extra });
    const info = link.structuredContent;
    return {
      file,
      content: link.content as unknown as JsonObject[],
      uri: info.uri,
      ...(info.downloadUrl ? { downloadUrl: info.downloadUrl } : {}),
      output: info,
    };
  }

  /**
   * Stores the file at `path` if this call wrote it (see call-outputs.ts): inside `folders`, one
   * link, modified since `start`. `remove`: unlink it from the shared folder once stored.
   */
  /**
   * Captures the file at `path` (absolute) if this call wrote it. Errors name `given`, the path as the
   * upstream's result spelled it (relative ones included), never the folder it was resolved against.
   */
  async function capturePath(
    path: string,
    ctx: CallContext,
    within: { folders: Folders; start: CallStart; optional: boolean; remove: boolean },
    given: string = path,
  ): Promise<Captured | undefined> {
    let confined: Awaited<ReturnType<typeof openConfined>>;
    try {
      confined = await openConfined(path, within.folders, { maxBytes: deps.maxBytes, shown: given });
    } catch (error) {
      if (!(error instanceof FileBridgeError && error.code === "NOT_FOUND")) throw error;
      if (within.optional) return undefined;
      throw notWrittenByCall(given);
    }
    let captured: Captured;
    try {
      await assertWrittenDuringCall(confined.handle, confined.path, given, within.start);
      const stream = confined.handle.createReadStream({ start: 0, autoClose: false });
      const stored = await store(stream, confined.name, mediaTypeFromName(confined.name) ?? undefined, ctx);
      captured = { ...stored, path };
    } finally {
      await confined.close();
    }
    // Captured: it does not stay in a folder every caller's results can name.
    if (within.remove) await unlink(confined.path).catch(() => undefined);
    return captured;
  }

  async function captureEmbedded(result: JsonObject, ctx: CallContext): Promise<Captured[]> {
    const out: Captured[] = [];
    const blocks = Array.isArray(result.content) ? (result.content as JsonObject[]) : [];
    for (const [index, block] of blocks.entries()) {
      if ((block.type === "image" || block.type === "audio") && typeof block.data === "string") {
        const mimeType = typeof block.mimeType === "string" ? block.mimeType : undefined;
        const ext = (mimeType && EXTENSIONS[mimeType]) ?? "bin";
        const bytes = decodeBase64(block.data, deps.maxBytes);
        out.push(await store(bytes, `${block.type}-${index + 1}.${ext}`, mimeType, ctx));
      } else if (block.type === "resource" && typeof block.resource === "object" && block.resource !== null) {
        const resource = block.resource as JsonObject;
        const mimeType = typeof resource.mimeType === "string" ? resource.mimeType : undefined;
        const name = basename(String(resource.uri ?? "")).replace(/[?#].*$/, "") || `resource-${index + 1}`;
        if (typeof resource.blob === "string") {
          out.push(await store(decodeBase64(resource.blob, deps.maxBytes), name, mimeType, ctx));
        } else if (typeof resource.text === "string") {
          out.push(await store(Buffer.from(resource.text, "utf8"), name, mimeType, ctx));
        }
      }
    }
    return out;
  }

  function describeInput(tool: JsonObject): JsonObject {
    if (rule.locator === "regex" || rule.locator === "structured") {
      return rule.outputDirArg ? withoutArgument(tool, rule.outputDirArg) : tool;
    }
    if (rule.locator !== "none") return tool;
    const inputSchema = (tool.inputSchema ?? { type: "object" }) as JsonObject;
    makeOptional(inputSchema, rule.outputArg);
    const properties = inputSchema.properties as Record<string, JsonObject> | undefined;
    const property = properties?.[rule.outputArg];
    if (property) {
      property.description = `${typeof property.description === "string" ? `${property.description} ` : ""}(Optional: a file name; the proxy chooses the folder and returns the file as an artifact.)`;
    }
    return { ...tool, inputSchema };
  }

  return {
    // The result gains `structuredContent.files`: the listed output schema allows it.
    describe: (tool) => withFilesOutput(describeInput(tool)),
    async before(args, _ctx): Promise<PreparedCall> {
      if (rule.locator === "embedded") return { args };
      const sharedFolder = rule.locator === "none" ? undefined : !rule.outputDirArg;
      if (sharedFolder) return { args, state: await markCallStart(deps.outputs.real) };
      // The call's own folder: only what lands in it is this call's output.
      const own = await makeCallFolder(deps.outputs.real[0] as string);
      if (rule.locator !== "none") {
        return { args: { ...args, [rule.outputDirArg as string]: own.dir }, state: own, dispose: own.remove };
      }
      const given = args[rule.outputArg];
      const name = sanitizeFileName(
        typeof given === "string" && given
          ? baseName(given.replaceAll("\\", "/"))
          : (rule.outputName ?? "output"),
        "output",
      );
      const state: NoneState = { ...own, path: join(own.dir, name) };
      return { args: { ...args, [rule.outputArg]: state.path }, state, dispose: own.remove };
    },
    async after(result, ctx, state) {
      let captured: Captured[] = [];
      if (rule.locator === "embedded") captured = await captureEmbedded(result, ctx);
      else if (rule.locator === "none") {
        const own = state as NoneState;
        await own.check(); // each use: still our private folder, not swapped
        const one = await capturePath(own.path, ctx, { ...own, optional: true, remove: false });
        if (one) captured.push(one);
      } else {
        // With `outputDirArg`: only inside the call's own folder, relative paths relative to it.
        const own = rule.outputDirArg ? (state as CallFolder) : undefined;
        await own?.check(); // each use: still our private folder, not swapped
        const within = own
          ? { folders: own.folders, start: own.start, optional: false, remove: true }
          : { folders: deps.outputs, start: state as CallStart, optional: false, remove: true };
        for (const path of locateOutputs(result, rule)) {
          const one = await capturePath(outputPath(path, own?.dir ?? rule.relativeTo), ctx, within, path);
          if (one) captured.push(one);
        }
      }
      if (captured.length === 0) return result;
      const { shaped } = await shapeCaptured(captured, ctx);
      if (shaped && rule.locator === "embedded" && Array.isArray(result.content)) {
        // The upstream's full-size image blocks give way to the shaped copies in front of their links.
        result = {
          ...result,
          content: (result.content as JsonObject[]).filter((block) => block.type !== "image"),
        };
      }
      const first = captured[0] as Captured;
      const meta = (result._meta ?? {}) as JsonObject;
      // The upstream's temp paths are gone after the call: the model is shown the artifact URI instead.
      const moved = captured.flatMap((c): Array<[string, string]> => (c.path ? [[c.path, c.uri]] : []));
      const upstream = { content: result.content, structuredContent: result.structuredContent };
      const rewritten = (moved.length > 0 ? replaceStrings(upstream, moved) : upstream) as JsonObject;
      // The output contract: link blocks in content, and `structuredContent.files` when there is one.
      const linked = withFileOutputs(
        { ...result, ...rewritten } as unknown as CallToolResult,
        ...captured.map((c) => ({
          content: c.content as unknown as ContentBlock[],
          structuredContent: c.output,
        })),
      ) as unknown as JsonObject;
      return {
        ...linked,
        _meta: {
          ...meta,
          artifact_uri: first.uri,
          ...(first.downloadUrl ? { download_url: first.downloadUrl } : {}),
          artifacts: captured.map((c) => ({
            uri: c.uri,
            ...(c.downloadUrl ? { download_url: c.downloadUrl } : {}),
          })),
        },
      };
    },
  };
}

function decodeBase64(data: string, maxBytes: number): Buffer {
  const compact = data.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(compact))
    throw new FileBridgeError("INVALID_BASE64", "embedded content is not base64");
  if (Math.floor((compact.length * 3) / 4) > maxBytes + 2) {
    throw new FileBridgeError("FILE_TOO_LARGE", `an embedded file exceeds ${maxBytes} bytes`, {
      data: { limit: maxBytes },
    });
  }
  return Buffer.from(compact, "base64");
}
