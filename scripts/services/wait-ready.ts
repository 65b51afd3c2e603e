/**
 * Setup file of the vitest "services" project: before a test file of the project is imported, waits
 * for the radosgw and redis-server its global setup starts in the background (the other projects'
 * files run meanwhile).
 */
import { awaitServices } from "./test-env.js";

await awaitServices();
