import type { LookupAddress, lookup as nodeLookup } from "node:dns";
import type { IncomingMessage } from "node:http";
import type { LookupFunction } from "node:net";
import { FileBridgeError, isFileBridgeError } from "../../errors/file-bridge-error.js";
import { type HostPattern, hostAllowed, normalizeHost } from "./host-patterns.js";
import { classifyAddress } from "./ip-address.js";
import { isIP } from "./ip-literal.js";

export { type HostPattern, hostAllowed, normalizeHost, parseHostPattern } from "./host-patterns.js";

export interface SafeFetchOptions {
  readonly allowHosts: readonly HostPattern[];
  readonly timeoutMs: number;
  readonly maxRedirects: number;
  readonly allowPrivateAddresses: boolean;
  /**
   * A further check of every URL, the first and each redirect's (`HOST_NOT_ALLOWED` when it says
   * no): a host attachment's download stays on the allowed origins (scheme, host and port).
   */
  readonly allowUrl?: ((url: URL) => boolean) | undefined;
  readonly ca?: string | Buffer | undefined;
  /** Refuse early when Content-Length says more. */
  readonly maxBytes: number;
  readonly signal?: AbortSignal | undefined;
}

/** A response whose status was 2xx; `body` must be consumed or `cancel()`ed. */
export interface SafeResponse {
  /** The final URL after redirects. */
  readonly url: URL;
  readonly contentType: string | undefined;
  readonly contentLength: number | undefined;
  /** The file name from `Content-Disposition`, if any. */
  readonly fileName: string | undefined;
  /** The body; errors are mapped to `TIMEOUT`, `ABORTED` or `FETCH_FAILED`. */
  readonly body: AsyncIterable<Buffer>;
  /** Stops the transfer and releases the timer. */
  cancel(): void;
}

function refuse(message: string, host: string): FileBridgeError {
  return new FileBridgeError("HOST_NOT_ALLOWED", message, { data: { host } });
}

/** Checks a URL before any connection: scheme, allow-list, and IP-literal hosts. */
export function checkFetchUrl(
  url: URL,
  options: Pick<SafeFetchOptions, "allowHosts" | "allowPrivateAddresses" | "allowUrl">,
): void {
  const host = normalizeHost(url.hostname);
  if (url.protocol !== "https:") throw refuse("only https:// URLs may be fetched", host);
  if (!hostAllowed(host, options.allowHosts)) throw refuse(`host ${host} is not on the allow-list`, host);
  if (options.allowUrl !== undefined && !options.allowUrl(url)) {
    throw refuse(`origin ${url.origin} is not an allowed origin`, host);
  }
  if (isIP(host) !== 0 && !options.allowPrivateAddresses) {
    const kind = classifyAddress(host);
    if (kind !== null) throw refuse(`address ${host} is ${kind}`, host);
  }
}

/**
 * A DNS lookup that drops every non-public address and fails with `HOST_NOT_ALLOWED` when none is
 * left. Used as the socket's `lookup`, so the check happens on the very addresses the socket
 * connects to (no DNS-rebinding window between check and connect).
 */
export function guardedLookup(allowPrivate: boolean, dnsLookup: typeof nodeLookup): LookupFunction {
  return ((hostname: string, options: { all?: boolean } & Record<string, unknown>, callback: Function) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error);
      const usable = allowPrivate ? addresses : addresses.filter((a) => classifyAddress(a.address) === null);
      if (usable.length === 0) {
        return callback(refuse(`host ${hostname} resolves only to private or reserved addresses`, hostname));
      }
      if (options.all) return callback(null, usable);
      const first = usable[0] as LookupAddress;
      return callback(null, first.address, first.family);
    });
  }) as unknown as LookupFunction;
}

function parseContentDisposition(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const star = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(value);
  if (star?.[1]) {
    try {
      return decodeURIComponent(star[1].trim());
    } catch {
      // fall through to the plain parameter
    }
  }
  const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/.exec(value);
  return plain ? (plain[1] ?? plain[2])?.replace(/\\(.)/g, "$1") : undefined;
}

