/**
 * Browser code shared by the upload page and the MCP App upload widget: file picking (picker or drag
 * and drop), client-side limits, the upload with a progress bar per file, clear error messages and
 * the done state. One file goes through the ticket's tus endpoint (resumable: it survives dropped
 * connections and reloads, see `tus-client.ts`); several files, or a server without tus, go as one
 * multipart XHR request. It binds to the markup of `src/ui/markup.ts` by element id.
 *
 * This file runs in the browser only: `scripts/browser/build-ui.ts` bundles it (with page-main.ts and
 * widget-main.ts) into `src/ui/generated/`. The package never imports it at runtime.
 */
import { formatAgainst, formatBytes, formatLimit, unitsOf } from "../../internal/byte-size.js";
import { expiryText, limitsText } from "../page-text.js";
import { messageFor } from "./messages.js";

import {
  defaultStorage,
  frameThrottle,
  type TusOutcome,
  tusEndpointFor,
  tusUpload,
  type UrlStorage,
} from "./tus-client.js";

export { messageFor } from "./messages.js";

/** Where and how much may be uploaded. */
export interface UploadTarget {
  /** The signed upload URL (multipart POST). */
  uploadUrl: string;
  /** The ticket's tus endpoint; `null` for none. @default derived from `uploadUrl` (`…/tus/{token}`) */
  tusUrl?: string | null;
  /** Size cap per file, in bytes. */
  maxBytes: number;
  /** Most files per upload. */
  maxFiles: number;
  /** Expiry of the link, ISO 8601. */
  expiresAt?: string | undefined;
}

/** One stored file of the upload reply. */
export interface UploadedFile {
  handle: string;
  uri?: string;
  /** Absent after a tus upload (its answer names the handle only). */
  id?: string;
  name: string;
  size: number;
  /** Absent after a tus upload through a server that does not send `Upload-Sha256`. */
  sha256?: string;
  mimeType: string;
  expiresAt?: string;
}

/** How an uploader behaves. */
export interface UploaderOptions {
  /** Where to upload; `null` until known (the widget waits for its tool result). */
  target: UploadTarget | null;
  /** A fresh target when there is none or the link expired (the widget calls its tool again). */
  refreshTarget?: () => Promise<UploadTarget | null>;
  /** Runs once the upload committed; its text (if any) is shown in the done state. */
  onDone?: (files: UploadedFile[]) => Promise<string | undefined> | string | undefined;
  /** When a `multiple` pick comes back empty (Claude's mobile apps), pick one file at a time. */
  singlePickFallback?: boolean;
  /** What the limits line says while there is no target. */
  pendingText?: string;
  /** Where a tus upload URL is kept to resume after a reload. @default `localStorage`, else memory */
  storage?: UrlStorage;
}

/** A mounted uploader. */
export interface Uploader {
  /** Sets (or replaces) where to upload. */
  setTarget(target: UploadTarget | null): void;
}

interface Entry {
  file: File;
  row: HTMLLIElement;
  progress: HTMLProgressElement;
  state: HTMLSpanElement;
  remove: HTMLButtonElement;
}

function byId<T extends HTMLElement>(doc: Document, id: string): T {
  const element = doc.getElementById(id);
  if (!element) throw new Error(`upload UI: #${id} is missing`);
  return element as T;
}

