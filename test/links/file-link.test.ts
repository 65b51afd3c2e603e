import { describe, expect, it } from "vitest";
import { fileLinkContent } from "../../src/links/file-link.js";

const file = {
  name: "reports/q3 report.pdf",
  mimeType: "application/pdf",
  size: 1234,
  createdAt: Date.UTC(2025, 0, 2),
};

describe("fileLinkContent", () => {
  it("builds a resource_link and a text fallback with the URI and the download URL", () => {
    const [link, text] = fileLinkContent(file, "file://uploads/s1/reports/q3%20report.pdf", {
      noun: "File",
      notes: ["Pass this URI as a file argument."],
      download: { url: "https://files.example.com/download/tok", expiresAt: Date.UTC(2025, 0, 2, 0, 5) },
    });
    expect(link).toEqual({
      type: "resource_link",
      uri: "file://uploads/s1/reports/q3%20report.pdf",
      name: "reports/q3 report.pdf",
      title: "q3 report.pdf",
      mimeType: "application/pdf",
      size: 1234,
      annotations: { lastModified: "2025-01-02T00:00:00.000Z" },
    });
    expect(text).toEqual({
      type: "text",
      text: [
        'File "reports/q3 report.pdf" (application/pdf, 1234 bytes)',
        "Resource URI: file://uploads/s1/reports/q3%20report.pdf",
        "Pass this URI as a file argument.",
        "Download URL (valid until 2025-01-02T00:05:00.000Z): https://files.example.com/download/tok",
      ].join("\n"),
    });
  });

  it("leaves the download line out without a minted URL", () => {
    const [, text] = fileLinkContent(file, "artifact://x", { noun: "Artifact" });
    expect(text.text).toBe(
      'Artifact "reports/q3 report.pdf" (application/pdf, 1234 bytes)\nResource URI: artifact://x',
    );
  });
});
