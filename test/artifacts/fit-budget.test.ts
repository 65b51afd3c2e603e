/**
 * `Artifacts.fit` and the hosts' own limits: Claude Code's `anthropic/maxResultSizeChars` on a
 * result whose inline text passes its 50,000-character cap, and Claude Desktop's 1 MB ceiling that
 * no budget raises.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MAX_INLINE_RESULT_CHARS } from "../../src/artifacts/inline-budget.js";
import { Artifacts, memoryStore } from "../../src/index.js";

const stores: Array<ReturnType<typeof memoryStore>> = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close?.();
});

function artifacts(): Artifacts {
  const store = memoryStore();
  stores.push(store);
  return new Artifacts({ store });
}

const textResult = (chars: number) => ({ content: [{ type: "text" as const, text: "x".repeat(chars) }] });

describe("Artifacts.fit and the hosts' limits", () => {
  it("marks a result over Claude Code's 50,000-character cap with anthropic/maxResultSizeChars (a raised budget)", async () => {
    const fit = artifacts();
    const raised = await fit.fit(textResult(60_000), { scope: "s", budget: { text: 90_000 } });
    expect(raised.content).toEqual(textResult(60_000).content);
    expect(raised._meta?.["anthropic/maxResultSizeChars"]).toBe(60_000);
    const under = await fit.fit(textResult(40_000), { scope: "s", client: "claude-code" });
    expect(under._meta?.["anthropic/maxResultSizeChars"]).toBeUndefined();
  });

  it("keeps a value the tool set itself and never asks for more than 500,000", async () => {
    const fit = artifacts();
    const own = await fit.fit(
      { ...textResult(60_000), _meta: { "anthropic/maxResultSizeChars": 70_000 } },
      { scope: "s", budget: { text: 90_000 } },
    );
    expect(own._meta?.["anthropic/maxResultSizeChars"]).toBe(70_000);
    const huge = await fit.fit(textResult(600_000), { scope: "s", budget: { text: 800_000 } });
    expect(huge._meta?.["anthropic/maxResultSizeChars"]).toBe(500_000);
  });

  it("stores text past Claude Desktop's 1 MB limit whatever the budget asks", async () => {
    const fit = artifacts();
    const result = await fit.fit(textResult(1_000_000), { scope: "s", budget: { text: 5_000_000 } });
    expect(JSON.stringify(result).length).toBeLessThan(MAX_INLINE_RESULT_CHARS);
    expect(result.content.some((block) => block.type === "resource_link")).toBe(true);
  });
});
