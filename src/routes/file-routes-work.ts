/**
 * What the file routes do with a request of theirs (`createFileRoutes`, issue 39): the CORS gate and
 * preflight, the method and token checks, the dispatch to the download handler or an upload handler,
 * the error answers and CORS headers, on the web path and on the Node adapter's native paths. Loaded
 * at the routes' first request on one of their paths (`createFileRoutes` checks the options and
 * matches the path first, so a request for another route, or a server that makes the routes and
 * serves none, loads none of it).
 */
import type { Readable } from "node:stream";
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import {
  type CorsPolicy,
  type CorsVerdict,
  corsVerdict,
  isPreflight,
  preflightAnswer,
  preflightResponse,
  withCorsHeaders,
  withCorsRecord,
} from "../http/cors.js";
import {
  type DownloadAnswer,
  type NodeDownloadAnswer,
  type NodeUploadAnswer,
  requestBodyAsNode,
  requestBodyAsWeb,
} from "../http/node-fast-path.js";
import { type PlainAnswer, type RequestView, webRequestView } from "../http/request-view.js";
import { errorAnswer, errorResponse, invalidToken, methodNotAllowed, report } from "../http/responses.js";
import { firstUse } from "../internal/first-use.js";
import { textResponse } from "../internal/text-response.js";
import type { TusSettings } from "../uploads/tus/service.js";
import type { TusUploadHandler } from "../uploads/tus/tus-handler.js";
import type { ResolvedRouteOptions } from "./options.js";

const TOKEN_SEGMENT = /^[A-Za-z0-9_\-.~]+$/;
/** The policy when `allowedOrigins` is not set: same-origin requests and requests without `Origin`. */
const SAME_ORIGIN_ONLY: CorsPolicy = { kind: "list", origins: new Set() };

/**
 * A route of the file routes a path matched (`createFileRoutes`' `match`).
 *
 * @example
 * ```ts
 * const matched: RouteMatch = { route: "download", allow: "GET, HEAD", rest: [token] };
 * ```
 */
export interface RouteMatch {
  route: "download" | "upload" | "direct" | "tus";
  /** The methods the route accepts, as an `Allow` header value. */
  allow: string;
  /** The path segments after the route name. */
  rest: string[];
}

/**
 * What the routes made by `createFileRoutes` hand a request of theirs to, once loaded.
 *
 * @example
 * ```ts
 * const work = fileRoutesWork(config, tus, match);
 * const response = await work.answer(request, url, matched);
 * ```
 */
export interface FileRoutesWork {
  /** The web path's answer to a request whose path matched. */
  answer(request: Request, url: URL, matched: RouteMatch): Promise<Response>;
  /** The 405 (with `Allow`) of a method no web `Request` can carry (`TRACE`), on a matched path. */
  forbidden(matched: RouteMatch): Response;
  /** The Node adapter's native answer to a ticket `PUT` or a tus request; `undefined`: the web path answers. */
  nodeUpload: NodeUploadAnswer;
  /** The Node adapter's native download answer; `undefined`: the web path answers. */
  nodeDownload: NodeDownloadAnswer;
}

/**
 * The routes' request handling over their checked options, the tus service (when on) and their path
 * matcher.
 *
 * @example
 * ```ts
 * const { fileRoutesWork } = await import("./file-routes-work.js");
 * const work = fileRoutesWork(resolveOptions(options), undefined, match);
 * ```
 */
