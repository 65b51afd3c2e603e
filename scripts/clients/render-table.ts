/**
 * `npm run docs:clients`: renders the client matrix's observations (test/clients/observed/*.json,
 * written by `npx vitest run --project clients`) into the table of docs/client-compatibility.md.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { DOC, loadObservations, renderTable, withTable } from "../../test/clients/support/observed.js";

const before = readFileSync(DOC, "utf8");
const after = withTable(before, renderTable(loadObservations()));
if (after === before) console.log("docs/client-compatibility.md: the table is up to date");
else {
  writeFileSync(DOC, after);
  console.log("docs/client-compatibility.md: table rewritten from test/clients/observed");
}
