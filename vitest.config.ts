import { configDefaults, defineConfig } from "vitest/config";

/** Suites that run against real radosgw and redis-server (started once by the global setup). */
const SERVICE_TESTS = ["test/s3/**/*.test.ts", "test/redis/**/*.test.ts", "examples/replicas/**/*.test.ts"];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    projects: [
      {
        extends: true,
        test: {
          name: "core",
          include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...SERVICE_TESTS],
        },
      },
      {
        // Its global setup runs only when one of these files is selected.
        extends: true,
        test: {
          name: "services",
          include: SERVICE_TESTS,
          globalSetup: ["scripts/services/global-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
