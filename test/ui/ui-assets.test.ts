import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { buildUiAssets, UI_ASSETS_PATH } from "../../scripts/browser/build-ui.js";

describe("src/ui/generated/ui-assets.ts", () => {
  it("is what scripts/browser/build-ui.ts makes from src/ui/client (run `npm run build:ui` after edits)", async () => {
    expect(await readFile(UI_ASSETS_PATH, "utf8")).toBe(await buildUiAssets());
  }, 60_000);

  it("holds self-contained classic scripts (one IIFE each, no module imports)", async () => {
    const { PAGE_SCRIPT, WIDGET_SCRIPT } = await import("../../src/ui/generated/ui-assets.js");
    for (const script of [PAGE_SCRIPT, WIDGET_SCRIPT]) {
      expect(/^("use strict";)?\(\(\)=>\{/.test(script)).toBe(true);
      expect(/(^|[;}])import[\s{*]/.test(script)).toBe(false);
      expect(/<\/script|<!--/i.test(script)).toBe(false);
    }
    // ext-apps' App is inside, with its handshake.
    expect(WIDGET_SCRIPT.includes("ui/notifications/initialized")).toBe(true);
    expect(WIDGET_SCRIPT.length).toBeLessThan(320 * 1024);
  });
});
