/**
 * The options of `FileBridge` (with their defaults) and their validation: `normalizeOptions()` turns
 * what the author passed into the settings the bridge runs with, or fails with `INVALID_OPTION`
 * naming the bad option.
 */
import { defaultTmpDir } from "../internal/default-tmp-dir.js";
import type { Duration } from "../internal/duration.js";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_FILES_PER_CALL } from "../internal/limits.js";
import { optionCheck } from "../internal/options.js";
import { writableDisk } from "../internal/runtime.js";
import { type DownloadOrigin, parseDownloadOrigin } from "./sources/download-origin.js";
import { type HostPattern, parseHostPattern } from "./sources/host-patterns.js";
import type { FileSourceResolver } from "./types.js";

/**
 * Which input forms a {@link FileBridge} accepts. Each can be switched off (or on).
 *
 * @example
 * ```ts
 * const forms: FileBridgeForms = { path: true, object: false, base64: true };
 * const bridge = new FileBridge({ roots: ["/srv/shared"], forms });
 * ```
 */
export interface FileBridgeForms {
  /**
   * Local paths and `file://` URIs inside `roots`.
   * @default true when `roots` is given, else false (and true without roots is an `INVALID_OPTION`)
   */
  path?: boolean;
  /** `data:` URLs (RFC 2397), including a `name=` parameter. @default true */
  dataUrl?: boolean;
  /** Object forms (`{name, content}`, `{uri, name, size, digest}`, `{download_url, file_name}`). @default true */
  object?: boolean;
  /** Strings recognised by registered resolvers (`upload://…`, resource URIs). @default true */
  resolver?: boolean;
  /** `https://` URLs. @default true when `https.allowHosts` is given, else false */
  https?: boolean;
  /** Bare base64 strings (ambiguous with names, so off unless asked for; strictly validated). @default false */
  base64?: boolean;
}

/**
 * Options for fetching `https://` inputs.
 *
 * @example
 * ```ts
 * const https: FileBridgeHttpsOptions = { allowHosts: ["files.example.com", "*.cdn.example.com"], timeout: "10s" };
 * const bridge = new FileBridge({ https }); // https:// inputs are now accepted from those hosts
 * ```
 */
export interface FileBridgeHttpsOptions {
  /**
   * Hosts whose `https://` URLs may be fetched: exact names (`files.example.com`), subdomain
   * wildcards (`*.example.com`, not the apex) or `*` for any host. Private addresses stay refused
   * regardless. May be left out (or empty) when `downloadOrigins` is given: then only host
   * attachments are fetched, and `https://` strings stay refused.
   * @default none (required unless `downloadOrigins` is given)
   */
  allowHosts?: string[];
  /**
   * Origins a host's file attachments are downloaded from: the `download_url` of a
   * `{download_url, file_id, mime_type?, file_name?}` object, which hosts following the OpenAI Apps
   * SDK's `_meta["openai/fileParams"]` (see `fileInput({ fileParams: true })`) hand the tool. Each
   * entry is an origin, `https://files.example.com`, `https://files.example.com:8443` or
   * `https://*.example.com`; redirects may only go to the hosts listed here. A `download_url` on any
   * other origin is refused with `HOST_NOT_ALLOWED`, whose message names the origin to add here.
   * Fetching uses the same guards (private addresses, timeout, redirects, size) as `https://` URLs.
   * @default none: host attachments are fetched only from `allowHosts` when `https://` strings are on
   */
  downloadOrigins?: string[];
  /** Overall time for connecting, redirects and the body; over it the call fails with `TIMEOUT`. @default "30s" */
  timeout?: Duration;
  /** Redirects followed, each hop re-checked against the allow-list and address rules. @default 3 */
  maxRedirects?: number;
  /**
   * Allow loopback, private, link-local and other non-public addresses. Only for tests.
   * @default false
   */
  allowPrivateAddresses?: boolean;
  /** An extra trusted CA certificate (PEM), added to Node's bundled roots; for tests. @default none */
  ca?: string | Buffer;
}

/**
 * Options of {@link FileBridge}.
 *
 * @example
 * ```ts
 * const options: FileBridgeOptions = { roots: ["/srv/docs"], maxBytes: 10 * 1024 * 1024 };
 * const bridge = new FileBridge(options);
 * ```
 */
