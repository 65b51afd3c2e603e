/**
 * The file scenario's tests (`scenario.ts`), the same for every CLI: each asserts on what the model
 * received and records it for the docs' table; the last one saves the observations and fails when the
 * committed table in docs/client-compatibility.md no longer says what this run observed.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { expect, it } from "vitest";
import { CLIENT_IMAGE_BUDGETS } from "../../../src/images/index.js";
import { CONTAINER_TEXT } from "./example-servers.js";
import type { ReceivedImage } from "./fake-model.js";
import {
  committedTable,
  describeFileOutput,
  describeFitted,
  describeImage,
  describeSaved,
  downloadUrlsIn,
  loadObservations,
  normalizeTable,
  type Observations,
  renderTable,
} from "./observed.js";
import { DEMO_INPUT, type Scenario, type ScenarioCall } from "./scenario.js";
import { EMBEDDED_BYTES, REPORT_TEXT } from "./shim-remote.js";

/** The start of the embedded blob's base64: present when the bytes were forwarded too. */
const BLOB_MARKER = EMBEDDED_BYTES.toString("base64").slice(0, 24);

export interface ScenarioRun {
  scenario: Scenario;
  observations: Observations;
  /** The text the model received for one of the scenario's calls. */
  received(call: ScenarioCall): string;
  /** The images the model received for one of the scenario's calls. */
  receivedImages(call: ScenarioCall): ReceivedImage[];
  /** The `clientInfo.name` the client sends (the key of its budgets). */
  clientInfo: string;
}

/**
 * Fetches every download URL the model received; answers the bodies. The model can act on a file
 * only when one of them serves it.
 */
async function fetchAll(text: string): Promise<string[]> {
  const urls = downloadUrlsIn(text);
  expect(urls.length, `no download URL reached the model: ${text.slice(0, 500)}`).toBeGreaterThan(0);
  return Promise.all(
    urls.map(async (url) => {
      const response = await fetch(url);
      expect(response.status, url).toBe(200);
      return response.text();
    }),
  );
}

/**
 * The checks every example's file output gets: whole (under the client's cap), with a download URL
 * that answers 200 (the bodies are returned), and the file fields in `structuredContent.files`
 * when the client shows a result's `structuredContent` (`structuredKey` is a key only that JSON has).
 */
