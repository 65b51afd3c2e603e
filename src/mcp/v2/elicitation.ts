import type { ServerContext } from "@modelcontextprotocol/server";
import { FileBridgeError } from "../../errors/file-bridge-error.js";
import { createHmac, randomBytes, timingSafeEqual } from "../../internal/node-builtins.js";
import { noUrlElicitation } from "../errors.js";
import type {
  HostClientCapabilities,
  HostElicitationAnswer,
  HostRequestContext,
  HostUrlElicitation,
} from "../host.js";
import { loadHostWork } from "../load-host-work.js";
import type { V2Context } from "./context.js";

/**
 * URL-mode elicitation on SDK v2, for both protocol eras one v2 server speaks:
 *
 * - 2025 era (stdio, in-memory, 2025 HTTP): `elicitation/create` with `mode: "url"` through
 *   `ctx.mcpReq.elicitInput` (related to the request) and `notifications/elicitation/complete` through
 *   `ctx.mcpReq.notify`, as on v1.
 * - 2026-07-28: there is no server→client request. `elicitUrl` ends the round by throwing an
 *   `InputRequiredSignal` (host-work.ts) that carries the `input_required` result (the embedded
 *   `elicitation/create` keyed by our elicitation id, plus a `requestState` that seals that id with an
 *   HMAC, bound to the method and the `Mcp-Name` routing header). `requestFiles` returns that result
 *   as its outcome's `result`, so the tool returns it and the SDK sends it. On the client's retry the
 *   context verifies the echoed state and exposes the answer as `elicitationAnswers`; after an accept
 *   it offers `waitAgain`, a state-only `input_required` whose state seals "accepted" too, for a wait
 *   spread over several retries.
 */

/** Marks the signal `elicitUrl` throws on 2026-07-28 (host-work.ts makes it), so code can recognise it. */
export const INPUT_REQUIRED_SIGNAL = Symbol.for("mcp-file-bridge.input-required");

/** Whether `error` is the signal a 2026-07-28 `elicitUrl` throws: the round ends with its `result`. */
export function isInputRequiredSignal(error: unknown): error is { result: Record<string, unknown> } {
  return (error as { [INPUT_REQUIRED_SIGNAL]?: unknown } | null)?.[INPUT_REQUIRED_SIGNAL] === true;
}

const CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities";
const STATE_PREFIX = "mfb1.";
/**
 * A per-process key unless the host is given one (several replicas need the same key). Made on
 * first use: Cloudflare Workers refuse random values at module scope, so nothing is drawn at load.
 */
let processKeyBytes: Buffer | undefined;
function processKey(): Buffer {
  processKeyBytes ??= randomBytes(32);
  return processKeyBytes;
}

/** What the elicitation support of one v2 host needs to know about its server. */
export interface V2ElicitationServer {
  /** Whether the current connection speaks 2026-07-28. */
  modern(): boolean;
  /** The client capabilities declared at `initialize` (2025 era). */
  initializeCapabilities(): HostClientCapabilities | undefined;
  /** The key that seals request state. */
  stateKey?: Uint8Array | string;
}

/**
 * What a request state is bound to: the method, the tool (`Mcp-Name`) and the verified user, so a
 * state replayed by another user, or on another tool, opens nothing (that request starts afresh).
 */
function bindingOf(
  ctx: V2Context,
  headers: Record<string, string | string[] | undefined> | undefined,
  subject: string | undefined,
): string {
  const name = headers?.["mcp-name"];
  return `${ctx.mcpReq.method}\n${typeof name === "string" ? name : ""}\n${subject ?? ""}`;
}

/** The suffix of a state that says the elicitation was accepted and the request waits on. */
const ACCEPTED_SUFFIX = "a";

function mac(key: Uint8Array | string, elicitationId: string, binding: string, accepted: boolean): string {
  const sealed = `${elicitationId}\n${binding}${accepted ? "\naccepted" : ""}`;
  return createHmac("sha256", key).update(sealed).digest("base64url");
}

