/**
 * The pandoc-converter example on stdio for the client matrix, its file store in the folder given
 * as the first argument (inside the run's temp HOME, so nothing is left behind: the example's own
 * command line makes a temp folder that outlives the process).
 */
import { start } from "../../../examples/pandoc-converter/server.js";

const dataDir = process.argv[2];
if (dataDir === undefined) throw new Error("usage: pandoc-server.ts <data folder>");
await start({ transport: "stdio", dataDir });
