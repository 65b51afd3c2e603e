/**
 * The upload page's and the widget's own tus 1.0 client (creation, core, expiration): one file,
 * `PATCH`ed in chunks through `XMLHttpRequest` (upload progress), resumed from the server's offset
 * (`HEAD`) after a dropped connection with back-off between attempts, and after a reload from the
 * upload URL kept in `localStorage` under the file's fingerprint. Chosen over bundling
 * `tus-js-client`: 1.3 KB against 16.2 KB gzipped, the same speed (docs/resumable-uploads.md, "From
 * the upload page and the MCP App widget").
 *
 * Browser only: bundled into the page and the widget by `scripts/browser/build-ui.ts`.
 */

/** How a tus upload ended. */
export type TusOutcome =
  /** Stored: the ticket's handle (`Upload-Handle`) and the file's sha256 (`Upload-Sha256`), as sent. */
  | { kind: "stored"; handle: string | undefined; sha256: string | undefined }
  /** The server has no tus endpoint for this URL: send the file in one request instead. */
  | { kind: "unsupported" }
  /** Refused (link expired, used, too large…): the status and the JSON error body, if any. */
  | { kind: "refused"; status: number; body: unknown }
  /** The connection stayed down through every retry. */
  | { kind: "offline" };

/** The storage a resumable upload URL is kept in (`localStorage`), or none. */
export type UrlStorage = Pick<Storage, "getItem" | "setItem" | "removeItem">;

/** Options of {@link tusUpload}. */
export interface TusUploadOptions {
  /** The creation URL (`{basePath}/tus/{token}`). */
  endpoint: string;
  file: File;
  /** Bytes per `PATCH`. @default 16 MiB */
  chunkSize?: number;
  /** Waits before each retry of a failed request (the last repeats no further). */
  retryDelays?: readonly number[];
  /** Bytes the server has (or, during a `PATCH`, that were sent) and the file size. */
  onProgress?: (sent: number, total: number) => void;
  /** Called before waiting `delayMs` to retry after a failure. */
  onRetry?: (delayMs: number, attempt: number) => void;
  /** Where the upload URL is kept for a resume after reload; `null` to keep none. */
  storage?: UrlStorage | null;
}

/** The default back-off: about two minutes in all before giving up. */
export const TUS_RETRY_DELAYS: readonly number[] = [500, 1000, 2000, 4000, 8000, 15_000, 30_000, 60_000];
/** The default chunk size. */
export const TUS_CHUNK_SIZE = 16 * 1024 * 1024;

const TUS_HEADERS = { "Tus-Resumable": "1.0.0" };

interface Reply {
  status: number;
  header(name: string): string | null;
  body: unknown;
}

/** One request through XHR; status 0 when the connection failed. */
function request(
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: Blob,
  onSent?: (loaded: number) => void,
): Promise<Reply> {
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, url);
    for (const [name, value] of Object.entries({ ...TUS_HEADERS, ...headers })) {
      xhr.setRequestHeader(name, value);
    }
    if (onSent) xhr.upload.addEventListener("progress", (event) => onSent(event.loaded));
    const failed = () => resolve({ status: 0, header: () => null, body: null });
    xhr.addEventListener("load", () => {
      let parsed: unknown = null;
      try {
        parsed = xhr.responseText ? JSON.parse(xhr.responseText) : null;
      } catch {
        parsed = null;
      }
      resolve({ status: xhr.status, header: (name) => xhr.getResponseHeader(name), body: parsed });
    });
    xhr.addEventListener("error", failed);
    xhr.addEventListener("abort", failed);
    xhr.addEventListener("timeout", failed);
    xhr.send(body ?? null);
  });
}

/** The key a file's upload URL is kept under: the endpoint (one per ticket) and the file. */
export function fingerprint(endpoint: string, file: File): string {
  return `mcp-file-bridge:tus:${endpoint}:${file.name}:${file.size}:${file.lastModified}`;
}

function base64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function storedFrom(reply: Reply): TusOutcome {
  return {
    kind: "stored",
    handle: reply.header("Upload-Handle") ?? undefined,
    sha256: reply.header("Upload-Sha256") ?? undefined,
  };
}

/** Whether a failed request is worth retrying: the connection, a server error, a busy lock. */
function retryable(status: number): boolean {
  return status === 0 || status === 409 || status === 423 || status === 429 || status >= 500;
}

function safely<T>(work: () => T): T | undefined {
  try {
    return work();
  } catch {
    return undefined; // storage blocked (sandboxed iframe, private mode)
  }
}

/**
 * Uploads `file` through tus: resumes a kept upload of the same file, else creates one; `PATCH`es
 * from the server's offset; after a failure waits (back-off), asks the offset again (`HEAD`) and
 * goes on. Never throws.
 */
