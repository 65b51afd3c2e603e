import { FileBridgeError } from "../errors/file-bridge-error.js";

/** One step of a field path: a property name, and whether it holds a list (`files[]`). */
export interface FieldStep {
  readonly key: string;
  readonly list: boolean;
}

/**
 * Parses a field path such as `"file"`, `"files[]"`, `"input.document"` or `"jobs[].attachments[]"`.
 * Throws `INVALID_OPTION` (naming `option`) for an empty path or segment.
 */
export function parseFieldPath(path: unknown, option: string): FieldStep[] {
  if (typeof path !== "string" || path.trim() === "") {
    throw new FileBridgeError("INVALID_OPTION", `${option} entries must be non-empty field paths`);
  }
  return path.split(".").map((segment) => {
    const list = segment.endsWith("[]");
    const key = list ? segment.slice(0, -2) : segment;
    if (key === "" || key.includes("[") || key.includes("]")) {
      throw new FileBridgeError("INVALID_OPTION", `${option}: "${path}" has an invalid segment "${segment}"`);
    }
    if (key === "__proto__" || key === "constructor" || key === "prototype") {
      throw new FileBridgeError("INVALID_OPTION", `${option}: "${path}" uses a reserved name`);
    }
    return { key, list };
  });
}

/** A place in an argument object that holds one file value. */
export interface FieldSlot {
  /** The object or array holding the value. */
  readonly container: Record<string, unknown> | unknown[];
  /** The property name or index. */
  readonly key: string | number;
  /** The value found there. */
  readonly value: unknown;
  /** A readable location for errors, e.g. `files[2]`. */
  readonly label: string;
}

/** Whether `value` is an object that is not a list (a JSON object, as arguments hold them). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Finds every file value a field path points at inside `root`. Missing (`undefined` / `null`)
 * fields are skipped, so optional file arguments stay optional. A `[]` step on something that is not
 * a list, or a dotted step through something that is not an object, fails with `INVALID_INPUT`.
 */
export function collectFieldSlots(root: unknown, steps: readonly FieldStep[]): FieldSlot[] {
  const slots: FieldSlot[] = [];
  const walk = (node: unknown, index: number, label: string): void => {
    const step = steps[index];
    if (!step) return;
    if (!isRecord(node)) {
      throw new FileBridgeError("INVALID_INPUT", `${label || "arguments"} must be an object`);
    }
    if (!Object.hasOwn(node, step.key)) return;
    const value = node[step.key];
    if (value === undefined || value === null) return;
    const here = label ? `${label}.${step.key}` : step.key;
    const last = index === steps.length - 1;
    if (step.list) {
      if (!Array.isArray(value)) throw new FileBridgeError("INVALID_INPUT", `${here} must be a list`);
      value.forEach((item, i) => {
        if (last) {
          if (item !== undefined && item !== null)
            slots.push({ container: value, key: i, value: item, label: `${here}[${i}]` });
        } else {
          walk(item, index + 1, `${here}[${i}]`);
        }
      });
      return;
    }
    if (last) slots.push({ container: node, key: step.key, value, label: here });
    else walk(value, index + 1, here);
  };
  walk(root, 0, "");
  return slots;
}
