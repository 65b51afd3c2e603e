/**
 * What the runtime offers besides web-standard APIs: whether a writable local disk is there. Node and
 * Bun have one; Cloudflare Workers have none; Deno has one only when the process was granted write
 * and environment access (`--allow-write`, `--allow-env`: the OS temp folder is read from `TMPDIR`).
 * Pieces that can work without a disk (tus staging, `FileBridge`) ask here instead of touching the
 * disk and failing on a permission error.
 */

interface DenoPermissions {
  permissions?: { querySync?(descriptor: { name: string }): { state: string } };
}

let detected: boolean | undefined;

/** Whether files can be written under the OS temp folder here (checked once, then remembered). */
export function writableDisk(): boolean {
  detected ??= detect();
  return detected;
}

function detect(): boolean {
  const scope = globalThis as { navigator?: { userAgent?: string }; Deno?: DenoPermissions };
  if (scope.navigator?.userAgent === "Cloudflare-Workers") return false;
  const query = scope.Deno?.permissions?.querySync;
  if (query) {
    const granted = (name: string) => query.call(scope.Deno?.permissions, { name }).state === "granted";
    return granted("write") && granted("read") && granted("env");
  }
  return true;
}
