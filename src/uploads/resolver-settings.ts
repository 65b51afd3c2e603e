/**
 * `UploadHandleResolver`'s options, checked once at construction: each bad value is an
 * `INVALID_OPTION` naming the option, and what is left is the resolver's settings with every
 * default filled in.
 */

import { FileBridgeError } from "../errors/file-bridge-error.js";
import { type Duration, durationToMs } from "../internal/duration.js";
import {
  DEFAULT_UPLOAD_HANDLE_TTL,
  DEFAULT_UPLOAD_MAX_BYTES,
  DEFAULT_UPLOAD_MAX_FILES,
  DEFAULT_UPLOAD_TICKET_TTL,
} from "../internal/limits.js";
import { optionCheck } from "../internal/options.js";
import { defaultScope, type ScopeFunction } from "../scope/scope.js";
import { askerName } from "./request-files.js";
import { ticketRateLimit } from "./ticket-rate-limit.js";
import type { UploadHandleResolverOptions, UploadTicketRateLimitInfo } from "./types.js";

/** Names of the tools the resolver registers. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export const check = optionCheck("UploadHandleResolver");

/** `name` as a tool name, or `INVALID_OPTION` naming `option`. */
export function checkToolName(name: unknown, option: string): string {
  if (typeof name !== "string" || !TOOL_NAME.test(name)) {
    throw check.error(option, "must be 1-64 characters of A-Z a-z 0-9 _ . -");
  }
  return name;
}

/** What a resolver runs on, its options checked and defaulted. */
export interface ResolverSettings {
  toolName: string;
  ttl: Duration;
  handleTtlMs: number;
  handleTtlSeconds: number;
  maxBytes: number;
  maxFiles: number;
  serverName: string | undefined;
  singleUse: boolean;
  scope: ScopeFunction;
  tmpDir: string | undefined;
  rateLimit: ((info: UploadTicketRateLimitInfo) => boolean | Promise<boolean>) | undefined;
  fileRequests: NonNullable<UploadHandleResolverOptions["fileRequests"]>;
}

/** Checks a resolver's options (`INVALID_OPTION` for the first bad one) and fills in the defaults. */
export function resolverSettings(options: UploadHandleResolverOptions): ResolverSettings {
  if (typeof options !== "object" || options === null) throw check.error("options", "must be an object");
  const { store, minter, state } = options;
  if (!store || typeof store.head !== "function") throw check.error("store", "must be a FileStore");
  if (!minter || typeof minter.mint !== "function") throw check.error("minter", "must be a SignedUrlMinter");
  if (!state || typeof state.get !== "function") throw check.error("state", "must be a StateStore");
  const toolName = checkToolName(options.toolName ?? "get_upload_url", "toolName");
  const ttl = options.ttl ?? DEFAULT_UPLOAD_TICKET_TTL;
  if (durationToMs(ttl, "UploadHandleResolver: ttl") < 1000) throw check.error("ttl", "must be at least 1s");
  const handleTtlMs = durationToMs(
    options.handleTtl ?? DEFAULT_UPLOAD_HANDLE_TTL,
    "UploadHandleResolver: handleTtl",
  );
  if (handleTtlMs < 1000) throw check.error("handleTtl", "must be at least 1s");
  const maxBytes = options.maxBytes ?? uploadLimitFor(options.bridge);
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0) {
    throw check.error("maxBytes", "must be a positive integer");
  }
  checkAgainstBridge(maxBytes, options.bridge);
  const serverName = askerName(options.serverName);
  if (options.serverName !== undefined && serverName === undefined) {
    throw check.error("serverName", "must be 1 to 100 characters");
  }
  const maxFiles = options.maxFiles ?? DEFAULT_UPLOAD_MAX_FILES;
  if (!Number.isSafeInteger(maxFiles) || maxFiles <= 0 || maxFiles > 1000) {
    throw check.error("maxFiles", "must be an integer from 1 to 1000");
  }
  if (options.singleUse !== undefined && typeof options.singleUse !== "boolean") {
    throw check.error("singleUse", "must be a boolean");
  }
  if (options.scope !== undefined && typeof options.scope !== "function") {
    throw check.error("scope", "must be a function");
  }
  if (options.tmpDir !== undefined && (typeof options.tmpDir !== "string" || options.tmpDir.length === 0)) {
    throw check.error("tmpDir", "must be a non-empty path");
  }
  const rateLimit = options.rateLimit;
  if (rateLimit !== undefined && typeof rateLimit !== "function") {
    if (typeof rateLimit !== "object" || rateLimit === null) {
      throw check.error("rateLimit", "must be a function or { max, window }");
    }
    if (typeof state.setIfAbsent !== "function") throw check.error("state", "must be a StateStore");
  }
  if (options.bridge !== undefined && typeof options.bridge?.addResolver !== "function") {
    throw check.error("bridge", "must be a FileBridge");
  }
  const fileRequests = options.fileRequests ?? {};
  if (typeof fileRequests !== "object" || fileRequests === null) {
    throw check.error("fileRequests", "must be an object");
  }
  return {
    toolName,
    ttl,
    handleTtlMs,
    handleTtlSeconds: Math.ceil(handleTtlMs / 1000),
    maxBytes,
    maxFiles,
    serverName,
    singleUse: options.singleUse ?? true,
    scope: options.scope ?? defaultScope,
    tmpDir: options.tmpDir,
    rateLimit:
      rateLimit === undefined || typeof rateLimit === "function"
        ? rateLimit
        : ticketRateLimit({
            state,
            max: rateLimit.max,
            ...(rateLimit.window === undefined ? {} : { window: rateLimit.window }),
          }),
    fileRequests,
  };
}

/** The default upload limit: the bridge's `maxBytes` when a bridge is given, so the two agree. */
function uploadLimitFor(bridge: UploadHandleResolverOptions["bridge"]): number {
  const bridgeMax = bridge?.maxBytes;
  return typeof bridgeMax === "number" ? bridgeMax : DEFAULT_UPLOAD_MAX_BYTES;
}

/**
 * An upload limit above the bridge's: every upload between the two would be stored and then refused
 * by the tool with `FILE_TOO_LARGE`, so it is refused here, at start-up.
 */
function checkAgainstBridge(maxBytes: number, bridge: UploadHandleResolverOptions["bridge"]): void {
  const bridgeMax = bridge?.maxBytes;
  if (typeof bridgeMax === "number" && maxBytes > bridgeMax) {
    throw check.error(
      "maxBytes",
      `(${maxBytes} bytes) is above the bridge's maxBytes (${bridgeMax} bytes): uploads between the two would be ` +
        "accepted and then refused by the tool with FILE_TOO_LARGE; give the FileBridge a maxBytes at least as large, " +
        "or leave the upload maxBytes out to use the bridge's",
    );
  }
}

/** The files extension's `uploadWait`, checked: 0 to 30 s. */
export function uploadWaitMs(value: Duration | undefined): number {
  const ms = durationToMs(value ?? "1s", "files extension: uploadWait");
  if (ms > 30_000) {
    throw new FileBridgeError("INVALID_OPTION", "files extension: uploadWait must be at most 30s", {
      data: { option: "uploadWait" },
    });
  }
  return ms;
}