/**
 * The request state for one elicitation id: `mfb1.<id>.<hmac>` while asked, `mfb1.<id>.<hmac>.a` once
 * accepted (a retry that waits on: the answer is not sent again).
 */
export function sealState(
  key: Uint8Array | string,
  elicitationId: string,
  binding: string,
  accepted = false,
): string {
  const id = Buffer.from(elicitationId).toString("base64url");
  return `${STATE_PREFIX}${id}.${mac(key, elicitationId, binding, accepted)}${accepted ? `.${ACCEPTED_SUFFIX}` : ""}`;
}

/** The elicitation id a state seals, and whether it was accepted, when it verifies for `binding`. */
export function openState(
  key: Uint8Array | string,
  state: unknown,
  binding: string,
): { elicitationId: string; accepted: boolean } | undefined {
  if (typeof state !== "string" || !state.startsWith(STATE_PREFIX)) return undefined;
  const [encodedId, tag, suffix, ...rest] = state.slice(STATE_PREFIX.length).split(".");
  if (encodedId === undefined || tag === undefined || rest.length > 0) return undefined;
  if (suffix !== undefined && suffix !== ACCEPTED_SUFFIX) return undefined;
  const accepted = suffix === ACCEPTED_SUFFIX;
  const elicitationId = Buffer.from(encodedId, "base64url").toString();
  const expected = Buffer.from(mac(key, elicitationId, binding, accepted));
  const given = Buffer.from(tag);
  return expected.length === given.length && timingSafeEqual(expected, given)
    ? { elicitationId, accepted }
    : undefined;
}

function answerOf(value: unknown): HostElicitationAnswer | undefined {
  const action = (value as { action?: unknown } | null)?.action;
  return action === "accept" || action === "decline" || action === "cancel"
    ? { ...(value as object), action }
    : undefined;
}

/** Adds `clientCapabilities`, `elicitUrl`, `notifyElicitationComplete` and `elicitationAnswers` to a v2 context. */
export function withElicitation(
  context: HostRequestContext,
  ctx: V2Context,
  server: V2ElicitationServer,
): HostRequestContext {
  const key = server.stateKey ?? processKey();
  const binding = bindingOf(ctx, context.headers, context.authInfo?.subject);
  const full = ctx as ServerContext;
  if (server.modern()) {
    const capabilities = ctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY as never] as
      | HostClientCapabilities
      | undefined;
    if (capabilities) context.clientCapabilities = capabilities;
    const opened = openState(key, ctx.mcpReq.requestState(), binding);
    const answer =
      opened === undefined
        ? undefined
        : opened.accepted
          ? ({ action: "accept" } as const)
          : answerOf(ctx.mcpReq.inputResponses?.[opened.elicitationId]);
    if (opened !== undefined && answer !== undefined) {
      context.elicitationAnswers = new Map([[opened.elicitationId, answer]]);
      if (answer.action === "accept") {
        // The next round: only a state, which says "accepted, wait on" (the client retries at once).
        context.waitAgain = (elicitationId) => {
          if (elicitationId !== opened.elicitationId) {
            throw new FileBridgeError(
              "INVALID_INPUT",
              "waitAgain: not the elicitation this request answered",
            );
          }
          return { resultType: "input_required", requestState: sealState(key, elicitationId, binding, true) };
        };
      }
    }
    context.elicitUrl = async (request: HostUrlElicitation) => {
      if (!capabilities?.elicitation?.url) throw noUrlElicitation();
      const requestState = sealState(key, request.elicitationId, binding);
      throw (await loadHostWork()).inputRequired(request, requestState);
    };
    return context;
  }
  const capabilities = server.initializeCapabilities();
  if (capabilities) context.clientCapabilities = capabilities;
  context.elicitUrl = async (request, options) => {
    if (!capabilities?.elicitation?.url) throw noUrlElicitation();
    return (await loadHostWork()).elicitUrlV2(full.mcpReq as never, request, options);
  };
  context.notifyElicitationComplete = async (elicitationId) => {
    await ctx.mcpReq.notify({ method: "notifications/elicitation/complete", params: { elicitationId } });
  };
  return context;
}
