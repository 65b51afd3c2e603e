/**
 * `sharp` (libvips) is an optional peer: loaded here, with a dynamic import, the first time an image
 * is shaped, never when the package loads. The one place that names it.
 */
import type Sharp from "sharp";
import { FileBridgeError } from "../errors/file-bridge-error.js";

/** The `sharp` function, as its types describe it. */
export type SharpFunction = typeof Sharp;

let loading: Promise<SharpFunction> | undefined;

/**
 * Loads `sharp` once. A failure (not installed, or its native part does not load on this platform)
 * is `INVALID_OPTION` naming the package, `data.package: "sharp"`; the next call tries again.
 */
export function loadSharp(): Promise<SharpFunction> {
  loading ??= import("sharp").then(
    (module) => ((module as { default?: SharpFunction }).default ?? module) as SharpFunction,
    (error: unknown) => {
      loading = undefined;
      throw new FileBridgeError(
        "INVALID_OPTION",
        `image shaping needs the optional peer dependency "sharp", which could not be loaded ` +
          `(${(error as Error)?.message ?? error}): npm install sharp, or set images: false`,
        { data: { option: "images", package: "sharp" }, cause: error },
      );
    },
  );
  return loading;
}

/** Whether `sharp` loads here (for shaping that is on by default and falls back when it is missing). */
export async function sharpAvailable(): Promise<boolean> {
  try {
    await loadSharp();
    return true;
  } catch {
    return false;
  }
}
