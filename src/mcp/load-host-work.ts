import { firstUse } from "../internal/first-use.js";

/**
 * The host adapters' request-time code (host-work.ts), loaded on its first use (issue 39): the
 * first URL elicitation, listing of fixed resources, unclaimed completion or rewritten `tools/list`.
 * Attaching (mounting handlers, registering tools and resources, declaring capabilities) stays
 * synchronous and loads nothing.
 */
export const loadHostWork = firstUse(() => import("./host-work.js"));
