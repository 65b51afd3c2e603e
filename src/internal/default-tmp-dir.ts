import { lstatSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "./node-builtins.js";

/** Default folders found to be this user's (a folder of ours in the temp folder stays ours). */
const checked = new Set<string>();
/** A private folder of this process per default name someone else holds. */
const replacements = new Map<string, string>();

/**
 * The default parent of our per-call folders: `<os temp folder>/mcp-file-bridge-<uid>`, one per
 * local user. The OS temp folder is shared by every user of the machine; under one fixed name,
 * whoever made the folder first owned it, and every other user's server was refused at its first
 * call (the folder is checked and is not theirs). A user id is no secret, so the per-user name can
 * be taken first on purpose too: when it is there and is not a folder of this user, a private
 * folder of this process is made instead (`mcp-file-bridge-<uid>-<random>`, mode 0700, removed at
 * exit). Where there are no user ids (Windows), the name has no suffix. Read on each call: `TMPDIR`
 * may change while the process runs (tests do).
 */
export function defaultTmpDir(): string {
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  const folder = join(tmpdir(), uid === undefined ? "mcp-file-bridge" : `mcp-file-bridge-${uid}`);
  if (uid === undefined || checked.has(folder)) return folder;
  const made = replacements.get(folder);
  if (made) return made;
  let info: ReturnType<typeof lstatSync>;
  try {
    info = lstatSync(folder);
  } catch {
    return folder; // not there yet: made (0700) and checked where it is first used
  }
  if (info.isDirectory() && info.uid === uid) {
    checked.add(folder);
    return folder;
  }
  const replacement = mkdtempSync(`${folder}-`);
  replacements.set(folder, replacement);
  if (replacements.size === 1) {
    process.once("exit", () => {
      for (const path of replacements.values()) rmSync(path, { recursive: true, force: true });
    });
  }
  return replacement;
}
