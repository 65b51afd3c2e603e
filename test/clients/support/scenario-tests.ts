/**
 * The file scenario's tests (`scenario.ts`), the same for every CLI: each asserts on what the model
 * received and records it for the docs' table; the last one saves the observations and fails when the
 * committed table in docs/client-compatibility.md no longer says what this run observed.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import {
  committedTable,
  describeFitted,
  describeSaved,
  loadObservations,
  normalizeTable,
  type Observations,
  renderTable,
} from "./observed.js";
import type { Scenario, ScenarioCall } from "./scenario.js";
import { EMBEDDED_BYTES, REPORT_TEXT } from "./shim-remote.js";

/** The start of the embedded blob's base64: present when the bytes were forwarded too. */
const BLOB_MARKER = EMBEDDED_BYTES.toString("base64").slice(0, 24);

export interface ScenarioRun {
  scenario: Scenario;
  observations: Observations;
  /** The text the model received for one of the scenario's calls. */
  received(call: ScenarioCall): string;
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

  it(`${relists ? "lists" : "does not list"} resources again after list_changed`, () => {
    const { received, observations } = run();
    const report = /resources\/list before=(\d+) relisted=(yes|no)/.exec(received("addResource"));
    expect(report).not.toBeNull();
    const [, before, again] = report as RegExpExecArray;
    const start =
      before === "0"
        ? "not listed at start-up"
        : `listed ${before === "1" ? "once" : `${before} times`} at start-up`;
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
