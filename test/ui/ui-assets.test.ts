import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { buildUiAssets, UI_ASSET_PATHS } from "../../scripts/browser/build-ui.js";

describe("src/ui/generated/*-assets.ts", () => {
  it("is what scripts/browser/build-ui.ts makes from src/ui/client (run `npm run build:ui` after edits)", async () => {
    const built = await buildUiAssets();
    expect(await readFile(UI_ASSET_PATHS.page, "utf8")).toBe(built.page);
    expect(await readFile(UI_ASSET_PATHS.widget, "utf8")).toBe(built.widget);
  }, 60_000);

  it("holds self-contained classic scripts (one IIFE each, no module imports)", async () => {
    const { PAGE_SCRIPT } = await import("../../src/ui/generated/page-assets.js");
    const { WIDGET_SCRIPT } = await import("../../src/ui/generated/widget-assets.js");
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
