import type { McpHost } from "../mcp/host.js";
import type { ScopeFunction } from "../scope/scope.js";

/**
 * The servers a registry is attached to, and the notifications they get: changes are collected
 * per scope for `notifyDelayMs`, then each connected session whose scopes changed gets one
 * `notifications/resources/list_changed`, and `notifications/resources/updated` for each changed
 * URI it subscribed to. This is the state `attach`, `publishTo` and `close` use synchronously; the
 * collecting and sending (notifier-work.ts) run only once the registry's work is loaded, since only
 * the work reports changes.
 */

export interface Attachment {
  readonly host: McpHost;
  /** Scopes learned from requests, or given to `attach`. */
  readonly scopes: Set<string>;
  /** `${scope}\n${canonical uri}` → the URI as the client sent it (notifications echo it). */
  readonly subscriptions: Map<string, string>;
  connected: boolean;
}

/**
 * Where changes go besides the attached servers: a deployment-wide channel such as SDK v2's
 * `createMcpHandler(...).notify`, which feeds every open `subscriptions/listen` stream (2026-07-28
 * servers are built per request and have no connection to send on).
 */
export interface ChangeSink {
  resourcesChanged(): void;
  resourceUpdated(uri: string): void;
}

export interface PendingChange {
  listChanged: boolean;
  updated: Set<string>;
}

export class ResourceNotifier {
  /** By the host's server object. */
  readonly attachments = new Map<object, Attachment>();
  /** Deployment-wide channels (`publishTo`). */
  readonly sinks = new Set<ChangeSink>();
  /** Changes waiting for the timer, by scope. */
  readonly pending = new Map<string, PendingChange>();
  /** Set while changes wait. */
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Sends the waiting changes (set by notifier-work.ts, which sets the timer too). */
  flush: (() => void) | undefined;

  constructor(
    readonly notifyDelayMs: number,
    readonly listMode: "list" | "none",
    readonly scopeOf: ScopeFunction,
  ) {}

  /**
   * The change feed may have missed changes: the deployment-wide channels (whose listeners this
   * replica cannot tell apart by scope) get one `list_changed` so their clients list again.
   */
  resynced(): void {
    if (this.listMode !== "list") return;
    for (const sink of this.sinks) {
      try {
        sink.resourcesChanged();
      } catch {
        // A failing sink must not stop the others.
      }
    }
  }

  /** Sends pending notifications now and stops the timer. */
  close(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.flush?.();
    }
  }
}
