/**
 * The file scenario every CLI of the matrix plays in the same session as the output shapes: the
 * `connect` shim in front of a remote (saved outputs, a local file argument inside and outside
 * `--allow-dir`), `mcp-file-bridge proxy` in front of a stdio upstream (an artifact, and the inputs:
 * an upload handle obtained by HTTP between two calls, a `data:` URL, `{filename, content}`), and a
 * resource added mid-session (does the client list again after `list_changed`?).
 */
import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { cameraJpeg } from "../../support/images.js";
import { proxyCommand, shimCommand, uploadTo } from "./cli.js";
import { type ExampleServers, type HttpServerEntry, startExampleServers } from "./example-servers.js";
import type { FakeModelOptions } from "./fake-model.js";
import { type ShimRemote, startShimRemote } from "./shim-remote.js";

export type ClientKind = "claude" | "codex" | "gemini";

/** The name a client gives the model for an MCP server's tool. */
export function qualified(client: ClientKind, server: string, tool: string): string {
  if (client === "claude") return `mcp__${server}__${tool}`;
  if (client === "codex") return `mcp__${server}/${tool.replaceAll("-", "_")}`;
  return `mcp_${server}_${tool}`;
}

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** The bytes each input path carries (distinct, so a mix-up shows). */
export const INPUTS = {
  inside: Buffer.from("a local file inside --allow-dir\n"),
  handle: Buffer.from("uploaded by HTTP between two calls\n"),
  dataUrl: Buffer.from("sent as a data: URL\n"),
  object: Buffer.from("sent as {filename, content}\n"),
} as const;

/** The text the proxy's upstream writes into a file of its temp folder. */
export const PROXY_ARTIFACT_TEXT = "PROXY-ARTIFACT-TEXT";

/** The calls of the scenario, in order (a key of `FakeModel.results` is `calls[x]`'s name). */
export type ScenarioCall =
  | "shimEmbeddedPlain"
  | "shimEmbeddedStructured"
  | "shimLinkPlain"
  | "shimLinkStructured"
  | "shimInside"
  | "shimOutside"
  | "proxyArtifact"
  | "uploadUrl"
  | "inputHandle"
  | "inputDataUrl"
  | "inputObject"
  | "addResource"
  | "demoReport"
  | "containerSearch"
  | "containerNavigate"
  | "imageScreenshot"
  | "imagePhoto";

/**
 * The most characters of one tool result each client passes on whole (measured: Claude Code persists
 * ≥ 50,000 to a file, Codex CLI cuts near 11,000 (10,000 to be safe), Gemini CLI cuts at 40,000).
 */
export const CLIENT_CAPS: Record<ClientKind, number> = { claude: 50_000, codex: 10_000, gemini: 40_000 };

/** The file the demo's `summarize_files` is given (its report names it). */
export const DEMO_INPUT = {
  filename: "figures.csv",
  content: Buffer.from("q,sales\nQ3,12\n").toString("base64"),
};

export interface Scenario {
  /** MCP servers to add to the client's config, by name. */
  servers: Record<string, { command: string; args: string[] }>;
  /** MCP servers the client reaches by URL (the examples serving Streamable HTTP), by name. */
  httpServers: Record<string, HttpServerEntry>;
  /** The client's cap on one tool result, in characters ({@link CLIENT_CAPS}). */
  cap: number;
  /** Whether the client shows a result's `structuredContent` to the model (Gemini CLI ignores it). */
  showsStructured: boolean;
  /** The prompt's `CALL` lines. */
  lines: string[];
  /** The fake model's hook: uploads by HTTP when the model got the upload URL. */
  onResult: NonNullable<FakeModelOptions["onResult"]>;
  /** The name each call's result is kept under. */
  calls: Record<ScenarioCall, string>;
  /** The shim's output folder, its allowed folder, and the server temp folder of the proxy's upstream. */
  saved: string;
  work: string;
  proxyOut: string;
  /** sha256 of each input's bytes. */
  digests: Record<keyof typeof INPUTS, string>;
  /** The camera JPEG `show_photo` is given (≈ 24 MB, EXIF orientation 6 and GPS). */
  photo: Buffer;
  close(): Promise<void>;
}

