import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { repoRoot } from "../../support/helpers.js";

/**
 * The tus clients a browser test (or `scripts/browser/bench-tus-clients.ts`) runs in Chromium,
 * bundled with esbuild from node_modules: `tus-js-client`, Uppy with `@uppy/tus`, and the page's own
 * client (`src/ui/client/tus-client.ts`). Each bundle sets `window.tusClient`.
 */
export type TusClientName = "tus-js-client" | "uppy" | "own";

const ENTRIES: Record<TusClientName, string> = {
  "tus-js-client": 'import * as tus from "tus-js-client"; window.tusClient = tus;',
  uppy: 'import Uppy from "@uppy/core"; import Tus from "@uppy/tus"; window.tusClient = { Uppy, Tus };',
  own: 'import { tusUpload } from "./src/ui/client/tus-client.ts"; window.tusClient = { tusUpload };',
};

const cache = new Map<TusClientName, string>();

/** The minified browser bundle of a client (cached per process). */
export async function tusClientBundle(name: TusClientName): Promise<string> {
  const known = cache.get(name);
  if (known) return known;
  const result = await build({
    stdin: { contents: ENTRIES[name], resolveDir: repoRoot, loader: "ts" },
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    target: "es2020",
    minify: true,
    legalComments: "none",
    logLevel: "silent",
    define: { "process.env.NODE_ENV": '"production"' },
  });
  const code = result.outputFiles[0]?.text ?? "";
  cache.set(name, code);
  return code;
}

/** Bytes of a bundle, minified and gzipped (level 9). */
export function gzipBytes(code: string): number {
  return gzipSync(code, { level: 9 }).length;
}

/** A blank page on the file server's origin with a file input and the client's bundle. */
export function tusClientPage(name: TusClientName): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${name}</title></head><body>
<input type="file" id="f"><script src="/interop/${name}.js"></script></body></html>`;
}

/**
 * A file server `node` hook serving `/interop/{name}.html` and `/interop/{name}.js`; `false` for
 * anything else.
 */
export async function serveTusClients(
  url: string | undefined,
  res: import("node:http").ServerResponse,
): Promise<boolean> {
  const match = /^\/interop\/(tus-js-client|uppy|own)\.(html|js)$/.exec(url ?? "");
  if (!match) return false;
  const name = match[1] as TusClientName;
  if (match[2] === "html") {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(tusClientPage(name));
  } else {
    res.writeHead(200, { "content-type": "text/javascript" }).end(await tusClientBundle(name));
  }
  return true;
}