/**
 * GETs an `https://` URL with the guards a server fetching user-supplied URLs needs: host allow-list,
 * private / loopback / link-local / … addresses refused (IP literals before connecting, names at
 * connect time), redirects re-checked hop by hop, an overall timeout (`TIMEOUT`), caller abort
 * (`ABORTED`), non-2xx → `FETCH_FAILED`, and a Content-Length over the cap → `FILE_TOO_LARGE`.
 */
export async function safeFetch(input: string, options: SafeFetchOptions): Promise<SafeResponse> {
  let url: URL;
  try {
    url = new URL(input);
  } catch (cause) {
    throw new FileBridgeError("INVALID_INPUT", "the URL cannot be parsed", { cause });
  }
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, options.timeoutMs);
  const onAbort = () => controller.abort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) controller.abort();
  let finished = false;
  const cleanup = () => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  };
  const mapError = (error: unknown): FileBridgeError => {
    if (timedOut) return new FileBridgeError("TIMEOUT", "fetching the URL took too long", { cause: error });
    if (options.signal?.aborted)
      return new FileBridgeError("ABORTED", "the fetch was aborted", { cause: error });
    if (isFileBridgeError(error)) return error;
    return new FileBridgeError("FETCH_FAILED", "the URL could not be fetched", { cause: error });
  };
  // Loaded on the first fetch: node:https and node:tls cost a server that never fetches a URL about
  // 14 ms and 1 MiB at start (docs/performance.md, Session 16).
  const [{ request }, { rootCertificates }, dns] = await Promise.all([
    import("node:https"),
    import("node:tls"),
    import("node:dns"),
  ]);
  const ca = options.ca === undefined ? undefined : [...rootCertificates, options.ca.toString()];
  const lookup = guardedLookup(options.allowPrivateAddresses, dns.lookup);

  const get = (target: URL) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(target, {
        method: "GET",
        agent: false,
        lookup,
        signal: controller.signal,
        headers: { accept: "*/*", "user-agent": "mcp-file-bridge" },
        ...(ca ? { ca } : {}),
      });
      req.once("response", resolve);
      req.once("error", reject);
      req.end();
    });

  try {
    for (let hop = 0; ; hop++) {
      if (controller.signal.aborted) throw new Error("aborted");
      checkFetchUrl(url, options);
      const response = await get(url);
      const status = response.statusCode ?? 0;
      if (status >= 300 && status < 400 && response.headers.location) {
        response.resume();
        response.destroy();
        if (hop >= options.maxRedirects) {
          throw new FileBridgeError("FETCH_FAILED", "too many redirects", { data: { status } });
        }
        url = new URL(response.headers.location, url);
        continue;
      }
      if (status < 200 || status > 299) {
        response.resume();
        response.destroy();
        throw new FileBridgeError("FETCH_FAILED", `the server answered HTTP ${status}`, { data: { status } });
      }
      const lengthHeader = response.headers["content-length"];
      const contentLength = lengthHeader && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : undefined;
      if (contentLength !== undefined && contentLength > options.maxBytes) {
        response.destroy();
        throw new FileBridgeError("FILE_TOO_LARGE", `the remote file is ${contentLength} bytes`, {
          data: { limit: options.maxBytes, size: contentLength },
        });
      }
      const finalUrl = url;
      async function* body(): AsyncGenerator<Buffer> {
        try {
          for await (const chunk of response) yield chunk as Buffer;
          if (timedOut || options.signal?.aborted) throw new Error("aborted");
        } catch (error) {
          throw mapError(error);
        } finally {
          response.destroy();
          cleanup();
        }
      }
      return {
        url: finalUrl,
        contentType: response.headers["content-type"],
        contentLength,
        fileName: parseContentDisposition(response.headers["content-disposition"]),
        body: body(),
        cancel: () => {
          response.destroy();
          cleanup();
        },
      };
    }
  } catch (error) {
    cleanup();
    throw mapError(error);
  }
}