/** Sets up the scenario's servers and files in `home` for one client. */
export async function fileScenario(client: ClientKind, home: string): Promise<Scenario> {
  const remote: ShimRemote = await startShimRemote();
  const examples: ExampleServers = await startExampleServers(home);
  // The output folder may not sit inside an --allow-dir (the shim refuses it): two siblings.
  const saved = join(home, "saved");
  const work = join(home, "work");
  await mkdir(work);
  await writeFile(join(work, "inside.txt"), INPUTS.inside);
  await writeFile(join(home, "outside.txt"), "never sent\n");
  // A 24 MB camera JPEG (6000 × 4000 stored, shown 4000 × 6000 by its EXIF orientation).
  const photo = await cameraJpeg(6000, 4000, { orientation: 6, quality: 97 });
  const photoPath = join(examples.shotsWorkspace, "camera.jpg");
  await writeFile(photoPath, photo);
  const shim = (tool: string) => qualified(client, "shim", tool);
  const proxy = (tool: string) => qualified(client, "proxy", tool);
  const calls: Record<ScenarioCall, string> = {
    shimEmbeddedPlain: shim("embedded_plain"),
    shimEmbeddedStructured: shim("embedded_structured"),
    shimLinkPlain: shim("link_plain"),
    shimLinkStructured: shim("link_structured"),
    shimInside: `${shim("digest")}#inside`,
    shimOutside: `${shim("digest")}#outside`,
    proxyArtifact: proxy("write_file"),
    uploadUrl: proxy("get_upload_url"),
    inputHandle: `${proxy("read_file")}#handle`,
    inputDataUrl: `${proxy("read_file")}#data-url`,
    inputObject: `${proxy("read_file")}#object`,
    addResource: qualified(client, "files", "add_resource"),
    demoReport: qualified(client, "demo", "summarize_files"),
    containerSearch: qualified(client, "container", "search"),
    containerNavigate: qualified(client, "container", "navigate"),
    imageScreenshot: qualified(client, "shots", "render_page"),
    imagePhoto: qualified(client, "shots", "show_photo"),
  };
  const args: Partial<Record<ScenarioCall, unknown>> = {
    shimInside: { file: join(work, "inside.txt") },
    shimOutside: { file: join(home, "outside.txt") },
    proxyArtifact: { name: "out.txt", text: PROXY_ARTIFACT_TEXT },
    uploadUrl: { filename: "handle.txt" },
    inputHandle: { path: "$HANDLE" },
    inputDataUrl: { path: `data:text/plain;base64,${INPUTS.dataUrl.toString("base64")}` },
    inputObject: { path: { filename: "object.txt", content: INPUTS.object.toString("base64") } },
    demoReport: { files: [DEMO_INPUT] },
    containerSearch: { query: "container-holiday" },
    containerNavigate: { uri: examples.containerUri },
    imageScreenshot: { title: "Q3 dashboard" },
    imagePhoto: { photo: photoPath },
  };
  const lines = (Object.keys(calls) as ScenarioCall[]).map((call) =>
    args[call] === undefined ? `CALL ${calls[call]}` : `CALL ${calls[call]} ${JSON.stringify(args[call])}`,
  );
  return {
    servers: {
      shim: shimCommand(remote.mcpUrl, work, saved),
      proxy: await proxyCommand(home),
    },
    httpServers: examples.servers,
    cap: CLIENT_CAPS[client],
    showsStructured: client !== "gemini",
    lines,
    calls,
    saved,
    work,
    proxyOut: join(home, "proxy-out"),
    photo,
    digests: {
      inside: sha(INPUTS.inside),
      handle: sha(INPUTS.handle),
      dataUrl: sha(INPUTS.dataUrl),
      object: sha(INPUTS.object),
    },
    async onResult(name, text, vars) {
      if (name !== calls.uploadUrl) return;
      // The model was given an upload URL and a handle: the "user" uploads, the next call passes the handle.
      await uploadTo(text, INPUTS.handle, "handle.txt");
      const handle = /upload:\/\/[^\s"\\]+/.exec(text)?.[0];
      if (handle === undefined) throw new Error(`no upload handle in what the model received: ${text}`);
      vars.set("HANDLE", handle);
    },
    async close() {
      await remote.close();
      await examples.close();
    },
  };
}
