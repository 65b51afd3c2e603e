import { randomBytes } from "node:crypto";
import { describeWithServices, requireServices, uniquePrefix } from "../../scripts/services/test-env.js";
import { redisCatalog } from "../../src/redis/redis-catalog.js";
import { s3Store } from "../../src/s3/s3-store.js";
import type { FileCatalog } from "../../src/storage/types.js";
import { runFileStoreSuite } from "../../src/testing/index.js";
import { connection } from "./s3-helpers.js";

const prefix = () => `suite-${randomBytes(6).toString("hex")}/`;

describeWithServices("s3Store with a redisCatalog on real radosgw + Redis", () => {
  runFileStoreSuite("s3Store + redisCatalog", (now) => {
    const catalog: FileCatalog = redisCatalog({
      url: requireServices().redis.url,
      keyPrefix: uniquePrefix("s3cat"),
    });
    const store = s3Store({ ...connection(), prefix: prefix(), now, sweepInterval: 0, catalog });
    const close = store.close?.bind(store);
    return Object.assign(store, {
      async close() {
        await close?.();
        await catalog.close?.();
      },
    });
  });
});
