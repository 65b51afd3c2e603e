/** The per-call state threaded through the resolution of one input, and how a call's options make it. */
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { assertScope } from "../scope/scope.js";
import type { MaterializeContext } from "./materialize.js";
import type { ResolveOptions } from "./options.js";

/** Per-call state threaded through the resolution of one input. */
export interface CallContext extends MaterializeContext {
  readonly scope: string;
}

/** What the bridge contributes to every call's context. */
export interface CallDefaults {
  /** The bridge's temp folder (worked out on its first call). */
  readonly tmpDir: () => string;
  readonly disk: boolean;
  readonly maxBytes: number;
  readonly allowEmpty: boolean;
}

/** Validates the options of one `resolve()` call (`INVALID_INPUT`) and makes its context. */
export function callContext(options: ResolveOptions, defaults: CallDefaults): CallContext {
  if (typeof options !== "object" || options === null) {
    throw new FileBridgeError("INVALID_INPUT", "resolve() needs options with a scope");
  }
  assertScope(options.scope);
  let maxBytes = defaults.maxBytes;
  if (options.maxBytes !== undefined) {
    if (!Number.isSafeInteger(options.maxBytes) || options.maxBytes <= 0) {
      throw new FileBridgeError("INVALID_INPUT", "maxBytes must be a positive integer");
    }
    maxBytes = options.maxBytes;
  }
  return {
    scope: options.scope,
    signal: options.signal,
    maxBytes,
    fallbackName: typeof options.name === "string" ? options.name : undefined,
    tmpDir: defaults.tmpDir(),
    disk: defaults.disk,
    allowEmpty: defaults.allowEmpty,
  };
}
