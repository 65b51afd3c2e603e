/**
 * The package's ESM build for Node (`dist/node/`, issue 39), run by tsup.config.ts.
 *
 * Node's ESM loader costs per file. One esbuild build of every entry with code splitting cut the root
 * into one chunk per *set of entries* reaching a module: Node loaded `import "mcp-file-bridge"` as 28
 * files. Here the root's static closure is built apart, in two chunks, and every other entry imports
 * the root's modules it uses from those chunks. Two builds:
 *
 * 1. **The root**: `node/index.js`, `node/core.js` and `node/core-light.js`, with splitting. The two
 *    core files re-export, under names of their own (`m12$FileBridge`), what build 2 imports of the
 *    root's modules: `core-light.js` those of the modules an entry importing no package reaches
 *    (`/node`, `/storage-kit`, `/media`, `/ui`, `/cloudflare`), `core.js` those of every module. So
 *    esbuild makes two chunks of the root's closure, one without zod (what the light entries load),
 *    and Node loads the root as `index.js` and those two. The root's `import()`s of modules outside
 *    its closure (first-use code: the tus handler, image shaping) point at build 2's `lazy-*.js`.
 * 2. **Everything else**: the other entries and those first-use modules, with splitting. A module of
 *    the root's closure is not built again: it becomes a re-export from `./core.js` (or
 *    `./core-light.js`).
 *
 * So every module exists once across the Node build (one class, one module-level state, for
 * `mcp-file-bridge`, `/node`, `/storage-kit`, `/testing`, ...). An entry that shares a module with the
 * root loads the root's chunk holding it (more code than its own closure, no other package).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { type BuildOptions, build, type Metafile, type Plugin } from "esbuild";

export interface NodeBuildOptions {
  /** Output name (`node/...`, no extension) → source file of each entry. */
  entries: Record<string, string>;
  /** The root entry's name in `entries` (`node/index`). */
  root: string;
  /** The output folder (`dist`). */
  outDir: string;
  /** Plugins every build uses (shared CommonJS files, vendored packages). */
  plugins: Plugin[];
  /** Packages bundled although they are dependencies. */
  noExternal: string[];
  /** Packages never bundled. */
  external: string[];
  /** Line length of the minified output. */
  lineLimit: number;
}

const cwd = process.cwd();
const absolute = (path: string) => resolve(cwd, path);
/** `./x.js` from the folder of `from` (both output names, no extension). */
const importPath = (from: string, to: string) => {
  const path = relative(dirname(from), to).split(sep).join("/");
  return `${path.startsWith(".") ? path : `./${path}`}.js`;
};

/** Builds `dist/node/`. */
export async function buildForNode(options: NodeBuildOptions): Promise<void> {
  const common = commonOptions(options);
  const shape = await analyze(options, common);
  const names = await exportNames(shape.root, common, options.plugins);
  const id = new Map([...shape.root].map((file, index) => [file, `m${index}`]));
  const lazyName = new Map(
    [...shape.lazy].map((file) => [
      file,
      `node/lazy-${relative(join(cwd, "src"), file).replace(/\.ts$/, "").split(sep).join("-")}`,
    ]),
  );
  const coreOf = (file: string) => (shape.light.has(file) ? "core-light" : "core");
  const dir = dirname(options.root);

  // 2. The other entries and the root's first-use modules; the root's modules come from the cores.
  const rest: Record<string, string> = {};
  for (const [name, file] of Object.entries(options.entries))
    if (name !== options.root) rest[name] = absolute(file);
  for (const [file, name] of lazyName) rest[name] = file;
  const others = await build({
    ...common,
    entryPoints: rest,
    write: false,
    plugins: [
      ...options.plugins,
      {
        name: "node-from-core",
        setup(b) {
          b.onResolve({ filter: /^\.\/core(-light)?\.js$/ }, (args) =>
            args.namespace === "mfb-from-core" ? { path: args.path, external: true } : undefined,
          );
          b.onResolve({ filter: /.*/ }, async (args) => {
            if (args.kind === "entry-point" || args.pluginData?.inner) return undefined;
            const found = await b.resolve(args.path, {
              kind: args.kind,
              importer: args.importer,
              resolveDir: args.resolveDir,
              pluginData: { inner: true },
            });
            if (found.external || !shape.root.has(found.path)) return undefined;
            return { path: found.path, namespace: "mfb-from-core" };
          });
          b.onLoad({ filter: /.*/, namespace: "mfb-from-core" }, (args) => {
            const list = (names.get(args.path) ?? []).map(
              (name) => `${id.get(args.path)}$${name} as ${name}`,
            );
            // Every output of this build is in dist/node/, next to the cores.
            const contents = `export { ${list.join(", ")} } from "./${coreOf(args.path)}.js";`;
            return { contents, loader: "js", resolveDir: cwd };
          });
        },
      },
    ],
  });
  // The names build 2 imports: the cores export only those.
  const used = new Set<string>();
  const exportedAs = new Set(
    [...shape.root].flatMap((file) => (names.get(file) ?? []).map((name) => `${id.get(file)}$${name}`)),
  );
  for (const { text } of others.outputFiles) {
    for (const [name] of text.matchAll(/\bm\d+\$[\w$]+/g)) if (exportedAs.has(name)) used.add(name);
  }

  // 1. The root. `core` re-exports what `core-light` does too, so no part of the root's modules is
  // reached by the root and `core-light` alone (that would be a third chunk).
  const coreSource = (light: boolean) =>
    [...shape.root]
      .filter((file) => !light || shape.light.has(file))
      .map((file) => {
        const exported = (names.get(file) ?? []).filter((name) => used.has(`${id.get(file)}$${name}`));
        const list = exported.map((name) => `${name} as ${id.get(file)}$${name}`).join(", ");
        return exported.length === 0 ? "" : `export { ${list} } from ${JSON.stringify(file)};`;
      })
      .join("\n");
  await build({
    ...common,
    entryPoints: {
      [options.root]: absolute(options.entries[options.root] as string),
      [`${dir}/core`]: "mfb-core:core",
      [`${dir}/core-light`]: "mfb-core:core-light",
    },
    plugins: [
      ...options.plugins,
      {
        name: "node-root",
        setup(b) {
          b.onResolve({ filter: /^mfb-core:/ }, (args) => ({
            path: args.path.slice(9),
            namespace: "mfb-core",
          }));
          b.onLoad({ filter: /.*/, namespace: "mfb-core" }, (args) => ({
            contents: coreSource(args.path === "core-light"),
            resolveDir: cwd,
            loader: "js",
          }));
          // First-use code the root imports on demand lives in build 2.
          b.onResolve({ filter: /.*/ }, async (args) => {
            if (args.kind !== "dynamic-import" || args.pluginData?.inner) return undefined;
            const found = await b.resolve(args.path, {
              kind: args.kind,
              importer: args.importer,
              resolveDir: args.resolveDir,
              pluginData: { inner: true },
            });
            const name = lazyName.get(found.path);
            return name === undefined ? undefined : { path: importPath(options.root, name), external: true };
          });
        },
      },
    ],
  });
  for (const { path, contents } of others.outputFiles) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, contents);
  }
}