/** Binds the upload UI in `doc` (markup from `src/ui/markup.ts`). */
export function mountUploader(doc: Document, options: UploaderOptions): Uploader {
  const picker = byId<HTMLInputElement>(doc, "picker");
  const drop = byId<HTMLElement>(doc, "drop");
  const limits = byId<HTMLElement>(doc, "limits");
  const error = byId<HTMLElement>(doc, "error");
  const list = byId<HTMLUListElement>(doc, "files");
  const upload = byId<HTMLButtonElement>(doc, "upload");
  const status = byId<HTMLElement>(doc, "status");
  const done = byId<HTMLElement>(doc, "done");
  const doneText = byId<HTMLElement>(doc, "done-text");
  const pickHint = byId<HTMLElement>(doc, "pick-hint");

  let target = options.target;
  const storage = options.storage ?? defaultStorage();
  let entries: Entry[] = [];
  let busy = false;
  let finished = false;

  const showError = (message: string) => {
    error.textContent = message;
    error.hidden = false;
  };
  const clearError = () => {
    error.textContent = "";
    error.hidden = true;
  };

  const root = doc.getElementById("uploader");
  const expiryTime = doc.getElementById("expiry-time");
  let expired = false;
  let succeeded = false;
  let expiryTimer: ReturnType<typeof setTimeout> | undefined;

  const renderLimits = () => {
    if (!target) {
      limits.textContent = options.pendingText ?? "Waiting for the upload link…";
      return;
    }
    let text = limitsText(target.maxFiles, target.maxBytes);
    const expires = target.expiresAt ? new Date(target.expiresAt) : undefined;
    if (expires && !Number.isNaN(expires.getTime())) {
      // The page has its own line (rendered in UTC by the server); the widget says it in the limits.
      if (expiryTime) expiryTime.textContent = expiryText(expires);
      else text += ` The link expires ${expiryText(expires)}.`;
      watchExpiry(expires);
    }
    limits.textContent = text;
  };

  /** A link with no way to a fresh one (the page) turns to the expired state when its time is up. */
  const watchExpiry = (expires: Date) => {
    if (expiryTimer !== undefined) clearTimeout(expiryTimer);
    if (options.refreshTarget) return;
    const check = () => {
      const left = expires.getTime() - Date.now();
      if (left > 0) {
        expiryTimer = setTimeout(check, Math.min(left, 2 ** 31 - 1));
        return;
      }
      // An upload under way started in time: its reply decides.
      if (busy || finished) return;
      expired = true;
      fail(messageFor("TOKEN_EXPIRED", 410), true);
    };
    check();
  };

  /** What the person sees, as `data-state` on the root: styles and tests key on it. */
  const stateOf = (): string => {
    if (expired) return "expired";
    if (finished) return succeeded ? "done" : "error";
    if (busy) return "uploading";
    if (!error.hidden) return "error";
    return entries.length > 0 ? "ready" : "waiting";
  };

  const refresh = () => {
    upload.disabled = busy || finished || entries.length === 0;
    picker.disabled = busy || finished;
    for (const entry of entries) {
      entry.remove.disabled = busy || finished;
      entry.remove.hidden = finished;
    }
    upload.hidden = finished;
    drop.hidden = finished;
    upload.textContent = entries.length > 1 ? `Upload ${entries.length} files` : "Upload";
    if (root) root.dataset.state = stateOf();
    const label = doc.getElementById("expiry-label");
    if (expired && label) label.textContent = "Link expired";
  };

  const tooLarge = (file: File) => target !== null && file.size > target.maxBytes;

  const addFiles = (files: File[]) => {
    if (busy || finished) return;
    clearError();
    const problems: string[] = [];
    for (const file of files) {
      if (tooLarge(file)) {
        const limit = target?.maxBytes ?? 0;
        problems.push(
          `${file.name} is too large (${formatAgainst(file.size, limit)}). The limit is ${formatLimit(limit)}.`,
        );
        continue;
      }
      if (target && entries.length >= target.maxFiles) {
        problems.push(
          `You can upload at most ${target.maxFiles} ${target.maxFiles === 1 ? "file" : "files"} here; ${file.name} was not added.`,
        );
        continue;
      }
      entries.push(makeEntry(file));
    }
    if (problems.length > 0) showError(problems.join(" "));
    status.textContent =
      entries.length === 0 ? "" : `${entries.length} ${entries.length === 1 ? "file" : "files"} ready.`;
    refresh();
  };

  const makeEntry = (file: File): Entry => {
    const row = doc.createElement("li");
    const name = doc.createElement("span");
    name.className = "name";
    name.textContent = file.name;
    const size = doc.createElement("span");
    size.className = "size";
    size.textContent = formatBytes(file.size, target ? unitsOf(target.maxBytes) : "binary");
    const progress = doc.createElement("progress");
    progress.max = 100;
    progress.value = 0;
    progress.setAttribute("aria-label", `Upload progress of ${file.name}`);
    const state = doc.createElement("span");
    state.className = "state";
    state.textContent = "Ready";
    const remove = doc.createElement("button");
    remove.type = "button";
    remove.className = "secondary";
    remove.textContent = "Remove";
    remove.setAttribute("aria-label", `Remove ${file.name}`);
    row.append(name, size, progress, state, remove);
    list.append(row);
    const entry: Entry = { file, row, progress, state, remove };
    remove.addEventListener("click", () => {
      entries = entries.filter((other) => other !== entry);
      row.remove();
      status.textContent =
        entries.length === 0 ? "" : `${entries.length} ${entries.length === 1 ? "file" : "files"} ready.`;
      refresh();
      picker.focus();
    });
    return entry;
  };

  picker.addEventListener("change", () => {
    const files = Array.from(picker.files ?? []);
    picker.value = "";
    if (files.length === 0 && picker.multiple && options.singlePickFallback) {
      // Some hosts (Claude's mobile apps) return no file for a `multiple` pick; single picks work.
      picker.multiple = false;
      pickHint.textContent = "Your device picks one file at a time: choose a file, then the next one.";
      pickHint.hidden = false;
      return;
    }
    addFiles(files);
  });

  drop.addEventListener("dragover", (event) => {
    event.preventDefault();
    if (event.dataTransfer) event.dataTransfer.dropEffect = busy || finished ? "none" : "copy";
    drop.classList.add("over");
  });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (event) => {
    event.preventDefault();
    drop.classList.remove("over");
    addFiles(Array.from(event.dataTransfer?.files ?? []));
  });

  const setProgress = (loaded: number, total: number) => {
    // One multipart body carries every file in order; each part adds a little framing.
    const sizes = entries.map((entry) => entry.file.size);
    const sum = sizes.reduce((a, b) => a + b, 0);
    const framing = entries.length > 0 ? Math.max(0, total - sum) / entries.length : 0;
    let offset = 0;
    entries.forEach((entry, index) => {
      const size = sizes[index] ?? 0;
      const start = offset + framing;
      const sent = Math.min(Math.max(loaded - start, 0), size);
      const percent = size === 0 ? (loaded >= start ? 100 : 0) : Math.floor((sent / size) * 100);
      // 100% is shown once the server answered: the bytes are sent, but not yet stored.
      entry.progress.value = Math.min(percent, 99);
      entry.state.textContent = `${Math.min(percent, 99)}%`;
      offset = start + size;
    });
  };

  const send = (url: string) =>
    new Promise<{ status: number; body: unknown }>((resolve) => {
      const form = new FormData();
      for (const entry of entries) form.append("file", entry.file, entry.file.name);
      const xhr = new XMLHttpRequest();
      xhr.open("POST", url);
      xhr.setRequestHeader("Accept", "application/json");
      // Progress events come often; draw at most once per frame so the page keeps up with the wire.
      let latest: { loaded: number; total: number } | undefined;
      let scheduled = false;
      xhr.upload.addEventListener("progress", (event) => {
        if (!event.lengthComputable) return;
        latest = { loaded: event.loaded, total: event.total };
        if (scheduled) return;
        scheduled = true;
        requestAnimationFrame(() => {
          scheduled = false;
          if (latest && xhr.readyState !== XMLHttpRequest.DONE) setProgress(latest.loaded, latest.total);
        });
      });
      xhr.addEventListener("load", () => {
        let body: unknown = null;
        try {
          body = JSON.parse(xhr.responseText);
        } catch {
          body = null;
        }
        resolve({ status: xhr.status, body });
      });
      xhr.addEventListener("error", () => resolve({ status: 0, body: null }));
      xhr.addEventListener("abort", () => resolve({ status: 0, body: null }));
      xhr.send(form);
    });

  const codeOf = (body: unknown): { code: string; limit?: number } => {
    const failure = (body as { error?: { code?: unknown; data?: { limit?: unknown } } } | null)?.error;
    const code = typeof failure?.code === "string" ? failure.code : "UNKNOWN";
    const limit = typeof failure?.data?.limit === "number" ? failure.data.limit : target?.maxBytes;
    return limit === undefined ? { code } : { code, limit };
  };

  const fail = (message: string, final: boolean) => {
    for (const entry of entries) {
      entry.row.classList.add("failed");
      entry.state.textContent = "Not uploaded";
      entry.progress.value = 0;
    }
    showError(message);
    status.textContent = "";
    busy = false;
    if (final) {
      finished = true;
      picker.disabled = true;
    }
    refresh();
  };

  const start = async () => {
    if (busy || finished || entries.length === 0) return;
    clearError();
    busy = true;
    refresh();
    if (!target && options.refreshTarget) target = await options.refreshTarget().catch(() => null);
    renderLimits();
    if (!target) {
      fail(messageFor("NO_TARGET", 0), false);
      return;
    }
    const oversized = entries.filter((entry) => tooLarge(entry.file));
    if (oversized.length > 0) {
      busy = false;
      showError(
        `${oversized.map((entry) => entry.file.name).join(", ")}: larger than the limit of ${formatLimit(target.maxBytes)}. Remove ${oversized.length === 1 ? "it" : "them"} to upload the rest.`,
      );
      refresh();
      return;
    }
    for (const entry of entries) {
      entry.row.classList.remove("failed");
      entry.state.textContent = "0%";
    }
    status.textContent = "Uploading…";
    let reply = await sendOnce(target);
    if (reply.status === 410 && codeOf(reply.body).code === "TOKEN_EXPIRED" && options.refreshTarget) {
      const fresh = await options.refreshTarget().catch(() => null);
      if (fresh) {
        target = fresh;
        renderLimits();
        reply = await sendOnce(target);
      }
    }
    if (reply.status === 201) {
      await succeed(reply.files);
      return;
    }
    if (reply.status === 0) {
      fail(messageFor("NETWORK", 0), false);
      return;
    }
    const { code, limit } = codeOf(reply.body);
    const final = code === "TOKEN_EXPIRED" || code === "TOKEN_ALREADY_USED" || code === "INVALID_TOKEN";
    if (code === "TOKEN_EXPIRED") expired = true;
    fail(messageFor(code, reply.status, limit), final);
  };

  const succeed = async (files: UploadedFile[]) => {
    entries.forEach((entry) => {
      entry.progress.value = 100;
      entry.state.textContent = "Uploaded";
      entry.row.classList.add("stored");
    });
    busy = false;
    finished = true;
    succeeded = true;
    status.textContent = `Uploaded ${files.length} ${files.length === 1 ? "file" : "files"}.`;
    refresh();
    let extra: string | undefined;
    try {
      extra = await options.onDone?.(files);
    } catch {
      extra = undefined;
    }
    if (extra) doneText.textContent = extra;
    done.hidden = false;
    done.focus();
  };

  /**
   * One upload attempt: one file through tus (it retries and resumes by itself), else — several
   * files, or no tus endpoint on the server — the multipart request.
   */
  const sendOnce = async (
    to: UploadTarget,
  ): Promise<{ status: number; body: unknown; files: UploadedFile[] }> => {
    const endpoint =
      entries.length === 1 ? tusEndpointFor(to.uploadUrl, to.tusUrl, doc.location.href) : undefined;
    const only = entries[0];
    if (endpoint && only) {
      const outcome = await sendTus(endpoint, only);
      if (outcome.kind === "stored") {
        const file = only.file;
        const stored: UploadedFile = {
          handle: outcome.handle ?? "",
          name: file.name,
          size: file.size,
          mimeType: file.type || "application/octet-stream",
          ...(outcome.sha256 ? { sha256: outcome.sha256 } : {}),
        };
        return { status: 201, body: null, files: outcome.handle ? [stored] : [] };
      }
      if (outcome.kind === "refused") return { ...outcome, files: [] };
      if (outcome.kind === "offline") return { status: 0, body: null, files: [] };
    }
    const reply = await send(to.uploadUrl);
    const files =
      reply.status === 201 ? ((reply.body as { files?: UploadedFile[] } | null)?.files ?? []) : [];
    return { ...reply, files };
  };

  const sendTus = (endpoint: string, entry: Entry): Promise<TusOutcome> => {
    const draw = frameThrottle((sent: number, total: number) => {
      if (finished) return;
      const percent = total === 0 ? 99 : Math.min(99, Math.floor((sent / total) * 100));
      entry.progress.value = percent;
      entry.state.textContent = `${percent}%`;
    });
    return tusUpload({
      endpoint,
      file: entry.file,
      storage,
      onProgress: (sent, total) => {
        if (status.dataset.retrying) {
          delete status.dataset.retrying;
          status.textContent = "Uploading…";
        }
        draw(sent, total);
      },
      onRetry: (delay) => {
        status.dataset.retrying = "1";
        status.textContent = `The connection dropped. Trying again in ${Math.max(1, Math.round(delay / 1000))} s; the upload continues where it stopped.`;
      },
    });
  };

  upload.addEventListener("click", () => {
    void start();
  });

  renderLimits();
  refresh();
  return {
    setTarget(next) {
      target = next;
      renderLimits();
      refresh();
    },
  };
}
