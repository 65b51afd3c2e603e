// The one copy of yaml the package ships (dist/lib/vendor/yaml.cjs, minified), loaded by both formats.
export { parse } from "yaml";
