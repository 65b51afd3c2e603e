// The one copy of @fastify/busboy the package ships (dist/lib/vendor/busboy.cjs, minified), loaded
// by both formats on the first form upload.
export { Busboy } from "@fastify/busboy";
