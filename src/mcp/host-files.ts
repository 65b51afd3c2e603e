/** The `files/*` requests of the files extension as a host mounts them (see `host.ts`). */

/**
 * The params of a `files/*` request (the files extension, SEP-2631 draft and its variant): a loose
 * object, checked by the piece that serves it (the draft's shapes still move).
 *
 * @example
 * ```ts
 * const params: HostFilesParams = { name: "a.pdf", mimeType: "application/pdf", size: 1024 };
 * ```
 */
export interface HostFilesParams {
  [key: string]: unknown;
  _meta?: Record<string, unknown>;
}

/**
 * The result of a `files/*` request.
 *
 * @example
 * ```ts
 * const result: HostFilesResult = { file: { uri: "upload://sessions/…/01j…" } };
 * ```
 */
export interface HostFilesResult {
  [key: string]: unknown;
}

/**
 * The `files/*` request methods a host can mount (custom methods: SDK v1 by a request schema of our
 * own, SDK v2 by name with a params schema).
 *
 * @example
 * ```ts
 * for (const method of HOST_FILES_METHODS) console.log(host.canHandle(method));
 * ```
 */
export const HOST_FILES_METHODS = [
  "files/authorizeUpload",
  "files/authorizeDownload",
  "files/prepareUpload",
  "files/completeUpload",
  "files/getDownload",
] as const;