export function fileRoutesWork(
  config: ResolvedRouteOptions,
  tusService: TusSettings | undefined,
  match: (pathname: string) => RouteMatch | undefined,
): FileRoutesWork {
  // The upload protocol lives in uploads/: one handler per upload route, and the download path,
  // loaded on the first matched request (a failed load fails that request, and the next one tries
  // again).
  const handlers = firstUse(() => loadRouteHandlers(config));
  const tus = tusService && lazyTus(tusService);

  /** The answer of a matched route, CORS aside. */
  const answer = async (request: Request, { route, allow, rest }: RouteMatch): Promise<Response> => {
    try {
      if (route === "upload" && config.uploadPage?.wants(request)) {
        const link = { token: rest[0] as string, verifier: config.minter };
        return await config.uploadPage.render(request, {
          ...link,
          maxBytes: config.maxBytes,
          maxFiles: config.maxFiles,
        });
      }
      // Any other method (TRACE, PROPFIND, DELETE, an unknown token) is a plain 405: never onError.
      if (!allow.split(", ").includes(request.method)) return methodNotAllowed(allow, request, route);
      const { uploads, handleDownload, uploadContext } = await handlers();
      if (route === "direct")
        return await uploads.direct.handle(request, {
          ...uploadContext(config, () => requestBodyAsNode(request), rest),
          webBody: () => requestBodyAsWeb(request),
        });
      const token = rest[0] as string;
      if (!TOKEN_SEGMENT.test(token)) return errorResponse(invalidToken());
      if (route === "download") return await handleDownload(config, request, token);
      if (route === "tus" && tus)
        return await tus.handle(
          request,
          uploadContext(config, () => requestBodyAsNode(request), rest),
        );
      return await uploads.upload.handle(request, {
        ...uploadContext(config, () => requestBodyAsNode(request), rest),
        webBody: () => requestBodyAsWeb(request),
      });
    } catch (error) {
      // Server-side failures (500s, including storage errors wrapped as STORAGE_ERROR) reach onError.
      if (!isFileBridgeError(error) || error.status >= 500) report(config, error);
      return errorResponse(error);
    }
  };

  const web = async (request: Request, url: URL, matched: RouteMatch): Promise<Response> => {
    const view = webRequestView(request, url);
    // Without `allowedOrigins` no foreign origin may use the routes: a page on another origin could
    // not read the reply anyway, and must not use up a single-use link it cannot read.
    const cors = config.cors ?? SAME_ORIGIN_ONLY;
    // CORS comes first: a foreign origin that may not read replies is refused before its token is
    // read (it can never use up a ticket), and a preflight is answered before the 405 of OPTIONS.
    const gate = await corsGate(config, cors, view);
    if ("refusal" in gate) {
      const { text, status, headers } = gate.refusal;
      return textResponse(text, { status, headers });
    }
    const { verdict } = gate;
    if (verdict.kind === "allowed" && isPreflight(view)) return preflightResponse(verdict.allowOrigin);
    return withCorsHeaders(await answer(request, matched), cors, verdict);
  };

  /**
   * A native answer of one route, for the Node adapter: the same steps as `routes` and `answer` (CORS
   * and, with `preflight`, its preflight; the method; the token; `serve`; errors; CORS headers) on a
   * request view, with no web `Request` or `Response` unless a hook asks for the request.
   * `undefined` (the web path answers) when `takes` does not take the match, or, after CORS, when the
   * route does not accept the method (its 405).
   */
  const nativeAnswer =
    <A extends PlainAnswer>(
      takes: (matched: RouteMatch, view: RequestView) => boolean,
      serve: (view: RequestView, matched: RouteMatch, body: () => Readable | null) => Promise<A>,
      preflight = false,
    ) =>
    async (
      view: RequestView,
      body: () => Readable | null = () => null,
    ): Promise<A | PlainAnswer | undefined> => {
      const matched = match(view.url.pathname);
      if (!matched || !takes(matched, view)) return undefined;
      const cors = config.cors ?? SAME_ORIGIN_ONLY;
      const gate = await corsGate(config, cors, view);
      if ("refusal" in gate) return gate.refusal;
      const { verdict } = gate;
      if (preflight && verdict.kind === "allowed" && isPreflight(view))
        return preflightAnswer(verdict.allowOrigin);
      if (!matched.allow.split(", ").includes(view.method)) return undefined;
      let answer: A | PlainAnswer;
      try {
        if (!TOKEN_SEGMENT.test(matched.rest[0] as string)) throw invalidToken();
        answer = await serve(view, matched, body);
      } catch (error) {
        if (!isFileBridgeError(error) || error.status >= 500) report(config, error);
        answer = errorAnswer(error);
      }
      return withCorsRecord(answer, cors, verdict);
    };

  // A ticket PUT (an upload page decides from the web `Request` whether it wants one: the web path
  // serves it then), or a tus request, any method (`X-HTTP-Method-Override` included).
  const ticketPut = nativeAnswer(
    ({ route }, view) => route === "upload" && view.method === "PUT" && !config.uploadPage,
    async (view, { rest }, body) => {
      const { uploads, uploadContext } = await handlers();
      return uploads.upload.answer(view, uploadContext(config, body, rest));
    },
  );
  const tusRequest =
    tus &&
    nativeAnswer(
      ({ route }) => route === "tus",
      async (view, { rest }, body) => tus.answer(view, (await handlers()).uploadContext(config, body, rest)),
      true,
    );
  return {
    answer: web,
    forbidden: (matched) => methodNotAllowed(matched.allow, undefined, matched.route),
    nodeUpload: async (view, body) => (await ticketPut(view, body)) ?? tusRequest?.(view, body),
    // A download (`GET`/`HEAD`): the store's stream is written by the adapter.
    nodeDownload: nativeAnswer<DownloadAnswer>(
      ({ route }) => route === "download",
      async (view, { rest }) => (await handlers()).downloadAnswer(config, view, rest[0] as string),
    ),
  };
}

