/**
 * File descriptors: what a client of the files extension revision Claude Code ships sends in place
 * of a file (`{id, mimeType, size, name?, digest?}`), and the port through which `withFiles` asks the
 * piece that serves that revision (the uploads piece, `uploads.attach(server, { files })`) what to
 * do with a call that carries them. The bridge knows only this port; the uploads piece fills it.
 */
import { FileBridgeError } from "../errors/file-bridge-error.js";

/**
 * A file descriptor as the client sends it.
 *
 * @example
 * ```ts
 * const file: FileDescriptor = { id: "file-1", name: "a.pdf", mimeType: "application/pdf", size: 1024, digest: { algorithm: "sha-256", value: "n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg" } };
 * ```
 */
export interface FileDescriptor {
  id: string;
  mimeType: string;
  size: number;
  name?: string;
  digest?: { algorithm: string; value: string };
}

const KEYS = new Set(["id", "mimeType", "size", "name", "digest"]);

/**
 * Whether `value` is a file descriptor: an object with a string `id`, a string `mimeType` and a
 * number `size`, nothing else than those and `name` / `digest`. No other input form has an `id`.
 */
export function isFileDescriptor(value: unknown): value is FileDescriptor {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  return (
    typeof record.id === "string" &&
    typeof record.mimeType === "string" &&
    typeof record.size === "number" &&
    Object.keys(record).every((key) => KEYS.has(key))
  );
}

/** What `withFiles` hands the answerer: the call's descriptors, its scope, and the SDK's `extra`. */
export interface DescriptorCall {
  /** The descriptors of the call, in field order. */
  descriptors: readonly FileDescriptor[];
  /** The caller's scope. */
  scope: string;
  /** The tool callback's `extra` as the SDK gave it (request state, client capabilities, headers). */
  extra: unknown;
}

/**
 * The answerer's verdict: end the round with `result` (an `upload_required` or `input_required`
 * result, or a tool error) without running the handler; or go on with `values` in place of the
 * descriptors (same order), which the bridge resolves as any other file argument.
 */
export type DescriptorAnswer = { result: Record<string, unknown> } | { values: readonly unknown[] };

/**
 * Answers calls that carry file descriptors. `UploadHandleResolver` installs one on its bridge when
 * it serves the files extension (`bridge.answerDescriptors(...)`).
 *
 * @example
 * ```ts
 * bridge.answerDescriptors({ answer: async ({ descriptors }) => ({ values: descriptors.map(toHandle) }) });
 * ```
 */
export interface DescriptorAnswerer {
  answer(call: DescriptorCall): Promise<DescriptorAnswer>;
}

/**
 * The values of a call's file fields once its descriptors are answered: the same list with each
 * descriptor replaced (`{ values }`), or the result that ends the round (`{ result }`). Values with
 * no descriptor among them come back as they are, and the answerer is not asked.
 */
export async function answerDescriptors(
  values: readonly unknown[],
  answerer: DescriptorAnswerer | undefined,
  call: Omit<DescriptorCall, "descriptors">,
): Promise<DescriptorAnswer> {
  const at = values.flatMap((value, index) => (isFileDescriptor(value) ? [index] : []));
  if (at.length === 0) return { values };
  if (!answerer) {
    throw new FileBridgeError(
      "UNSUPPORTED_INPUT",
      "A file descriptor ({id, mimeType, size}) is sent by clients of the MCP files extension, which this server does not serve; send the file in another form",
    );
  }
  const answer = await answerer.answer({
    ...call,
    descriptors: at.map((index) => values[index] as FileDescriptor),
  });
  if ("result" in answer) return answer;
  const next = [...values];
  at.forEach((index, i) => {
    next[index] = answer.values[i];
  });
  return { values: next };
}
