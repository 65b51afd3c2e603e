/**
 * What the Node adapter's native-path tests share: one HTTP request from `node:http` (`fetch` would
 * make web objects of its own in the test's process), and a count of the web `Request`s,
 * `Response`s and `Headers` the process makes, which those paths must not.
 */
import { request as httpRequest } from "node:http";

/** What a request got: its status, headers and whole body. */
export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Sends one request (no kept-alive socket) and reads its answer whole. */
export function send(
  url: string,
  method = "GET",
  headers: Record<string, string> = {},
  body?: Buffer,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** The web classes the native paths must not make. */
export const WEB_CLASSES = ["Request", "Response", "Headers"] as const;
export type WebClass = (typeof WEB_CLASSES)[number];

/**
 * Counts the web `Request`s, `Response`s and `Headers` made in this process: {@link install} puts
 * counting subclasses in place of the globals (whatever makes one is counted while `counting`),
 * {@link restore} puts the globals back.
 */
export class WebObjects {
  made: Record<WebClass, number> = { Request: 0, Response: 0, Headers: 0 };
  counting = true;
  readonly #originals = new Map<WebClass, unknown>();

  install(): void {
    for (const name of WEB_CLASSES) {
      const original = globalThis[name] as unknown as new (...args: unknown[]) => object;
      this.#originals.set(name, original);
      const count = this;
      (globalThis as Record<string, unknown>)[name] = class extends original {
        constructor(...args: unknown[]) {
          super(...args);
          if (count.counting) count.made[name] += 1;
        }
      };
    }
  }

  reset(): void {
    this.made = { Request: 0, Response: 0, Headers: 0 };
  }

  restore(): void {
    for (const [name, original] of this.#originals) (globalThis as Record<string, unknown>)[name] = original;
    this.#originals.clear();
  }
}
