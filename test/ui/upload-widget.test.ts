import { describe, expect, it } from "vitest";
import { UPLOAD_CSS } from "../../src/ui/generated/page-assets.js";
import { WIDGET_SCRIPT } from "../../src/ui/generated/widget-assets.js";
import {
  DEFAULT_UPLOAD_WIDGET_URI,
  MCP_APP_MIME_TYPE,
  uploadWidgetResource,
  uploadWidgetToolMeta,
} from "../../src/ui/upload-widget.js";
import { codeOfSync } from "../support/helpers.js";

describe("uploadWidgetResource", () => {
  it("is one self-contained mcp-app HTML resource that may connect only to the upload origin", () => {
    const widget = uploadWidgetResource({ uploadOrigin: "https://files.example.com" });
    expect(widget.uri).toBe(DEFAULT_UPLOAD_WIDGET_URI);
    expect(widget.mimeType).toBe("text/html;profile=mcp-app");
    expect(MCP_APP_MIME_TYPE).toBe("text/html;profile=mcp-app");
    expect(widget._meta).toEqual({
      ui: {
        csp: { connectDomains: ["https://files.example.com"], resourceDomains: [] },
        prefersBorder: true,
      },
    });
    expect(widget.contents).toEqual({
      uri: widget.uri,
      mimeType: widget.mimeType,
      text: widget.text,
      _meta: widget._meta,
    });
    expect(widget.text.includes(`<script>${WIDGET_SCRIPT}</script>`)).toBe(true);
    expect(widget.text.includes(`<style>${UPLOAD_CSS}</style>`)).toBe(true);
    expect(/<(script|link|img|iframe)\b[^>]*\b(src|href)=/i.test(widget.text)).toBe(false);
    const config = /id="upload-config">(.*?)<\/script>/.exec(widget.text)?.[1];
    expect(JSON.parse(config ?? "")).toEqual({ toolName: "get_upload_url", sendMessage: true, version: "1" });
  });

  it("takes the options: several origins, domain, tool name, message, border", () => {
    const widget = uploadWidgetResource({
      uploadOrigin: ["https://a.example.com/", "http://127.0.0.1:3000", "https://a.example.com"],
      uri: "ui://my-server/upload",
      toolName: "request_upload",
      domain: "a904794854a047f6.claudemcpcontent.com",
      prefersBorder: false,
      sendMessage: false,
      message: "Drop the <b>logs</b>",
      accept: [".log", "text/plain"],
    });
    expect(widget._meta.ui).toEqual({
      csp: { connectDomains: ["https://a.example.com", "http://127.0.0.1:3000"], resourceDomains: [] },
      domain: "a904794854a047f6.claudemcpcontent.com",
      prefersBorder: false,
    });
    expect(widget.uri).toBe("ui://my-server/upload");
    expect(widget.text).toContain("Drop the &lt;b&gt;logs&lt;/b&gt;");
    expect(widget.text).toContain('accept=".log,text/plain"');
    const config = JSON.parse(/id="upload-config">(.*?)<\/script>/.exec(widget.text)?.[1] ?? "");
    expect(config).toMatchObject({ toolName: "request_upload", sendMessage: false });
  });

  it("refuses bad options with INVALID_OPTION", () => {
    const bad = [
      { uploadOrigin: "files.example.com" },
      { uploadOrigin: "https://files.example.com/files" },
      { uploadOrigin: "ftp://files.example.com" },
      { uploadOrigin: [] },
      { uploadOrigin: "https://x.example", uri: "https://not-ui" },
      { uploadOrigin: "https://x.example", toolName: "bad name" },
      { uploadOrigin: "https://x.example", domain: " " },
    ];
    for (const options of bad)
      expect(codeOfSync(() => uploadWidgetResource(options as never))).toBe("INVALID_OPTION");
  });
});

describe("uploadWidgetToolMeta", () => {
  it("carries both the nested and the flat resourceUri key", () => {
    expect(uploadWidgetToolMeta()).toEqual({
      ui: { resourceUri: DEFAULT_UPLOAD_WIDGET_URI },
      "ui/resourceUri": DEFAULT_UPLOAD_WIDGET_URI,
    });
    expect(uploadWidgetToolMeta("ui://x/y")["ui/resourceUri"]).toBe("ui://x/y");
    expect(codeOfSync(() => uploadWidgetToolMeta("file:///x"))).toBe("INVALID_OPTION");
  });
});
