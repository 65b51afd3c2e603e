/**
 * `FileBridge`'s call path, one module loaded on first use (the first file resolved, wrapped tool
 * call, sweep or `close()`; not at import: issue 39): which input form takes a file argument
 * (strings in a fixed order, then objects), lists all or nothing, the resolutions under way that
 * `close()` waits for, the temp folder's sweeps, and a wrapped call's work before its handler (the
 * fields' values found in a copy of the arguments, the scope, the files-extension descriptors
 * answered, the files checked against what the tool publishes and put in place); with the input
 * forms themselves (`sources/`).
 */

import {
  FileBridgeError,
  isFileBridgeError,
  type ToolErrorResult,
  toToolErrorResult,
} from "../errors/file-bridge-error.js";
import { type Duration, durationToMs } from "../internal/duration.js";
import { collectFieldSlots, type FieldStep, isRecord } from "../internal/field-paths.js";
import { randomUUID } from "../internal/node-builtins.js";
import { placeInSlots } from "../internal/place-slots.js";
import { ACTIVE_CALL_DIRS, sweepCallDirs, sweepOnTimer } from "../internal/temp-dir.js";
import { scopeSourceOf } from "../mcp/scope-source.js";
import { calledTool } from "../mcp/tool-call-schemas.js";
import type { ContentSniffer } from "../media/content-type.js";
import type { ScopeFunction, ScopeSource } from "../scope/scope.js";
import { type CallContext, callContext } from "./call-context.js";
import { releaseCallFolders, underWay } from "./call-folders.js";
import { aborted, resolverFailure } from "./failures.js";
import {
  asMaxSizeExceeded,
  assertAccepted,
  constraintsAt,
  constraintsPublished,
  type FileConstraints,
} from "./file-constraints.js";
import { answerDescriptors, type DescriptorAnswerer } from "./file-descriptors.js";
import type { BridgeSettings, ResolveOptions, SweepOptions } from "./options.js";
import { settleLimited } from "./settle-limited.js";
import { fromDownloadUrl } from "./sources/download-url.js";
import { BASE64_CHARSET, isDataUrl, looksLikePath } from "./sources/form-tests.js";
import { fromHttps } from "./sources/https.js";
import { fromBase64, fromDataUrl } from "./sources/inline.js";
import type { ObjectFormHost } from "./sources/object.js";
import { fromObject } from "./sources/object.js";
import { fromPath } from "./sources/path.js";
import type { Root } from "./sources/path-containment.js";
import { fileUriToPath, prepareRoots } from "./sources/path-containment.js";
import { fromResolver, fromResolverEach } from "./sources/resolver.js";
import { bareBase64Refused, jsonEncodedObject, looksLikeBareBase64 } from "./sources/stray-forms.js";
import type { FileSourceResolver, ResolvedFile } from "./types.js";

/** How long a start-up sweep may look through a folder. */
const STARTUP_SWEEP_MS = 5000;
/** `SweepOptions.olderThan` when not given. */
const DEFAULT_SWEEP_OLDER_THAN: Duration = "1h";

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]+):/;

/** One file argument, resolved to one file or (`each`) to every file it stands for. */
export interface ResolveItem {
  readonly value: unknown;
  readonly each: boolean;
  readonly maxBytes?: number;
}

/**
 * The call path of one bridge: `FileBridge`'s `resolve`, `resolveEach`, `resolveAll` and `sweep`,
 * the calls of its wrapped handlers (`runWithFiles`), its start-up sweep and what `close()` lets go.
 */
