/**
 * `npm run docs:clients`: renders the client matrix's observations (test/clients/observed/*.json,
 * written by `npx vitest run --project clients`) into the table of docs/client-compatibility.md.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import {
  committedTable,
  DOC,
  loadObservations,
  normalizeTable,
  renderTable,
  withTable,
} from "../../test/clients/support/observed.js";

const table = renderTable(loadObservations());
const before = readFileSync(DOC, "utf8");
if (normalizeTable(committedTable(before) ?? "") === normalizeTable(table)) {
  console.log("docs/client-compatibility.md: the table is up to date");
} else {
  writeFileSync(DOC, withTable(before, table));
  // The project's formatter pads the table's columns, as it would on the next `npm run format`.
  spawnSync("npx", ["biome", "format", "--write", DOC], { stdio: "ignore" });
  console.log("docs/client-compatibility.md: table rewritten from test/clients/observed");
}
