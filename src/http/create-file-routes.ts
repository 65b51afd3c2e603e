/**
 * The public factory of the file routes: checks the options once, then dispatches each request by
 * path and method to the download or upload handlers.
 */
import { isFileBridgeError } from "../errors/file-bridge-error.js";
import { handleDownload } from "./download.js";
import { resolveOptions } from "./options.js";
import { errorResponse, invalidToken, methodNotAllowed, report } from "./responses.js";
import type { FileRoutes, FileRoutesOptions } from "./types.js";
import { handleDirectUpload, handleTicketUpload } from "./upload.js";

export { DEFAULT_INLINE_TYPES } from "./options.js";
export type {
  DirectUploadTarget,
  DownloadEvent,
  FileRoutes,
  FileRoutesOptions,
  FileRoutesRegistry,
  FileRoutesTokenVerifier,
  UploadReplyFile,
  VerifiedTokenClaims,
} from "./types.js";

const TOKEN_SEGMENT = /^[A-Za-z0-9_\-.~]+$/;

/**
 * Creates the upload/download HTTP routes as one web-standard `(Request) => Promise<Response |
 * undefined>` function. It answers `undefined` for requests outside its base path, so it composes
 * with any router; mount it on Node with `toNodeHandler` from `mcp-file-bridge/node`, on hono with
 * `app.all("/files/*", (c) => routes(c.req.raw))`, or call it from any fetch-style server.
 *
 * Routes (with the default base path `/files`):
 * - `GET|HEAD /files/download/{token}`: streams a stored file (ranges, ETag, safe disposition).
 * - `POST|PUT /files/upload/{token}`: multipart (one or many files) or a raw body; all-or-nothing.
 *   Optional digests: `sha256` form fields, one per file part in file order (empty skips a file),
 *   or `X-Content-SHA256` / `?sha256=` for a raw body.
 * - `POST|PUT /files/scopes/{scope}/files/{name}`: direct upload for trusted callers (`authorize`).
 *
 * @example
 * ```ts
 * const minter = new SignedUrlMinter({ secret, baseUrl: "http://127.0.0.1:3000", state });
 * const routes = createFileRoutes({ store, minter, state });
 * const response = await routes(new Request(url)); // undefined = not a file route
 * ```
 */
export function createFileRoutes(options: FileRoutesOptions): FileRoutes {
  const config = resolveOptions(options);
  const base = config.basePath;

  return async (request: Request): Promise<Response | undefined> => {
    let pathname: string;
    try {
      pathname = new URL(request.url).pathname;
    } catch {
      return undefined;
    }
    if (!pathname.startsWith(`${base}/`)) return undefined;
    const segments = pathname.slice(base.length + 1).split("/");
    const [route, ...rest] = segments;
    try {
      if ((route === "download" || route === "upload") && rest.length === 1) {
        const token = rest[0] as string;
        if (!TOKEN_SEGMENT.test(token)) return errorResponse(invalidToken());
        if (route === "download") {
          if (request.method !== "GET" && request.method !== "HEAD") return methodNotAllowed("GET, HEAD");
          return await handleDownload(config, request, token);
        }
        if (request.method !== "POST" && request.method !== "PUT") return methodNotAllowed("POST, PUT");
        return await handleTicketUpload(config, request, token);
      }
      if (route === "scopes" && rest.length >= 3 && rest[1] === "files" && config.authorize) {
        if (request.method !== "POST" && request.method !== "PUT") return methodNotAllowed("POST, PUT");
        return await handleDirectUpload(config, request, rest[0] as string, rest.slice(2).join("/"));
      }
      return undefined;
    } catch (error) {
      // Server-side failures (500s, including storage errors wrapped as STORAGE_ERROR) reach onError.
      if (!isFileBridgeError(error) || error.status >= 500) report(config, error);
      return errorResponse(error);
    }
  };
}
