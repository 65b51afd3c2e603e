/**
 * A silent upstream's error reaches every caller of a shared proxy (tools/list, tools/call): it must
 * not carry the upstream's command line, working folder or URL, which may hold credentials. The
 * operator's log line names them (review of the initialize timeout, issue 42).
 */
import { describe, expect, it } from "vitest";
import { upstreamErrors } from "../../../../src/proxy/sdk/upstream/shared.js";

const target = {
  command: "npx",
  args: ["srv", "--api-key=sk-live-0123456789"],
  cwd: "/srv/private-folder",
};

describe("initialize timeout: what callers see and what the log says", () => {
  it("the caller's error names the upstream and the option, never the command, folder or URL", () => {
    const error = upstreamErrors.noInitialize("up", 60_000);
    expect(error.message).toContain('upstream "up" did not answer initialize within 60s');
    expect(error.message).toContain("proxy.limits.initializeTimeout");
    expect(error.message).not.toContain("sk-live");
    expect(error.message).not.toContain("/srv/private-folder");
    expect(error.message).not.toContain("npx");
  });

  it("the operator's log line names what was run", () => {
    const logged = upstreamErrors.noInitializeLog("up", target, 60_000).message;
    expect(logged).toContain("command: npx srv --api-key=sk-live-0123456789 (in /srv/private-folder)");
    const url = upstreamErrors.noInitializeLog("up", { url: "https://u:pw@example.test/mcp?key=k" }, 1000);
    expect(url.message).toContain("url https://u:pw@example.test/mcp?key=k");
    expect(upstreamErrors.noInitialize("up", 1000).message).not.toContain("pw@");
  });
});
