import { randomBytes } from "node:crypto";
import { describeWithServices } from "../../scripts/services/test-env.js";
import { s3Store } from "../../src/s3/s3-store.js";
import { runFileStoreSuite } from "../../src/testing/index.js";
import { connection } from "./s3-helpers.js";

const prefix = () => `suite-${randomBytes(6).toString("hex")}/`;

describeWithServices("s3Store on a real radosgw", () => {
  runFileStoreSuite("s3Store", (now) =>
    s3Store({ ...connection(), prefix: prefix(), now, sweepInterval: 0 }),
  );
});
