import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../support/helpers.js";

function node(args: string[]): string {
  return execFileSync(process.execPath, args, { cwd: repoRoot, encoding: "utf8" }).trim();
}

// The optional drivers load from their own subpaths in both formats, and the root entry never loads
// their peer dependencies (so the core install does not need them).
describe("built ./s3 and ./redis subpaths", () => {
  beforeAll(() => {
    const built = ["s3.js", "s3.cjs", "redis.js", "redis.cjs", "index.js"].every((name) =>
      existsSync(join(repoRoot, "dist", name)),
    );
    if (!built) execFileSync("npx", ["tsup"], { cwd: repoRoot, stdio: "ignore" });
  }, 180_000);

  const probe = `console.log(JSON.stringify({ s3: Object.keys(s3).sort(), redis: Object.keys(redis).sort() }));`;

  it("work with require() and import", () => {
    const cjs = JSON.parse(
      node([
        "-e",
        `const s3 = require("mcp-file-bridge/s3"); const redis = require("mcp-file-bridge/redis"); ${probe}`,
      ]),
    );
    const esm = JSON.parse(
      node([
        "--input-type=module",
        "-e",
        `const s3 = await import("mcp-file-bridge/s3"); const redis = await import("mcp-file-bridge/redis"); ${probe}`,
      ]),
    );
    expect(cjs).toEqual({
      s3: ["s3Store", "s3TusStaging"],
      redis: ["redisCatalog", "redisChangeFeed", "redisState"],
    });
    expect(esm.s3).toContain("s3Store");
    expect(esm.redis).toEqual(expect.arrayContaining(["redisCatalog", "redisChangeFeed", "redisState"]));
  });

  it("errors from a subpath are the root entry's FileBridgeError", () => {
    const out = node([
      "-e",
      `const m = require("mcp-file-bridge"); const { s3Store } = require("mcp-file-bridge/s3");
       try { s3Store({ bucket: "" }); } catch (e) { console.log(JSON.stringify({ code: e.code, same: e instanceof m.FileBridgeError })); }`,
    ]);
    expect(JSON.parse(out)).toEqual({ code: "INVALID_OPTION", same: true });
  });

  it("the root entry loads neither the AWS SDK nor ioredis", () => {
    const loaded = node([
      "-e",
      `require("mcp-file-bridge"); require("mcp-file-bridge/node");
       console.log(JSON.stringify(Object.keys(require.cache).filter((p) => /@aws-sdk|ioredis/.test(p))));`,
    ]);
    expect(JSON.parse(loaded)).toEqual([]);
  });
});