export interface FileBridgeOptions {
  /**
   * Folders local paths must be inside (checked on real paths, so symlinks cannot leave them). A
   * relative path is taken relative to the first root. Each must exist.
   * @default none: local paths are refused
   */
  roots?: string[];
  /**
   * Where per-call temp folders are made (created with mode 0700 if missing). On POSIX it must be
   * private: owned by this user (or root) and not writable by anyone without the sticky bit, else
   * resolving fails with `STORAGE_ERROR`. The default is worked out when the bridge first needs it
   * (its first call, or reading `bridge.tmpDir`): making a bridge touches no file.
   * @default join(os.tmpdir(), `mcp-file-bridge-${uid}`) (one per user; no suffix where there are no uids)
   */
  tmpDir?: string;
  /**
   * Whether resolved files are written to a temp file (`path` set) or kept in memory (`bytes()` and
   * `stream()` only; reading `path` fails with `PATH_UNAVAILABLE`), as on a runtime with no writable
   * disk. In memory each file is held whole, bounded by `maxBytes`.
   * @default true where the runtime has a writable disk (Node, Bun, Deno with `--allow-write`,
   * `--allow-read` and `--allow-env`), false elsewhere (Cloudflare Workers)
   */
  disk?: boolean;
  /** Largest accepted file, in bytes (decoded size). @default 52428800 (50 MiB) */
  maxBytes?: number;
  /** Which input forms are accepted; see {@link FileBridgeForms}. @default see each form */
  forms?: FileBridgeForms;
  /** Enables `https://` inputs (with `forms.https`). @default none: https URLs are refused */
  https?: FileBridgeHttpsOptions;
  /** Accept zero-byte files instead of failing with `EMPTY_FILE`. @default false */
  allowEmpty?: boolean;
  /** How many inputs {@link FileBridge.resolveAll} resolves at once. @default 4 */
  concurrency?: number;
  /**
   * Most files one {@link FileBridge.resolveAll} (and so one `withFiles` call) accepts; more fail with
   * `TOO_MANY_FILES` before anything is read. With `maxBytes` it bounds the disk one call can fill.
   * @default 32
   */
  maxFiles?: number;
  /** Resolvers to add right away (see {@link FileBridge.addResolver}). @default [] */
  resolvers?: FileSourceResolver[];
  /** Clock used by `FileBridge.sweep`, in milliseconds. @default Date.now */
  now?: () => number;
  /**
   * Sweep the temp folder once when the first bridge on it starts: folders left by a crashed
   * process (its pid is gone) are removed in the background, starting about a second after the
   * bridge is made if the process still runs (a process that ends sooner skips it), for at most a
   * few seconds (folders of
   * live processes are left to `FileBridge.sweep`), then every ten minutes while the process runs
   * (stale and hour-old folders of this user, never through a symlink; one unref'd timer). `false`
   * turns both off. Await {@link FileBridge.startupSweep} to wait.
   * @default true
   */
  sweepOnStart?: boolean;
}

/**
 * Options of {@link FileBridge.resolve} and {@link FileBridge.resolveAll}.
 *
 * @example
 * ```ts
 * const options: ResolveOptions = { scope: "session-1", signal: extra.signal, maxBytes: 5 * 1024 * 1024 };
 * await using file = await bridge.resolve(args.file, options);
 * ```
 */
export interface ResolveOptions {
  /** Scope of the caller (session, chat, user); resolvers only find that scope's files. */
  scope: string;
  /** Aborts the resolution (`ABORTED`); any temp file is removed. */
  signal?: AbortSignal;
  /** Size cap for this call, replacing the bridge's `maxBytes`. @default the bridge's maxBytes */
  maxBytes?: number;
  /** Name to use when the input carries none (bare base64, a data URL without `name=`). @default "file" + extension */
  name?: string;
}

/**
 * Options of `FileBridge.sweep`.
 *
 * @example
 * ```ts
 * const removed = await bridge.sweep({ olderThan: "30m" }); // how many temp folders were removed
 * ```
 */
export interface SweepOptions {
  /** Folders older than this are removed even when their process still runs. @default "1h" */
  olderThan?: Duration;
}

/** `https.timeout` when not given. */
const DEFAULT_TIMEOUT: Duration = "30s";
/** `https.maxRedirects` when not given. */
const DEFAULT_MAX_REDIRECTS = 3;
/** `concurrency` when not given. */
const DEFAULT_CONCURRENCY = 4;

/** The https settings the bridge fetches with (validated {@link FileBridgeHttpsOptions}). */
export interface HttpsSettings {
  readonly allowHosts: HostPattern[];
  readonly downloadOrigins: DownloadOrigin[];
  readonly timeoutMs: number;
  readonly maxRedirects: number;
  readonly allowPrivateAddresses: boolean;
  readonly ca: string | Buffer | undefined;
}

/** What a `FileBridge` runs with: its validated options, defaults filled in. */
export interface BridgeSettings {
  /**
   * Where call folders are made; `""` without a disk (`disk: false`). The default folder is worked
   * out on the first call of this (it reads the OS temp folder: `defaultTmpDir()`), then kept.
   */
  readonly tmpDir: () => string;
  /** Resolved files go to temp files (else they stay in memory). */
  readonly disk: boolean;
  readonly maxBytes: number;
  readonly roots: readonly string[];
  readonly forms: Required<FileBridgeForms>;
  readonly allowEmpty: boolean;
  readonly concurrency: number;
  readonly maxFiles: number;
  readonly now: () => number;
  readonly https: HttpsSettings | undefined;
  readonly resolvers: readonly FileSourceResolver[];
  readonly sweepOnStart: boolean;
}

