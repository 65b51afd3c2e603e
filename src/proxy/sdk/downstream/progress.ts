import type { JsonObject, ProgressUpdate, RequestContext } from "../../types.js";
import { progressTokenOf } from "./dispatch.js";

/** A progress notification on its way downstream. */
export interface ProgressNotification {
  method: "notifications/progress";
  params: ProgressUpdate & { progressToken: string | number };
}

/**
 * Relays one request's progress downstream, when its caller asked for progress (a `progressToken`
 * in `_meta`), and lets the handler wait until every update was sent: the result must not overtake
 * them.
 *
 * @example
 * ```ts
 * const relay = new ProgressRelay(params, (n) => extra.sendNotification(n));
 * const result = await core.callTool(params, { ...ctx, ...relay.context() });
 * await relay.flushed();
 * ```
 */
export class ProgressRelay {
  readonly #token: string | number | undefined;
  readonly #send: (notification: ProgressNotification) => Promise<void>;
  #sending: Promise<unknown>[] = [];

  constructor(params: JsonObject | undefined, send: (notification: ProgressNotification) => Promise<void>) {
    this.#token = progressTokenOf(params);
    this.#send = send;
  }

  /** The `progress` member of the request context (nothing when no progress was asked for). */
  context(): Pick<RequestContext, "progress"> {
    const token = this.#token;
    if (token === undefined) return {};
    return {
      progress: (update) => {
        this.#sending.push(
          this.#send({ method: "notifications/progress", params: { ...update, progressToken: token } }).catch(
            () => undefined,
          ),
        );
      },
    };
  }

  /** Waits until every update sent so far went out (or failed). */
  async flushed(): Promise<void> {
    await Promise.allSettled(this.#sending);
    this.#sending = [];
  }
}
