/**
 * `mcp-file-bridge/redis`: drivers on Redis (`ioredis`, an optional peer dependency) for running
 * several replicas: shared state (single-use tickets and links), a shared file catalog, and a change
 * feed that carries resource-list changes between replicas.
 */
export type { RedisConnectionOptions } from "./connection.js";
export type { RedisCatalogOptions } from "./redis-catalog.js";
export { redisCatalog } from "./redis-catalog.js";
export type { RedisChangeFeedOptions } from "./redis-change-feed.js";
export { redisChangeFeed } from "./redis-change-feed.js";
export type { RedisStateOptions, RedisStateStore } from "./redis-state.js";
export { redisState } from "./redis-state.js";