function commonOptions(options: NodeBuildOptions): BuildOptions {
  const manifest = JSON.parse(readFileSync(join(cwd, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
  };
  const external = [
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}),
    ...options.external,
  ].filter((name) => !options.noExternal.includes(name));
  return {
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    splitting: true,
    outdir: options.outDir,
    absWorkingDir: cwd,
    chunkNames: `${dirname(options.root)}/chunk-[hash]`,
    minifyWhitespace: true,
    minifySyntax: true,
    lineLimit: options.lineLimit,
    external: external.flatMap((name) => [name, `${name}/*`]),
    logLevel: "warning",
  };
}

/**
 * From one split build of every entry: the modules the root loads statically (absolute paths), the
 * modules outside them it imports on demand, and those of the root's modules that an entry importing
 * no package (besides Node's) reaches.
 */
async function analyze(
  options: NodeBuildOptions,
  common: BuildOptions,
): Promise<{ root: Set<string>; lazy: Set<string>; light: Set<string> }> {
  const { metafile } = (await build({
    ...common,
    entryPoints: Object.fromEntries(
      Object.entries(options.entries).map(([name, file]) => [name, absolute(file)]),
    ),
    plugins: options.plugins,
    write: false,
    metafile: true,
  })) as { metafile: Metafile };
  const outputs = metafile.outputs;
  /** The modules and packages an entry loads statically. */
  const closure = (entry: string) => {
    const source = absolute(options.entries[entry] as string);
    const start = Object.keys(outputs).find((out) => {
      const point = outputs[out]?.entryPoint;
      return point !== undefined && absolute(point) === source;
    }) as string;
    const modules = new Set<string>();
    const packages = new Set<string>();
    const seen = new Set<string>();
    const visit = (out: string) => {
      if (seen.has(out)) return;
      seen.add(out);
      for (const input of Object.keys(outputs[out]?.inputs ?? {})) modules.add(absolute(input));
      for (const { path, kind, external } of outputs[out]?.imports ?? []) {
        if (kind !== "import-statement") continue;
        if (!external) visit(path);
        else if (!path.startsWith("node:") && !path.startsWith(".") && !builtinModules.includes(path))
          packages.add(path);
      }
    };
    visit(start);
    return { modules, packages };
  };
  const root = closure(options.root).modules;
  const light = new Set<string>();
  for (const entry of Object.keys(options.entries)) {
    if (entry === options.root) continue;
    const reached = closure(entry);
    if (reached.packages.size === 0) for (const file of reached.modules) if (root.has(file)) light.add(file);
  }
  const lazy = new Set<string>();
  for (const [input, { imports }] of Object.entries(metafile.inputs)) {
    if (!root.has(absolute(input))) continue;
    for (const { path, kind, external } of imports) {
      if (kind === "dynamic-import" && !external && !root.has(absolute(path))) lazy.add(absolute(path));
    }
  }
  return { root, lazy, light };
}

/** The runtime export names of each module (esbuild's, `export *` followed). */
async function exportNames(
  modules: Set<string>,
  common: BuildOptions,
  plugins: Plugin[],
): Promise<Map<string, string[]>> {
  const { metafile } = (await build({
    ...common,
    entryPoints: [...modules],
    plugins,
    write: false,
    metafile: true,
  })) as { metafile: Metafile };
  const names = new Map<string, string[]>();
  for (const output of Object.values(metafile.outputs)) {
    if (output.entryPoint !== undefined) names.set(absolute(output.entryPoint), output.exports);
  }
  return names;
}
