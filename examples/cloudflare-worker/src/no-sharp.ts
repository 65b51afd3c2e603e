/**
 * Stands in for `sharp` (an optional peer for image shaping, native, not for Workers): the Worker
 * passes `images: false`, so nothing imports it; the alias in wrangler.jsonc only lets the bundle resolve.
 */
export default undefined;