export class BridgeCalls {
  readonly #settings: BridgeSettings;
  readonly #tmpDir: string;
  readonly #resolvers: readonly FileSourceResolver[];
  readonly #enabledForms: () => string[];
  #roots: Promise<Root[]> | undefined;
  /** The bridge as object forms see it: they resolve their `uri` as a string. */
  readonly #objectHost: ObjectFormHost = {
    resolveString: (input, ctx) => this.#resolveString(input, ctx),
    resolveDownloadUrl: (input, ctx) =>
      fromDownloadUrl(input, ctx, {
        https: this.#settings.https,
        httpsForm: this.#settings.forms.https,
      }),
    enabledForms: () => this.#enabledForms(),
  };

  /**
   * The call path of a bridge with these settings, these resolvers (the bridge's own list, in the
   * order added: one added later counts at once) and the names of its enabled forms.
   */
  constructor(
    settings: BridgeSettings,
    resolvers: readonly FileSourceResolver[],
    enabledForms: () => string[],
  ) {
    this.#settings = settings;
    this.#tmpDir = settings.tmpDir();
    this.#resolvers = resolvers;
    this.#enabledForms = enabledForms;
  }

  /**
   * One call of a handler wrapped by `FileBridge.withFiles`: resolves the configured fields of a copy
   * of the arguments (all or nothing), calls the handler with paths or files in their place, and
   * disposes every file once the handler has returned or thrown. A field that takes one file gets one
   * file (an upload handle of several files fails with `INVALID_INPUT`); an item of a list field gets
   * every file it stands for, in place (one upload handle of a 3-file upload becomes 3 items). A
   * resolution failure is returned as an `isError` tool result and the handler is not called.
   */
  async runWithFiles<Args, Extra, Result>(
    prepared: PreparedOptions,
    handler: (args: Args, extra: Extra) => Result | Promise<Result>,
    args: Args,
    extra: Extra,
    descriptors: DescriptorAnswerer | undefined,
  ): Promise<Result | ToolErrorResult> {
    // Under way (for close()) until the files are ready or, refused, removed again.
    const call = await underWay(
      this.#tmpDir,
      readyCall<Args, Result>(this, prepared, descriptors, args, extra),
    );
    if ("result" in call) return call.result;
    try {
      return await handler(call.nextArgs, extra);
    } finally {
      await Promise.allSettled(call.files.map((file) => file.dispose()));
    }
  }

  resolve(input: unknown, options: ResolveOptions): Promise<ResolvedFile> {
    return underWay(this.#tmpDir, this.#resolveOne(input, options));
  }

  async resolveAll(inputs: unknown[], options: ResolveOptions): Promise<ResolvedFile[]> {
    if (!Array.isArray(inputs)) throw new FileBridgeError("INVALID_INPUT", "resolveAll() takes a list");
    const groups = await underWay(
      this.#tmpDir,
      this.resolveGroups(
        inputs.map((value) => ({ value, each: false })),
        options,
      ),
    );
    return groups.map((group) => group[0] as ResolvedFile);
  }

  async sweep(options: SweepOptions): Promise<number> {
    const olderThanMs = durationToMs(options.olderThan ?? DEFAULT_SWEEP_OLDER_THAN, "olderThan");
    if (!this.#settings.disk) return 0;
    return sweepCallDirs(this.#tmpDir, { olderThanMs, now: this.#settings.now(), active: ACTIVE_CALL_DIRS });
  }

  /**
   * The start-up sweep of the bridge's temp folder (see `FileBridge.startupSweep`), bounded in time,
   * and then on the leftover timer (`sweepOnTimer`, every ten minutes while the process runs: crash
   * leftovers of other processes too); resolves to the count of the first sweep. Never throws nor
   * rejects: it may run from a timer, where a throwing clock (`now`) would be an uncaught exception,
   * so a clock that fails is a sweep that fails (nothing removed, `0`).
   */
  sweepAtStart(): Promise<number> {
    const tmpDir = this.#tmpDir;
    const olderThanMs = durationToMs(DEFAULT_SWEEP_OLDER_THAN, "olderThan");
    sweepOnTimer(`call:${tmpDir}`, () =>
      sweepCallDirs(tmpDir, { olderThanMs, now: Date.now(), active: ACTIVE_CALL_DIRS }),
    );
    return new Promise<number>((done) => done(this.#settings.now()))
      .then((now) =>
        sweepCallDirs(tmpDir, {
          olderThanMs,
          now,
          active: ACTIVE_CALL_DIRS,
          deadline: Date.now() + STARTUP_SWEEP_MS,
        }),
      )
      .catch(() => 0);
  }

  /** Lets the temp folder's call folders go (see `FileBridge.close`). Never rejects. */
  async release(): Promise<void> {
    if (this.#settings.disk) await releaseCallFolders(this.#tmpDir);
  }

  async #resolveOne(input: unknown, options: ResolveOptions): Promise<ResolvedFile> {
    const ctx = this.#context(options);
    if (ctx.signal?.aborted) throw aborted();
    if (Array.isArray(input)) {
      throw new FileBridgeError(
        "INVALID_INPUT",
        "a list was given where one file was expected; use resolveAll()",
      );
    }
    if (typeof input === "string") return this.#resolveString(input, ctx);
    if (isRecord(input)) return this.#resolveObject(input, ctx);
    throw new FileBridgeError("INVALID_INPUT", "a file must be given as a string or an object", {
      data: { forms: this.#enabledForms() },
    });
  }

  async resolveEach(input: unknown, options: ResolveOptions): Promise<ResolvedFile[]> {
    const ctx = this.#context(options);
    if (ctx.signal?.aborted) throw aborted();
    const resolver =
      typeof input === "string" && this.#settings.forms.resolver ? this.#resolverFor(input) : undefined;
    if (!resolver) return [await this.resolve(input, options)];
    return underWay(this.#tmpDir, fromResolverEach(resolver, input as string, ctx, this.#settings.maxFiles));
  }

  /**
   * Resolves file arguments, each to one file or (`each`) to every file it stands for, at most
   * `concurrency` at a time and at most `maxFiles` files in all. All or nothing: when one fails, the
   * others are aborted and the ones already resolved are disposed, then the first error is thrown.
   */
  async resolveGroups(items: ReadonlyArray<ResolveItem>, options: ResolveOptions): Promise<ResolvedFile[][]> {
    this.#context(options);
    if (items.length > this.#settings.maxFiles) throw this.#tooMany(items.length);
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) controller.abort();
    let firstError: unknown;
    const settled = await settleLimited(items, this.#settings.concurrency, async (item) => {
      if (controller.signal.aborted) throw aborted();
      const inner = { ...options, signal: controller.signal };
      // A field's own cap (its published maxSize) only ever lowers the call's.
      if (item.maxBytes !== undefined)
        inner.maxBytes = Math.min(item.maxBytes, options.maxBytes ?? this.#settings.maxBytes);
      try {
        return item.each
          ? await this.resolveEach(item.value, inner)
          : [await this.resolve(item.value, inner)];
      } catch (error) {
        if (firstError === undefined) {
          firstError = error;
          controller.abort();
        }
        throw error;
      }
    });
    options.signal?.removeEventListener("abort", onAbort);
    const resolved = settled.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    const count = resolved.reduce((sum, group) => sum + group.length, 0);
    if (resolved.length === items.length && count <= this.#settings.maxFiles) return resolved;
    await Promise.allSettled(resolved.flat().map((file) => file.dispose()));
    throw firstError ?? (resolved.length === items.length ? this.#tooMany(count) : aborted());
  }

  #tooMany(count: number): FileBridgeError {
    const limit = this.#settings.maxFiles;
    return new FileBridgeError("TOO_MANY_FILES", `at most ${limit} files can be sent at once`, {
      data: { limit, count },
    });
  }

  #context(options: ResolveOptions): CallContext {
    return callContext(options, this.#settings);
  }

  #disabled(form: string): FileBridgeError {
    const forms = this.#enabledForms();
    return new FileBridgeError(
      "FORM_DISABLED",
      `this server does not accept files as ${form}; it accepts ${forms.join(", ") || "no form at all"}`,
      { data: { form, forms } },
    );
  }

  async #resolveObject(input: Record<string, unknown>, ctx: CallContext): Promise<ResolvedFile> {
    if (!this.#settings.forms.object) throw this.#disabled("object");
    return fromObject(input, ctx, this.#objectHost);
  }

  #bareBase64(input: string): FileBridgeError | undefined {
    if (this.#settings.forms.base64 || !looksLikeBareBase64(input)) return undefined;
    return bareBase64Refused(this.#settings.forms, this.#enabledForms());
  }

  #roots$(): Promise<Root[]> {
    this.#roots ??= prepareRoots(this.#settings.roots);
    // Do not cache a failure (a root may be created later).
    this.#roots.catch(() => {
      this.#roots = undefined;
    });
    return this.#roots;
  }

  #resolverFor(input: string): FileSourceResolver | undefined {
    try {
      return this.#resolvers.find((candidate) => candidate.matches(input));
    } catch (error) {
      throw resolverFailure("a resolver's matches()", error);
    }
  }

  async #resolveString(input: string, ctx: CallContext): Promise<ResolvedFile> {
    if (input.length === 0) throw new FileBridgeError("INVALID_INPUT", "the file argument is empty");
    // An object form sent as a JSON string (`"{\"filename\": …}"`) is that object.
    const encoded = jsonEncodedObject(input);
    if (encoded !== undefined) return this.#resolveObject(encoded, ctx);
    // (1) registered resolvers
    const resolver = this.#resolverFor(input);
    if (resolver) {
      if (!this.#settings.forms.resolver) throw this.#disabled(resolver.name);
      return fromResolver(resolver, input, ctx);
    }
    // (2) data: URL
    if (isDataUrl(input)) {
      if (!this.#settings.forms.dataUrl) throw this.#disabled("data: URL");
      return fromDataUrl(input, ctx);
    }
    const scheme = SCHEME.exec(input)?.[1]?.toLowerCase();
    // (3) https:// (plain http:// is never fetched: FORM_DISABLED)
    if (scheme === "https") {
      if (!this.#settings.forms.https) throw this.#disabled("https:// URL");
      return this.#fromHttps(input, ctx);
    }
    if (scheme === "http") throw this.#disabled("http:// URL (only https:// can be enabled)");
    // (4) file:// URI or path
    if (scheme === "file") {
      if (!this.#settings.forms.path) throw this.#disabled("file:// URI");
      return fromPath(fileUriToPath(input), input, ctx, await this.#roots$());
    }
    if (scheme !== undefined) {
      throw new FileBridgeError(
        "UNSUPPORTED_INPUT",
        `"${scheme}:" inputs are not supported; accepted forms: ${this.#enabledForms().join(", ")}`,
        { data: { scheme, forms: this.#enabledForms() } },
      );
    }
    const base64Candidate = this.#settings.forms.base64 && BASE64_CHARSET.test(input);
    if (this.#settings.forms.path) {
      try {
        return await fromPath(input, input, ctx, await this.#roots$());
      } catch (error) {
        // (5) a string that is no file may still be base64, when that form is on.
        if (base64Candidate && isFileBridgeError(error, "NOT_FOUND")) return fromBase64(input, ctx);
        // Base64 may start with "/" (JPEG is "/9j/…"): an absolute "path" outside every root is tried
        // as base64 too, and if it is not valid base64 either, the path refusal stands.
        const outsideRoots =
          isFileBridgeError(error, "PATH_NOT_ALLOWED") && error.data?.outsideRoots === true;
        if (base64Candidate && outsideRoots) {
          try {
            return await fromBase64(input, ctx);
          } catch (base64Error) {
            if (isFileBridgeError(base64Error, "INVALID_BASE64")) throw error;
            throw base64Error;
          }
        }
        // With bare base64 off, content that is surely base64 gets the form to use, not NOT_FOUND.
        if (isFileBridgeError(error, "NOT_FOUND") || outsideRoots) throw this.#bareBase64(input) ?? error;
        throw error;
      }
    }
    // (5) bare base64
    if (this.#settings.forms.base64) {
      if (base64Candidate || !looksLikePath(input)) return fromBase64(input, ctx);
    }
    const bareBase64 = this.#bareBase64(input);
    if (bareBase64) throw bareBase64;
    if (looksLikePath(input)) throw this.#disabled("local path");
    throw new FileBridgeError(
      "UNSUPPORTED_INPUT",
      `the string is not a file in any accepted form; accepted forms: ${this.#enabledForms().join(", ")}`,
      { data: { forms: this.#enabledForms() } },
    );
  }

  async #fromHttps(input: string, ctx: CallContext): Promise<ResolvedFile> {
    const https = this.#settings.https;
    if (!https) throw this.#disabled("https:// URL");
    return fromHttps(input, ctx, https);
  }
}

// A wrapped call's work before its handler ----------------------------------------------------

/** `withFiles`' options, checked once when the handler is wrapped. */
export interface PreparedOptions {
  readonly fields: FieldStep[][];
  /** The `inputSchema` option, when given (it wins over the called tool's). */
  readonly inputSchema: object | undefined;
  /** The `accept` option. */
  readonly accept: readonly string[] | undefined;
  readonly sniff: ContentSniffer | undefined;
  readonly pass: "path" | "file";
  readonly scope: ScopeFunction;
  readonly maxBytes: number | undefined;
}

/** What each field accepts under `inputSchema` (published `x-mcp-file`) and the `accept` option. */
function fieldConstraints(
  prepared: PreparedOptions,
  inputSchema: unknown,
): Array<FileConstraints | undefined> {
  return prepared.fields.map((steps) => {
    const published = inputSchema ? constraintsAt(inputSchema, steps) : undefined;
    const accept = prepared.accept ?? published?.accept;
    // The bridge's own cap, published by a `bridge.fileInput()` given no `maxBytes`, is replaced by
    // this tool's `maxBytes` (as on a server nothing is attached to); a field's own cap is not.
    const replaced = published?.maxSizeIsBridgeDefault === true && prepared.maxBytes !== undefined;
    const maxSize = replaced ? undefined : published?.maxSize;
    if (accept === undefined && maxSize === undefined) return undefined;
    return {
      ...(accept ? { accept } : {}),
      ...(maxSize !== undefined ? { maxSize } : {}),
    };
  });
}

/**
 * The schema this call's fields are checked against: the `inputSchema` option, else the one the
 * called tool was registered with (on a watched server, see mcp/tool-call-schemas.ts). When neither
 * is known and a `fileInput()` in this process publishes a constraint, the call is refused
 * (`INVALID_OPTION`): the constraint might be this tool's, and running unchecked is what the draft
 * forbids.
 */
function schemaOfCall(prepared: PreparedOptions, extra: unknown): unknown {
  if (prepared.inputSchema !== undefined) return prepared.inputSchema;
  const called = calledTool(extra);
  if (called) return called.inputSchema;
  if (!constraintsPublished()) return undefined;
  throw new FileBridgeError(
    "INVALID_OPTION",
    "withFiles: the accept / maxBytes a fileInput() publishes cannot be checked on this call: the " +
      "server does not know the bridge. Call bridge.attach(server) once, before it connects (or pass " +
      "the tool's inputSchema to withFiles)",
    { data: { option: "attach", reason: "constraints_unchecked" } },
  );
}

/** Whether a file argument carries its bytes inline (a data: URL or an object with content). */
function isInline(value: unknown): boolean {
  if (typeof value === "string") {
    if (/^data:/i.test(value.trimStart())) return true;
    const encoded = jsonEncodedObject(value);
    return encoded !== undefined && isInline(encoded);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  return ["content", "content_base64", "data"].some(
    (key) => typeof (value as Record<string, unknown>)[key] === "string",
  );
}

/**
 * The caller's scope; when there is none (`FORBIDDEN`, `no_scope`) and every file is inline, a
 * throwaway scope of this call: nothing is stored or looked up, so the call needs no identity, and
 * the throwaway scope owns nothing another caller could reach.
 */
function scopeFor(prepared: PreparedOptions, source: ScopeSource, values: unknown[]): string {
  try {
    return prepared.scope(source);
  } catch (error) {
    const noScope = isFileBridgeError(error, "FORBIDDEN") && error.data?.reason === "no_scope";
    if (noScope && values.every(isInline)) return `inline-call:${randomUUID()}`;
    throw error;
  }
}

function signalOf(extra: unknown): AbortSignal | undefined {
  if (typeof extra !== "object" || extra === null) return undefined;
  const signal = (extra as { signal?: unknown }).signal;
  return signal instanceof AbortSignal ? signal : undefined;
}

/** The published `maxSize` a `FILE_TOO_LARGE` came from (its limit is one of the fields' caps), if any. */
function publishedCap(
  error: unknown,
  found: ReadonlyArray<{ rule: FileConstraints | undefined }>,
): number | undefined {
  const limit = (error as { data?: { limit?: unknown } } | null)?.data?.limit;
  if (typeof limit !== "number") return undefined;
  return found.some(({ rule }) => rule?.maxSize === limit) ? limit : undefined;
}

/** What a wrapped call comes to before its handler: the result to return at once, or its files. */
type ReadyCall<Args, Result> =
  | { result: Result | ToolErrorResult }
  | { nextArgs: Args; files: ResolvedFile[] };

/**
 * The files of one wrapped call, resolved and checked, or the result to return at once (nothing
 * left on disk then): the arguments' copy with the fields' files in place. Never rejects.
 */
async function readyCall<Args, Result>(
  calls: BridgeCalls,
  prepared: PreparedOptions,
  descriptors: DescriptorAnswerer | undefined,
  args: Args,
  extra: unknown,
): Promise<ReadyCall<Args, Result>> {
  let files: ResolvedFile[] = [];
  let nextArgs: Args;
  try {
    nextArgs = structuredClone(args);
    const fieldSlots = prepared.fields.map((steps) => collectFieldSlots(nextArgs, steps));
    const constraints = fieldSlots.some((each) => each.length > 0)
      ? fieldConstraints(prepared, schemaOfCall(prepared, extra))
      : [];
    const found = fieldSlots.flatMap((each, field) =>
      each.map((slot) => ({ slot, rule: constraints[field] })),
    );
    const slots = found.map((entry) => entry.slot);
    if (slots.length > 0) {
      // SDK v2 contexts carry auth in `ctx.http`: normalized so scope functions see the caller.
      const source = scopeSourceOf(extra ?? {});
      const scope = scopeFor(
        prepared,
        source as ScopeSource,
        slots.map((slot) => slot.value),
      );
      const signal = signalOf(source);
      // Descriptors (the files extension revision Claude Code ships): upload_required first.
      const answered = await answerDescriptors(
        slots.map((slot) => slot.value),
        descriptors,
        { scope, extra },
      );
      if ("result" in answered) return { result: answered.result as Result };
      const groups = await calls
        .resolveGroups(
          found.map(({ slot, rule }, i) => ({
            value: answered.values[i],
            each: Array.isArray(slot.container),
            ...(rule?.maxSize !== undefined ? { maxBytes: rule.maxSize } : {}),
          })),
          {
            scope,
            ...(signal ? { signal } : {}),
            ...(prepared.maxBytes !== undefined ? { maxBytes: prepared.maxBytes } : {}),
          },
        )
        .catch((error: unknown) => {
          throw asMaxSizeExceeded(error, publishedCap(error, found));
        });
      files = groups.flat();
      // `accept`: what the bytes are, before the handler sees any of them.
      await Promise.all(
        found.flatMap(({ rule }, i) =>
          rule?.accept
            ? (groups[i] as ResolvedFile[]).map((file) =>
                assertAccepted(file, rule.accept ?? [], prepared.sniff),
              )
            : [],
        ),
      );
      placeInSlots(slots, (_slot, i) =>
        (groups[i] as ResolvedFile[]).map((file) => (prepared.pass === "path" ? file.path : file)),
      );
    }
  } catch (error) {
    await Promise.allSettled(files.map((file) => file.dispose()));
    return { result: toToolErrorResult(error) };
  }
  return { nextArgs, files };
}
