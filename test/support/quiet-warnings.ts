/**
 * Vitest setup file: the `[MCP_FILE_BRIDGE_NO_SCOPE]` advice is expected in many tests (they make
 * HTTP requests with neither a session nor a user on purpose), so the test output does not print it.
 * Only the printing is filtered: the `warning` event still fires (test/scope/scope.test.ts listens
 * for it), every other warning is printed as Node prints it, and users of the package see it as
 * before.
 */
const EXPECTED = new Set(["MCP_FILE_BRIDGE_NO_SCOPE"]);

const printers = process.listeners("warning").filter((listener) => listener.name === "onWarning");
for (const print of printers) {
  process.off("warning", print);
  process.on("warning", function quietWarning(warning: Error & { code?: string }) {
    if (!EXPECTED.has(warning.code ?? "")) print.call(process, warning);
  });
}
