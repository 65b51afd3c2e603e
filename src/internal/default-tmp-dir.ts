import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The default parent of our per-call folders: `<os temp folder>/mcp-file-bridge-<uid>`, one per
 * local user. The OS temp folder is shared by every user of the machine; under one fixed name,
 * whoever made the folder first owned it, and every other user's server was refused at its first
 * call (the folder is checked and is not theirs). Where there are no user ids (Windows), the name has
 * no suffix. Read on each call: `TMPDIR` may change while the process runs (tests do).
 */
export function defaultTmpDir(): string {
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  return join(tmpdir(), uid === undefined ? "mcp-file-bridge" : `mcp-file-bridge-${uid}`);
}
