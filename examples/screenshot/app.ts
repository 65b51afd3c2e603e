/**
 * The screenshot example: a server whose tools make images, and the model that called them sees them.
 * - `render_page` draws a page (title, lines of text) as a PNG at the size asked, 4000 × 3000 by
 *   default: a stand-in for a browser or device screenshot. `artifacts.withArtifacts` captures it.
 * - `show_photo` takes a photo in any accepted form (a path in the workspace, an upload handle, a
 *   `data:` URL) and shows it to the model: `artifacts.image()`.
 * Both answer with an image block shaped to the calling client's budget (≤ 1,568 px, what its media
 * budget holds, EXIF orientation applied, GPS stripped) and the full-resolution original as an
 * artifact: `resource_link`, text with its URI and signed download URL, `structuredContent.files`
 * (for Codex CLI, whose model sees only `structuredContent` when there is one, the JSON goes as text).
 * Needs `sharp` (the package's optional peer) for the shaping and, here, for drawing the page.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import sharp from "sharp";
import { z } from "zod";
import {
  Artifacts,
  createFileRoutes,
  defaultScope,
  FileBridge,
  fileInput,
  fsStore,
  memoryState,
  ResourceRegistry,
  SignedUrlMinter,
  withFileOutputs,
} from "../../src/index.js";
import { clientNameOf } from "../../src/mcp/index.js";
import { toNodeHandler } from "../../src/node/index.js";

export interface ScreenshotAppOptions {
  /** Folder for stored files, temp files and the workspace `show_photo` may read paths from. */
  dataDir: string;
  /** Base URL the HTTP server is reachable at (signed URLs point there), or a function giving it. */
  baseUrl: string | (() => string);
}

/** An SVG page of `width` × `height`: a title bar and lines of small text, as a browser would show them. */
export function pageSvg(title: string, width: number, height: number): string {
  const size = Math.max(12, Math.round(height / 60));
  const xml = (text: string) => text.replace(/[<>&"]/g, (c) => `&#${c.charCodeAt(0)};`);
  const lines: string[] = [];
  for (let y = size * 5, i = 1; y < height - size; y += size * 1.6, i += 1) {
    lines.push(
      `<text x="${size * 2}" y="${y}" font-family="sans-serif" font-size="${size}" fill="#222">${i}. ${xml(title)}: row ${i} of the report, ${(i * 37) % 100} percent</text>`,
    );
  }
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<rect width="100%" height="${size * 3}" fill="#2d6cdf"/>`,
    `<text x="${size * 2}" y="${size * 2}" font-family="sans-serif" font-size="${size * 1.4}" fill="#fff">${xml(title)}</text>`,
    ...lines,
    "</svg>",
  ].join("");
}

export function createScreenshotApp({ dataDir, baseUrl }: ScreenshotAppOptions) {
  const store = fsStore(join(dataDir, "store"));
  const state = memoryState();
  const minter = new SignedUrlMinter({ secret: randomBytes(32), baseUrl, state });
  const registry = new ResourceRegistry({ store, minter });
  const bridge = new FileBridge({
    roots: [join(dataDir, "workspace")],
    tmpDir: join(dataDir, "tmp"),
    maxBytes: 64 * 1024 * 1024,
  });
  bridge.addResolver(registry.resolver());
  // `images: {}`: shaping is asked for, so a missing `sharp` is an error rather than a quiet link.
  const artifacts = new Artifacts({ store, minter, registry, tmpDir: join(dataDir, "tmp"), images: {} });
  const routes = toNodeHandler(createFileRoutes({ store, minter, state, registry }));

  function createServer(): McpServer {
    const server = new McpServer({ name: "mcp-file-bridge-screenshot", version: "1.0.0" });
    registry.attach(server);
    const client = () => clientNameOf(server);

    server.registerTool(
      "render_page",
      {
        description:
          "Renders a page as a PNG screenshot and shows it to you; the full-size original is linked.",
        inputSchema: {
          title: z.string().max(200),
          width: z.number().int().min(16).max(8000).optional(),
          height: z.number().int().min(16).max(8000).optional(),
          output: z.string().optional(),
        },
        // No `outputSchema`: Codex CLI shows its model only `structuredContent` when a result has
        // one, so `withArtifacts` sends it this tool's shaped screenshot without it (the JSON then
        // follows as text). A tool that declares one passes `outputSchema: true` and keeps it.
      },
      artifacts.withArtifacts(
        async (args: { title: string; width?: number; height?: number; output?: string }) => {
          const width = args.width ?? 4000;
          const height = args.height ?? 3000;
          await sharp(Buffer.from(pageSvg(args.title, width, height)))
            .png()
            .toFile(args.output as string);
          return {
            content: [{ type: "text", text: `Rendered "${args.title}" at ${width}×${height}.` }],
            structuredContent: { width, height },
          };
        },
        { outputPathArg: "output", outputName: "page.png", client },
      ),
    );

    server.registerTool(
      "show_photo",
      {
        description:
          "Shows you a photo (a path in the workspace, an upload handle or a data: URL); the original is linked.",
        inputSchema: { photo: fileInput() },
      },
      bridge.withFiles(
        async (args, extra) => {
          const photo = args.photo;
          const scope = defaultScope(extra);
          const shown = await artifacts.image({
            scope,
            path: photo.path,
            name: photo.name,
            client: client(),
          });
          return withFileOutputs({ content: [{ type: "text", text: `The photo ${photo.name}.` }] }, shown);
        },
        { fields: ["photo"], pass: "file" },
      ),
    );
    return server;
  }

  return {
    createServer,
    registry,
    routes,
    store,
    workspace: join(dataDir, "workspace"),
    async close() {
      await registry.close();
      await store.close?.();
      await state.close?.();
    },
  };
}
