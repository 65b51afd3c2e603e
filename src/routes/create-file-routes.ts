/**
 * The public factory of the file routes: checks the options once and matches each request's path;
 * what a request of the routes' paths runs (CORS, the dispatch by path and method to the download
 * handler or an upload handler of `uploads/`, the error answers) is in `file-routes-work.ts`, loaded
 * at the first such request (issue 39).
 */
import {
  setForbiddenMethodAnswer,
  setNodeDownloadAnswer,
  setNodeUploadAnswer,
} from "../http/node-fast-path.js";
import { firstUse } from "../internal/first-use.js";
import { tusService } from "../uploads/tus/service.js";
import type { FileRoutesWork, RouteMatch } from "./file-routes-work.js";
import { resolveOptions } from "./options.js";
import type { FileRoutes, FileRoutesOptions } from "./types.js";

export { DEFAULT_INLINE_TYPES } from "./options.js";
export type {
  DirectUploadTarget,
  DownloadEvent,
  FileRoutes,
  FileRoutesOptions,
  FileRoutesRegistry,
  UploadHandler,
  UploadPageLink,
  UploadPageRenderer,
  UploadRateLimitInfo,
  UploadReply,
  UploadReplyFile,
  UploadRequestContext,
  UploadWatchdog,
  VerifiedTokenClaims,
} from "./types.js";

/** `file-routes-work.ts`, loaded at the first request on a path of any routes; callers share one load. */
const loadFileRoutesWork = firstUse(() => import("./file-routes-work.js"));

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
 * - `GET|HEAD /files/upload/{token}` with `Accept: text/html`: the upload page, when one is injected
 *   (`uploadPage: uploadPageRenderer()` from `mcp-file-bridge/ui`).
 * - `POST|OPTIONS /files/tus/{token}`, `HEAD|PATCH|DELETE|OPTIONS /files/tus/{token}/{id}`: the tus
 *   1.0 endpoint behind the same tickets (resumable uploads; `tus: false` turns it off).
 * - `OPTIONS` preflight of every route, for the origins in `allowedOrigins` (CORS).
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
  const tus = config.tus ? tusService(config, config.tus) : undefined;

  /** Which route a path is, and the methods it accepts; `undefined` when it is not a file route. */
  const match = (pathname: string): RouteMatch | undefined => {
    if (!pathname.startsWith(`${base}/`)) return undefined;
    const [route, ...rest] = pathname.slice(base.length + 1).split("/");
    if (route === "download" && rest.length === 1) return { route, allow: "GET, HEAD", rest };
    if (route === "upload" && rest.length === 1) return { route, allow: "POST, PUT", rest };
    if (route === "tus" && tus && rest.length === 1) return { route, allow: "POST, OPTIONS", rest };
    if (route === "tus" && tus && rest.length === 2) {
      return { route, allow: "HEAD, PATCH, DELETE, OPTIONS, POST", rest };
    }
    if (route === "scopes" && rest.length >= 3 && rest[1] === "files" && config.authorize) {
      return { route: "direct", allow: "POST, PUT", rest };
    }
    return undefined;
  };

  // What the routes do with a request of theirs, loaded at the first one; once there, requests use
  // it without a wait. A load that fails rejects the requests that asked for it (the Node adapter
  // answers 500), and the next request loads again.
  let ready: FileRoutesWork | undefined;
  const load = firstUse(async () => {
    const { fileRoutesWork } = await loadFileRoutesWork();
    ready ??= fileRoutesWork(config, tus, match);
    return ready;
  });

  const routes: FileRoutes = async (request: Request): Promise<Response | undefined> => {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return undefined;
    }
    const matched = match(url.pathname);
    if (!matched) return undefined;
    return (ready ?? (await load())).answer(request, url, matched);
  };
  // The Node adapter asks this for methods a web `Request` cannot carry (TRACE): 405 with `Allow`.
  setForbiddenMethodAnswer(routes, (pathname) => {
    const matched = match(pathname);
    if (!matched) return undefined;
    return ready ? ready.forbidden(matched) : load().then((work) => work.forbidden(matched));
  });
  // The Node adapter's native paths: a ticket PUT or a tus request, and a download (`GET`/`HEAD`).
  // Another path, or another route's, is the web path's (`undefined`), and loads nothing here.
  setNodeUploadAnswer(routes, async (view, body) => {
    const route = match(view.url.pathname)?.route;
    if (route !== "upload" && route !== "tus") return undefined;
    return (ready ?? (await load())).nodeUpload(view, body);
  });
  setNodeDownloadAnswer(routes, async (view) => {
    if (match(view.url.pathname)?.route !== "download") return undefined;
    return (ready ?? (await load())).nodeDownload(view);
  });
  return routes;
}
