/**
 * `FileBridgeStateObject`: the Durable Object a `durableObjectState` keeps its keys in. One SQLite
 * table; every operation is one synchronous statement run inside the object's single thread, so a
 * `setIfAbsent` cannot interleave with another request: exactly one of any number of concurrent
 * claims of a key wins, whichever Worker isolate or colo they come from.
 */
import type { DurableObjectStateLike, SqlStorageLike } from "./bindings.js";

/**
 * One request to a {@link FileBridgeStateObject} (JSON body of a `POST`), as `durableObjectState` sends it.
 *
 * @example
 * ```ts
 * const request: StateRequest = { op: "setIfAbsent", key: "jti:abc", value: "1", expiresAt: Date.now() + 300_000, now: Date.now() };
 * ```
 */
export interface StateRequest {
  op: "get" | "set" | "setIfAbsent" | "delete";
  key: string;
  /** The value's JSON text (`set`, `setIfAbsent`). */
  value?: string;
  /** Expiry, in milliseconds since the epoch; absent = none. */
  expiresAt?: number;
  /** The caller's clock: expiry is judged by it (so a test clock works end to end). */
  now: number;
}

/** How long after the last expiry the alarm comes back to clean up. */
const ALARM_SLACK_MS = 60_000;

/**
 * The Durable Object class behind {@link durableObjectState}. Export it from your Worker's entry
 * module and bind it (SQLite storage: `new_sqlite_classes` in the migration).
 *
 * @example
 * ```ts
 * // worker.ts
 * export { FileBridgeStateObject } from "mcp-file-bridge/cloudflare";
 * // wrangler.jsonc
 * // "durable_objects": { "bindings": [{ "name": "STATE", "class_name": "FileBridgeStateObject" }] },
 * // "migrations": [{ "tag": "v1", "new_sqlite_classes": ["FileBridgeStateObject"] }]
 * ```
 */
export class FileBridgeStateObject {
  private readonly sql: SqlStorageLike;

  constructor(
    private readonly ctx: DurableObjectStateLike,
    _env?: unknown,
  ) {
    this.sql = ctx.storage.sql;
    this.sql.exec("CREATE TABLE IF NOT EXISTS mfb_state (k TEXT PRIMARY KEY, v TEXT NOT NULL, e INTEGER)");
  }

  /** Answers one {@link StateRequest}: `{ value }`, `{ set }` or `{ deleted }`. */
  async fetch(request: Request): Promise<Response> {
    let body: StateRequest;
    try {
      body = (await request.json()) as StateRequest;
    } catch {
      return new Response("bad request", { status: 400 });
    }
    const { op, key, now } = body;
    if (typeof key !== "string" || typeof now !== "number")
      return new Response("bad request", { status: 400 });
    const expiry = typeof body.expiresAt === "number" ? body.expiresAt : null;
    switch (op) {
      case "get": {
        const row = this.sql.exec("SELECT v, e FROM mfb_state WHERE k = ?", key).toArray()[0];
        const live = row !== undefined && (row.e === null || (row.e as number) > now);
        return Response.json({ value: live ? (row?.v as string) : null });
      }
      case "set": {
        if (typeof body.value !== "string") return new Response("bad request", { status: 400 });
        this.sql.exec("INSERT OR REPLACE INTO mfb_state (k, v, e) VALUES (?, ?, ?)", key, body.value, expiry);
        await this.scheduleCleanup(expiry);
        return Response.json({ set: true });
      }
      case "setIfAbsent": {
        if (typeof body.value !== "string") return new Response("bad request", { status: 400 });
        // Two statements, no await between them: nothing else runs in this object meanwhile.
        this.sql.exec("DELETE FROM mfb_state WHERE k = ? AND e IS NOT NULL AND e <= ?", key, now);
        const inserted = this.sql
          .exec(
            "INSERT INTO mfb_state (k, v, e) VALUES (?, ?, ?) ON CONFLICT(k) DO NOTHING RETURNING k",
            key,
            body.value,
            expiry,
          )
          .toArray();
        if (inserted.length > 0) await this.scheduleCleanup(expiry);
        return Response.json({ set: inserted.length > 0 });
      }
      case "delete": {
        const deleted = this.sql
          .exec("DELETE FROM mfb_state WHERE k = ? RETURNING e", key)
          .toArray()
          .filter((row) => row.e === null || (row.e as number) > now);
        return Response.json({ deleted: deleted.length > 0 });
      }
      default:
        return new Response("bad request", { status: 400 });
    }
  }

  /** Removes expired keys (the alarm set when a key with a TTL was written). */
  async alarm(): Promise<void> {
    const at = Date.now();
    this.sql.exec("DELETE FROM mfb_state WHERE e IS NOT NULL AND e <= ?", at);
    const next = this.sql.exec("SELECT MIN(e) AS e FROM mfb_state WHERE e IS NOT NULL").toArray()[0]?.e;
    if (typeof next === "number") await this.ctx.storage.setAlarm(Math.max(next, at) + ALARM_SLACK_MS);
  }

  private async scheduleCleanup(expiresAt: number | null): Promise<void> {
    if (expiresAt === null) return;
    const current = await this.ctx.storage.getAlarm();
    const wanted = Math.max(expiresAt, Date.now()) + ALARM_SLACK_MS;
    if (current === null || current > wanted) await this.ctx.storage.setAlarm(wanted);
  }
}
