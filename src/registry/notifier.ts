import type { McpHost } from "../mcp/host.js";
import type { ScopeFunction } from "../scope/scope.js";

/**
 * The servers a registry is attached to, and the notifications they get: changes are collected
 * per scope for `notifyDelayMs`, then each connected session whose scopes changed gets one
 * `notifications/resources/list_changed`, and `notifications/resources/updated` for each changed
 * URI it subscribed to.
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
  private readonly pending = new Map<string, PendingChange>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly notifyDelayMs: number,
    private readonly listMode: "list" | "none",
    private readonly scopeOf: ScopeFunction,
  ) {}

  /** The scopes of every connected session. */
  attachedScopes(): Set<string> {
    const scopes = new Set<string>();
    for (const attachment of this.attachments.values()) {
      if (!attachment.host.isConnected()) continue;
      for (const scope of this.scopesOf(attachment)) scopes.add(scope);
    }
    return scopes;
  }

  changed(scope: string, listChanged: boolean, uris: string[]): void {
    if (this.attachments.size === 0 && this.sinks.size === 0) return;
    let entry = this.pending.get(scope);
    if (!entry) {
      entry = { listChanged: false, updated: new Set() };
      this.pending.set(scope, entry);
    }
    entry.listChanged ||= listChanged;
    for (const uri of uris) entry.updated.add(uri);
    if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), this.notifyDelayMs);
    }
  }

  private scopesOf(attachment: Attachment): Set<string> {
    const scopes = new Set(attachment.scopes);
    if (attachment.host.isConnected()) {
      try {
        const derived = this.scopeOf({ sessionId: attachment.host.connectionSessionId() });
        if (typeof derived === "string" && derived.length > 0) scopes.add(derived);
      } catch {
        // A scope function that needs request headers cannot derive a scope from the transport.
      }
    }
    return scopes;
  }

  flush(): void {
    this.timer = undefined;
    const pending = [...this.pending];
    this.pending.clear();
    if (this.sinks.size > 0) this.publish(pending);
    for (const attachment of [...this.attachments.values()]) {
      if (!attachment.host.isConnected()) {
        if (attachment.connected) this.attachments.delete(attachment.host.server);
        continue;
      }
      attachment.connected = true;
      const scopes = this.scopesOf(attachment);
      let listChanged = false;
      for (const [scope, change] of pending) {
        if (change.listChanged && scopes.has(scope)) listChanged = true;
        if (attachment.subscriptions.size === 0) continue;
        for (const uri of change.updated) {
          const subscribed = attachment.subscriptions.get(`${scope}\n${uri}`);
          if (subscribed !== undefined) {
            attachment.host.notifyResourceUpdated(subscribed).catch(() => {});
          }
        }
      }
      // One list_changed per session per flush, however many of its scopes changed.
      if (listChanged && this.listMode === "list") {
        attachment.host.notifyResourceListChanged().catch(() => {});
      }
    }
  }

  /**
   * Hands the changes to the sinks: one `list_changed` per flush, and `updated` for every changed
   * URI (a listen stream only gets the URIs it named, so nobody hears of a URI it did not know).
   */
  private publish(pending: Array<[string, PendingChange]>): void {
    const listChanged = this.listMode === "list" && pending.some(([, change]) => change.listChanged);
    for (const sink of this.sinks) {
      try {
        if (listChanged) sink.resourcesChanged();
        for (const [, change] of pending) for (const uri of change.updated) sink.resourceUpdated(uri);
      } catch {
        // A failing sink must not stop the others or the attached servers.
      }
    }
  }

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
      this.flush();
    }
  }
}