export async function tusUpload(options: TusUploadOptions): Promise<TusOutcome> {
  const { endpoint, file } = options;
  const chunkSize = options.chunkSize ?? TUS_CHUNK_SIZE;
  const delays = options.retryDelays ?? TUS_RETRY_DELAYS;
  const storage = options.storage === undefined ? null : options.storage;
  const key = fingerprint(endpoint, file);
  const progress = (sent: number) => options.onProgress?.(Math.min(sent, file.size), file.size);
  let attempt = 0;
  /** Waits before a retry; `false` once the retries are used up. */
  const backOff = async (): Promise<boolean> => {
    const delay = delays[attempt];
    if (delay === undefined) return false;
    attempt += 1;
    options.onRetry?.(delay, attempt);
    await new Promise((resolve) => setTimeout(resolve, delay));
    return true;
  };

  let url: string | undefined = safely(() => storage?.getItem(key)) ?? undefined;
  let offset = 0;
  for (;;) {
    if (url === undefined) {
      const created = await request("POST", endpoint, {
        "Upload-Length": String(file.size),
        "Upload-Metadata": `filename ${base64(file.name)},filetype ${base64(file.type || "application/octet-stream")}`,
      });
      if (created.status === 0 || created.status >= 500) {
        if (await backOff()) continue;
        return { kind: "offline" };
      }
      if (created.header("Tus-Resumable") === null) return { kind: "unsupported" };
      const location = created.header("Location");
      if (created.status !== 201 || !location) {
        return { kind: "refused", status: created.status, body: created.body };
      }
      if (file.size === 0) return storedFrom(created);
      url = new URL(location, endpoint).href;
      const kept = url;
      safely(() => storage?.setItem(key, kept));
      offset = 0;
    } else {
      const head = await request("HEAD", url, {});
      if (head.status === 200) {
        offset = Number(head.header("Upload-Offset") ?? 0);
        progress(offset);
      } else if (head.status === 404 || head.status === 410 || head.status === 403) {
        // Gone (expired, terminated, or a kept URL of an older link): start over.
        safely(() => storage?.removeItem(key));
        url = undefined;
        if (head.status === 410) return { kind: "refused", status: 410, body: head.body };
        continue;
      } else {
        if (await backOff()) continue;
        return { kind: "offline" };
      }
    }
    const outcome = await patchAll(url, file, offset, chunkSize, progress, () => {
      attempt = 0;
    });
    if (outcome.kind === "stored") {
      safely(() => storage?.removeItem(key));
      return outcome;
    }
    if (outcome.kind === "refused" && !retryable(outcome.status)) {
      if (outcome.status === 404 || outcome.status === 410) safely(() => storage?.removeItem(key));
      return outcome;
    }
    if (!(await backOff())) return { kind: "offline" };
  }
}

/** `PATCH`es from `offset` to the end; a failure answers `refused` with its status (0: the connection). */
async function patchAll(
  url: string,
  file: File,
  start: number,
  chunkSize: number,
  progress: (sent: number) => void,
  advanced: () => void,
): Promise<TusOutcome> {
  let offset = start;
  for (;;) {
    const from = offset;
    const reply = await request(
      "PATCH",
      url,
      { "Upload-Offset": String(from), "Content-Type": "application/offset+octet-stream" },
      file.slice(from, Math.min(from + chunkSize, file.size)),
      (loaded) => progress(from + loaded),
    );
    if (reply.status !== 204) return { kind: "refused", status: reply.status, body: reply.body };
    offset = Number(reply.header("Upload-Offset") ?? Number.NaN);
    if (!Number.isSafeInteger(offset)) return { kind: "refused", status: 0, body: null };
    advanced();
    progress(offset);
    if (offset >= file.size) return storedFrom(reply);
  }
}

/**
 * The tus endpoint of a ticket: `tusUrl` when given (`null`: none), else derived from its upload URL
 * (`…/upload/{token}` → `…/tus/{token}`) when it has that form.
 */
export function tusEndpointFor(
  uploadUrl: string,
  tusUrl: string | null | undefined,
  base: string,
): string | undefined {
  if (tusUrl === null) return undefined;
  try {
    if (tusUrl !== undefined) return new URL(tusUrl, base).href;
    const url = new URL(uploadUrl, base);
    if (!/\/upload\/[^/]+$/.test(url.pathname)) return undefined;
    url.pathname = url.pathname.replace(/\/upload\/([^/]+)$/, "/tus/$1");
    url.search = "";
    return url.href;
  } catch {
    return undefined;
  }
}

/** `localStorage` when the page may use it, else a map that lives as long as the page. */
export function defaultStorage(): UrlStorage {
  try {
    const storage = window.localStorage;
    storage.getItem("mcp-file-bridge:probe");
    return storage;
  } catch {
    const memory = new Map<string, string>();
    return {
      getItem: (key) => memory.get(key) ?? null,
      setItem: (key, value) => void memory.set(key, value),
      removeItem: (key) => void memory.delete(key),
    };
  }
}

/** Calls `draw` with the latest arguments at most once per animation frame. */
export function frameThrottle<A extends unknown[]>(draw: (...args: A) => void): (...args: A) => void {
  let latest: A | undefined;
  let scheduled = false;
  return (...args: A) => {
    latest = args;
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(() => {
      scheduled = false;
      if (latest) draw(...latest);
    });
  };
}
