import { configDefaults, defineConfig } from "vitest/config";

/** Suites that run against real radosgw and redis-server (started once by the global setup). */
const SERVICE_TESTS = [
  "test/s3/**/*.test.ts",
  "test/redis/**/*.test.ts",
  "test/security/services/**/*.test.ts",
  "test/services/**/*.test.ts",
  "examples/replicas/**/*.test.ts",
];
/** The client matrix: real agent CLIs from npm (installed once into a temp prefix) against a fake model. */
const CLIENT_TESTS = ["test/clients/**/*.test.ts"];

/**
 * `npm run test:core` (MFB_TEST_CORE=1) also leaves out what needs more than Node and npm: Chromium
 * (test/browser), pandoc (examples/pandoc-converter, examples/proxy) and the conformance suite on a fetched Node 22.
 */
const NEEDS_TOOLS =
  process.env.MFB_TEST_CORE === "1"
    ? [
        "test/browser/**",
        "examples/pandoc-converter/**",
        "examples/proxy/**",
        "test/security/dns-rebinding.test.ts",
      ]
    : [];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The AWS SDK's "Node 22 will be required" notice, printed once per worker on Node 20: nothing a
    // test run can act on (the support policy is in the README).
    //
    // Every answer miniflare's `dispatchFetch` gives a test must be read or cancelled at once: one
    // left unread keeps its connection into workerd busy (a CI run saw the R2 Worker stop answering
    // after a test that read only statuses). Miniflare then throws from a timer, which Vitest reports
    // as an unhandled error, failing the run (test/cloudflare/workerd.ts reads each answer whole).
    env: {
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
      MINIFLARE_ASSERT_BODIES_CONSUMED: "true",
    },
    // Expected warnings (MCP_FILE_BRIDGE_NO_SCOPE) are not printed; the event still fires.
    setupFiles: ["test/support/quiet-warnings.ts"],
    pool: "forks",
    // Two test files at a time: the suite is mostly waiting on child processes, sockets and disks, and
    // Vitest's default (cores - 1) gives one worker on the 2-core machines CI runs on.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: "core",
          include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...SERVICE_TESTS, ...CLIENT_TESTS, ...NEEDS_TOOLS],
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
          // It starts the services in the background; wait-ready.ts holds each file until they are up.
          globalSetup: ["scripts/services/global-setup.ts"],
          setupFiles: ["scripts/services/wait-ready.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
