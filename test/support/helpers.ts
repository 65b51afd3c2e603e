import { createHash } from "node:crypto";

/** What a failure's `code` property says, or `"NO_CODE"` for errors without one. */
function codeFrom(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "NO_CODE";
}

/**
 * The error `code` a promise (or async function) fails with, or `"OK"` when it succeeds. Tests assert
 * on codes, never on message text.
 */
export async function codeOf(run: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof run === "function" ? run() : run);
    return "OK";
  } catch (error) {
    return codeFrom(error);
  }
}

/** The error `code` a synchronous call throws, or `"OK"` when it returns. */
export function codeOfSync(run: () => unknown): string {
  try {
    run();
    return "OK";
  } catch (error) {
    return codeFrom(error);
  }
}

/** Lower-case hex sha256. */
export function sha256(bytes: Uint8Array | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}
