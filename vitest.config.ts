import { configDefaults, defineConfig } from "vitest/config";

/** Suites that run against real radosgw and redis-server (started once by the global setup). */
const SERVICE_TESTS = ["test/s3/**/*.test.ts", "test/redis/**/*.test.ts", "examples/replicas/**/*.test.ts"];
/** The client matrix: real agent CLIs from npm (installed once into a temp prefix) against a fake model. */
const CLIENT_TESTS = ["test/clients/**/*.test.ts"];

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
          exclude: [...configDefaults.exclude, ...SERVICE_TESTS, ...CLIENT_TESTS],
        },
      },
      {
        extends: true,
        test: {
          name: "clients",
          include: CLIENT_TESTS,
          // The first run downloads each CLI; every run starts a real agent process.
          testTimeout: 300_000,
          hookTimeout: 900_000,
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
