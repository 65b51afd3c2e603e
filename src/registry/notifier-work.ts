import type { Attachment, PendingChange, ResourceNotifier } from "./notifier.js";

/**
 * The sending side of a registry's {@link ResourceNotifier}: changes collected per scope for
 * `notifyDelayMs`, then one `list_changed` per connected session whose scopes changed, `updated`
 * for each changed URI it subscribed to, and the deployment-wide sinks. Loaded on first use with
 * registry-work.ts: only the work reports changes.
 */
export class NotifierWork {
  constructor(private readonly state: ResourceNotifier) {
    state.flush = () => this.flush();
  }

  /** The scopes of every connected session. */
  attachedScopes(): Set<string> {
    const scopes = new Set<string>();
    for (const attachment of this.state.attachments.values()) {
      if (!attachment.host.isConnected()) continue;
      for (const scope of this.scopesOf(attachment)) scopes.add(scope);
    }
    return scopes;
  }

  changed(scope: string, listChanged: boolean, uris: string[]): void {
    const { state } = this;
    if (state.attachments.size === 0 && state.sinks.size === 0) return;
    let entry = state.pending.get(scope);
    if (!entry) {
      entry = { listChanged: false, updated: new Set() };
      state.pending.set(scope, entry);
    }
    entry.listChanged ||= listChanged;
    for (const uri of uris) entry.updated.add(uri);
    if (state.timer === undefined) {
      state.timer = setTimeout(() => this.flush(), state.notifyDelayMs);
    }
  }

  private scopesOf(attachment: Attachment): Set<string> {
    const scopes = new Set(attachment.scopes);
    if (attachment.host.isConnected()) {
      try {
        const derived = this.state.scopeOf({ sessionId: attachment.host.connectionSessionId() });
        if (typeof derived === "string" && derived.length > 0) scopes.add(derived);
      } catch {
        // A scope function that needs request headers cannot derive a scope from the transport.
      }
    }
    return scopes;
  }

  flush(): void {
    const { state } = this;
    state.timer = undefined;
    const pending = [...state.pending];
    state.pending.clear();
    if (state.sinks.size > 0) this.publish(pending);
    for (const attachment of [...state.attachments.values()]) {
      if (!attachment.host.isConnected()) {
        if (attachment.connected) state.attachments.delete(attachment.host.server);
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
      if (listChanged && state.listMode === "list") {
        attachment.host.notifyResourceListChanged().catch(() => {});
      }
    }
  }

  /**
   * Hands the changes to the sinks: one `list_changed` per flush, and `updated` for every changed
   * URI (a listen stream only gets the URIs it named, so nobody hears of a URI it did not know).
   */
  private publish(pending: Array<[string, PendingChange]>): void {
    const { state } = this;
    const listChanged = state.listMode === "list" && pending.some(([, change]) => change.listChanged);
    for (const sink of state.sinks) {
      try {
        if (listChanged) sink.resourcesChanged();
        for (const [, change] of pending) for (const uri of change.updated) sink.resourceUpdated(uri);
      } catch {
        // A failing sink must not stop the others or the attached servers.
      }
    }
  }
}