/**
 * The routes' CORS gate, for the web path and the Node adapter's native `PUT` alike: the verdict on
 * the request's origin, or the answer that refuses it (a policy that failed, or an origin that may
 * not read replies: 403 with no CORS header, so the browser hides it from the page, as it should).
 */
async function corsGate(
  config: ResolvedRouteOptions,
  cors: CorsPolicy,
  view: RequestView,
): Promise<{ verdict: CorsVerdict } | { refusal: PlainAnswer }> {
  let verdict: CorsVerdict;
  try {
    verdict = await corsVerdict(cors, view);
  } catch (error) {
    report(config, error);
    return { refusal: errorAnswer(error) };
  }
  if (verdict.kind !== "refused") return { verdict };
  const refused = new FileBridgeError("FORBIDDEN", "This origin may not use these links");
  return { refusal: errorAnswer(refused, cors.kind === "any" ? {} : { vary: "Origin" }) };
}

/** What {@link loadRouteHandlers} gives: the upload handlers and the download handler. */
interface RouteHandlers {
  uploads: ReturnType<typeof import("./route-handlers.js").uploadHandlers>;
  handleDownload: typeof import("./route-handlers.js").handleDownload;
  downloadAnswer: typeof import("./route-handlers.js").downloadAnswer;
  uploadContext: typeof import("./route-handlers.js").uploadContext;
}

/** The routes' handlers, their code loaded now (`route-handlers.ts`). */
async function loadRouteHandlers(config: ResolvedRouteOptions): Promise<RouteHandlers> {
  const { uploadHandlers, handleDownload, downloadAnswer, uploadContext } = await import(
    "./route-handlers.js"
  );
  return { uploads: uploadHandlers(config), handleDownload, downloadAnswer, uploadContext };
}

/**
 * The tus endpoint, its protocol code loaded on the first tus request: the options were checked
 * when the routes were made (`tusService`), and a server that never sees a tus upload loads six
 * modules fewer at start (docs/performance.md, Session 16).
 */
function lazyTus(service: TusSettings): Pick<TusUploadHandler, "handle" | "answer"> {
  // A load that fails fails the requests that asked for it; the next request loads again.
  const handler = firstUse(() =>
    import("../uploads/tus/tus-handler.js").then((tus) => new tus.TusUploadHandler(service)),
  );
  return {
    async handle(request, ctx) {
      return (await handler()).handle(request, ctx);
    },
    async answer(view, ctx) {
      return (await handler()).answer(view, ctx);
    },
  };
}