async function exampleOutput(
  run: () => ScenarioRun,
  call: ScenarioCall,
  scheme: string,
  structuredKey?: string,
): Promise<{ seen: string; bodies: string[] }> {
  const { scenario, received } = run();
  const text = received(call);
  expect(text.length, `${call}: over the client's cap`).toBeLessThan(scenario.cap);
  const bodies = await fetchAll(text);
  if (structuredKey !== undefined && scenario.showsStructured) {
    expect(text).toContain(`"${structuredKey}":`);
    expect(text).toMatch(/"files":\[\{"uri":"[a-z]+:\/\/[^"]+","name"/);
    expect(text).toMatch(/"downloadUrl":"http:\/\/127\.0\.0\.1:\d+\/files\/download\//);
  }
  return { seen: describeFileOutput(text, scheme, true), bodies };
}

/**
 * An image output of examples/screenshot: the image block the model got (within the client's image
 * budget, decoded, no EXIF), or none, and the download URLs in the same result, fetched: one must
 * serve `original`. Answers the row's phrase and whether an image block arrived.
 */
async function imageOutput(
  run: () => ScenarioRun,
  call: ScenarioCall,
  original: (bytes: Buffer) => Promise<boolean>,
): Promise<{ seen: string; image: boolean }> {
  const { received, receivedImages, clientInfo } = run();
  const budget = CLIENT_IMAGE_BUDGETS[clientInfo];
  expect(budget, `no image budget for ${clientInfo}`).toBeDefined();
  const images = receivedImages(call);
  expect(images.length, `${call}: more than one image block`).toBeLessThanOrEqual(1);
  const urls = downloadUrlsIn(received(call));
  expect(urls.length, `${call}: no download URL in the same result`).toBeGreaterThan(0);
  const bodies = await Promise.all(
    urls.map(async (url) => Buffer.from(await (await fetch(url)).arrayBuffer())),
  );
  const served = await Promise.all(bodies.map(original));
  expect(served.some(Boolean), `${call}: no download URL served the original`).toBe(true);
  const [image] = images;
  if (image === undefined) return { seen: describeImage(undefined), image: false };
  const meta = await sharp(image.data).metadata();
  expect(`image/${meta.format}`).toBe(image.mimeType);
  expect(Math.max(meta.width ?? 0, meta.height ?? 0)).toBeLessThanOrEqual(budget?.maxEdge ?? 0);
  expect(image.data.length).toBeLessThanOrEqual(budget?.maxBytes ?? 0);
  expect(meta.exif, "metadata reached the model").toBeUndefined();
  return {
    seen: describeImage({
      mimeType: image.mimeType,
      width: meta.width ?? 0,
      height: meta.height ?? 0,
      maxBytes: budget?.maxBytes ?? 0,
    }),
    image: true,
  };
}

/** Defines the scenario's tests; `relists` is whether this client lists resources again after `list_changed`. */
export function scenarioTests(run: () => ScenarioRun, relists: boolean): void {
  const saved = (call: ScenarioCall, name: string, bytes?: string) => {
    const { scenario, received } = run();
    return describeSaved(received(call), join(scenario.saved, name), bytes);
  };

  it("gets the path the connect shim saved an embedded blob to, never its bytes too (with and without structuredContent)", () => {
    const { observations } = run();
    const structured = observations.set(
      "shimEmbeddedStructured",
      saved("shimEmbeddedStructured", "data.bin", BLOB_MARKER),
    );
    const plain = observations.set("shimEmbeddedPlain", saved("shimEmbeddedPlain", "plain.bin", BLOB_MARKER));
    for (const seen of [structured, plain]) expect(seen).toMatch(/^the saved path in .*; not the bytes$/);
    expect(readFileSync(join(run().scenario.saved, "data.bin"))).toEqual(EMBEDDED_BYTES);
  });

  it("gets the path the connect shim downloaded a linked file to (with and without structuredContent)", () => {
    const { observations } = run();
    const structured = observations.set("shimLinkStructured", saved("shimLinkStructured", "report.txt"));
    const plain = observations.set("shimLinkPlain", saved("shimLinkPlain", "plain.txt"));
    for (const seen of [structured, plain]) expect(seen).toMatch(/^the saved path in /);
    expect(readFileSync(join(run().scenario.saved, "report.txt"), "utf8")).toBe(REPORT_TEXT);
  });

  it("sends a local file inside --allow-dir through the shim, and is told to use --allow-dir for one outside", () => {
    const { scenario, received, observations } = run();
    expect(received("shimInside")).toContain(scenario.digests.inside);
    const refusal = received("shimOutside");
    expect(refusal).toContain("PATH_NOT_ALLOWED");
    expect(refusal).toContain("(--allow-dir)");
    expect(refusal).not.toMatch(/server's allowed folders/);
    observations.set("shimRefusal", "`PATH_NOT_ALLOWED`, naming the shim's `--allow-dir`");
  });

  it("gets a proxy artifact as its URI and download URL, never the upstream's temp path", () => {
    const { scenario, received, observations } = run();
    const text = received("proxyArtifact");
    expect(text).not.toContain(scenario.proxyOut);
    expect(text).toMatch(/artifact:\/\/sessions\/[^"\s]+\/out\.txt/);
    const seen = observations.set("proxyArtifact", `${describeFitted(text)}; not the server temp path`);
    expect(seen).toBe("the artifact URI, the download URL; not the server temp path");
  });

  it("passes a data: URL and {filename, content} to the tool unchanged: the upstream hashed the very bytes", () => {
    const { scenario, received, observations } = run();
    expect(received("inputDataUrl")).toContain(scenario.digests.dataUrl);
    expect(received("inputObject")).toContain(scenario.digests.object);
    observations.set("inputDataUrl", "reaches the tool unchanged (sha256 verified upstream)");
    observations.set("inputObject", "reaches the tool unchanged (sha256 verified upstream)");
  });

  it("gets an upload URL and handle; after the HTTP upload the next call resolves the handle", () => {
    const { scenario, received, observations } = run();
    expect(received("uploadUrl")).toMatch(/upload:\/\//);
    expect(received("inputHandle")).toContain(scenario.digests.handle);
    observations.set(
      "inputHandle",
      "the model gets the URL and the handle; the next call gets the uploaded bytes",
    );
  });

  it("gets examples/demo's summarize_files report (withArtifacts) as a URI and a download URL serving it", async () => {
    const { observations, received } = run();
    expect(received("demoReport")).toMatch(/artifact:\/\/sessions\/[^"\s]+\/report\.md/);
    const { seen, bodies } = await exampleOutput(run, "demoReport", "artifact");
    const row = `| ${DEMO_INPUT.filename} |`;
    expect(bodies.some((body) => body.startsWith("# File report") && body.includes(row))).toBe(true);
    observations.set("demoReport", seen);
  });

  it("gets examples/file-container's search and navigate links: the wire:// URI and a download URL serving the file", async () => {
    const { observations, received } = run();
    const search = await exampleOutput(run, "containerSearch", "wire", "matches");
    expect(received("containerSearch")).toContain("CONTAINER-HOLIDAY");
    expect(search.bodies).toContain(CONTAINER_TEXT);
    observations.set("containerSearch", search.seen);
    const navigate = await exampleOutput(run, "containerNavigate", "wire", "chunks");
    expect(received("containerNavigate")).toContain("CONTAINER-HOLIDAY leave");
    expect(navigate.bodies).toContain(CONTAINER_TEXT);
    observations.set("containerNavigate", navigate.seen);
  });

  it("gets examples/screenshot's 24 MB camera JPEG as an image block within its budget, and its 4000×3000 PNG screenshot (a result with structuredContent); the originals' download URLs beside them (fetched: exact bytes)", async () => {
    const { observations, scenario, clientInfo } = run();
    const screenshot = await imageOutput(run, "imageScreenshot", async (bytes) => {
      const meta = await sharp(bytes)
        .metadata()
        .catch(() => undefined);
      return meta?.format === "png" && meta.width === 4000 && meta.height === 3000;
    });
    observations.set("imageScreenshot", screenshot.seen);
    const photo = await imageOutput(run, "imagePhoto", async (bytes) => bytes.equals(scenario.photo));
    observations.set("imagePhoto", photo.seen);
    expect(photo.seen).toMatch(/^an image block \(image\/jpeg, 1045×1568/);
    // Every client's model sees the screenshot, Codex CLI's too (it shows only `structuredContent`
    // when a result has one, so the shaped result goes to it without).
    expect(screenshot.image, `${clientInfo}: no image block`).toBe(true);
    expect(screenshot.seen).toMatch(/^an image block \(image\/png, 1568×1176/);
  }, 120_000);

  it(`${relists ? "lists" : "does not list"} resources again after list_changed`, () => {
    const { received, observations } = run();
    const report = /resources\/list before=(\d+) relisted=(yes|no)/.exec(received("addResource"));
    expect(report).not.toBeNull();
    const [, before, again] = report as RegExpExecArray;
    // Whether the client lists at start-up, not how often: Gemini CLI lists once or twice there,
    // depending on when its start-up overlaps the server's first notifications.
    const start = before === "0" ? "not listed at start-up" : "listed at start-up";
    observations.set(
      "resources",
      `${start}; ${again === "yes" ? "listed again" : "**not** listed again"} after \`list_changed\``,
    );
    expect(again).toBe(relists ? "yes" : "no");
  });
}

/** The last test of a client's file: saves its observations and compares the docs' table with them. */
export function tableTest(run: () => { observations: Observations }): void {
  it("docs/client-compatibility.md's table says what this run observed (else: npm run docs:clients)", async () => {
    await run().observations.save();
    const committed = normalizeTable(committedTable() ?? "");
    expect(committed, "the table is generated: run `npm run docs:clients` and commit").toBe(
      normalizeTable(renderTable(loadObservations())),
    );
  });
}