const check = optionCheck("FileBridge");
const FORMS = ["path", "dataUrl", "object", "resolver", "https", "base64"] as const;

/** Validates {@link FileBridgeOptions} and fills in the defaults; a bad option fails with `INVALID_OPTION`. */
export function normalizeOptions(options: FileBridgeOptions): BridgeSettings {
  check.object(options);
  const roots = checkRoots(options.roots ?? []);
  const https = options.https === undefined ? undefined : normalizeHttps(options.https);
  const disk = check.boolean(options.disk, "disk", writableDisk());
  let tmpDir = disk ? checkTmpDir(options.tmpDir) : "";
  return {
    tmpDir: () => (tmpDir ??= defaultTmpDir()),
    disk,
    sweepOnStart: check.boolean(options.sweepOnStart, "sweepOnStart", true),
    maxBytes: check.integer(options.maxBytes, "maxBytes", DEFAULT_MAX_BYTES, { min: 1 }),
    roots,
    forms: checkForms(options.forms ?? {}, roots, https),
    allowEmpty: check.boolean(options.allowEmpty, "allowEmpty", false),
    concurrency: check.integer(options.concurrency, "concurrency", DEFAULT_CONCURRENCY, { min: 1 }),
    maxFiles: check.integer(options.maxFiles, "maxFiles", DEFAULT_MAX_FILES_PER_CALL, { min: 1 }),
    now: check.optionalFunction(options.now, "now") ?? Date.now,
    https,
    resolvers: options.resolvers ?? [],
  };
}

function checkRoots(roots: readonly string[]): string[] {
  check.require(
    Array.isArray(roots) && roots.every((root) => typeof root === "string" && root.trim() !== ""),
    "roots",
    "must be a list of folder paths",
  );
  return [...roots];
}

function checkTmpDir(tmpDir: string | undefined): string | undefined {
  check.require(
    tmpDir === undefined || (typeof tmpDir === "string" && tmpDir.trim() !== ""),
    "tmpDir",
    "must be a folder path",
  );
  return tmpDir;
}

/** Which input forms are on: each a boolean; `path` needs roots, `https` needs `https.allowHosts`. */
function checkForms(
  forms: FileBridgeForms,
  roots: readonly string[],
  https: HttpsSettings | undefined,
): Required<FileBridgeForms> {
  check.object(forms, "forms");
  for (const [key, value] of Object.entries(forms)) {
    check.require((FORMS as readonly string[]).includes(key), `forms.${key}`, "is not a known form");
    if (value !== undefined) check.boolean(value, `forms.${key}`, false);
  }
  const enabled: Required<FileBridgeForms> = {
    path: forms.path ?? roots.length > 0,
    dataUrl: forms.dataUrl ?? true,
    object: forms.object ?? true,
    resolver: forms.resolver ?? true,
    https: forms.https ?? (https !== undefined && https.allowHosts.length > 0),
    base64: forms.base64 ?? false,
  };
  check.require(!enabled.path || roots.length > 0, "forms.path", "needs at least one entry in roots");
  check.require(
    !enabled.https || (https !== undefined && https.allowHosts.length > 0),
    "forms.https",
    "needs https.allowHosts",
  );
  return enabled;
}

function normalizeHttps(https: FileBridgeHttpsOptions): HttpsSettings {
  check.object(https, "https");
  const origins = https.downloadOrigins;
  check.require(
    origins === undefined || Array.isArray(origins),
    "https.downloadOrigins",
    "must be a list of origins",
  );
  const allowHosts = https.allowHosts ?? [];
  check.require(
    Array.isArray(allowHosts) && (allowHosts.length > 0 || (origins?.length ?? 0) > 0),
    "https.allowHosts",
    "must be a non-empty list of hosts (unless https.downloadOrigins is given)",
  );
  const ca = https.ca;
  check.require(
    ca === undefined || typeof ca === "string" || Buffer.isBuffer(ca),
    "https.ca",
    "must be a PEM string or Buffer",
  );
  const maxRedirects = check.integer(https.maxRedirects, "https.maxRedirects", DEFAULT_MAX_REDIRECTS);
  const timeoutMs = check.duration(https.timeout, "https.timeout", DEFAULT_TIMEOUT, { positive: true });
  return {
    allowHosts: allowHosts.map((entry) => parseHostPattern(entry, "https.allowHosts")),
    downloadOrigins: (origins ?? []).map((entry) => parseDownloadOrigin(entry, "https.downloadOrigins")),
    timeoutMs,
    maxRedirects,
    allowPrivateAddresses: https.allowPrivateAddresses === true,
    ca: https.ca,
  };
}
