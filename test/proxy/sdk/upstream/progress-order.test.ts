/**
 * Progress that arrives in the same read as its result still reaches the caller, in order, on both
 * SDK generations: a hand-written upstream writes three progress notifications and the result in
 * one write (left alone, both SDKs settle the result first and drop the progress).
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { UpstreamConnection } from "../../../../src/proxy/sdk/upstream/upstream-connection.js";
import { UpstreamConnectionV2 } from "../../../../src/proxy/sdk/upstream/upstream-connection-v2.js";
import type { ProgressUpdate, UpstreamPort } from "../../../../src/proxy/types.js";

const BURST = join(import.meta.dirname, "..", "..", "fixtures", "burst-upstream.mjs");
const target = { command: process.execPath, args: [BURST] };

const open: UpstreamPort[] = [];
afterEach(async () => {
  for (const port of open.splice(0)) await port.close();
});

describe.each([
  ["SDK v1", () => new UpstreamConnection({ name: "burst", target, stderr: "ignore" })],
  ["SDK v2", () => new UpstreamConnectionV2({ name: "burst", target, stderr: "ignore" })],
])("%s upstream connection", (_label, connect) => {
  it("relays progress read in one chunk with the result, before the result", async () => {
    const port = connect();
    open.push(port);
    const seen: Array<ProgressUpdate | "result"> = [];
    for (let round = 0; round < 5; round++) {
      seen.length = 0;
      const result = await port.request(
        "tools/call",
        { name: "burst", arguments: {} },
        { onprogress: (update) => seen.push(update) },
      );
      seen.push("result");
      expect(result.content).toEqual([{ type: "text", text: "burst done" }]);
      expect(seen).toEqual([
        { progress: 1, total: 3 },
        { progress: 2, total: 3 },
        { progress: 3, total: 3 },
        "result",
      ]);
    }
  });
});
