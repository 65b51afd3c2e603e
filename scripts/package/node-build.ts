/**
 * The package's ESM build for Node (`dist/node/`, issue 39), run by tsup.config.ts.
 *
 * Node's ESM loader costs per file. One esbuild build of every entry with code splitting cut the root
 * into one chunk per *set of entries* reaching a module: Node loaded `import "mcp-file-bridge"` as 28
 * files. Here the root's static closure is built apart, in a few chunks, and every other entry
 * imports the root's modules it uses from those chunks. Three builds:
 *
 * 1. **The other entries**, through stand-ins of the root's modules that re-export, from
 *    `./core-<n>.js`, under names of their own (`m$1k`): to learn which names they import.
 * 2. **The root**: `node/index.js` and its chunks. The root's modules are put in layers
 *    ({@link layers}), in four groups: those both an entry importing no zod (`/node`,
 *    `/storage-kit`, `/media`, `/ui`, `/cloudflare`, `/s3`, `/redis`, ...) and a `narrow` entry
 *    (`/bridge`) reach, those only the zod-free entries reach, those only the narrow entry reaches,
 *    the rest; at most {@link CHUNK_BYTES} each. Entry points `core-<n>` re-export what build 1
 *    imports of the modules of layers 0 to n, and what the root's modules import of each other, so
 *    esbuild makes one chunk per layer, and Node loads the root as `index.js` and those chunks (a
 *    zod-free entry the first two groups' chunks, a narrow one the first and third). The cores only
 *    shape the chunks: they are not written. The root's `import()`s of modules outside its closure
 *    (first-use code: the tus handler, the artifacts' work) point at build 3's `lazy-*.js`; so do
 *    the `import()`s that first-use code makes in turn (image shaping, from the artifacts' work):
 *    each is a `lazy-*` entry of build 3, not an entry esbuild makes itself (named by hash, a file
 *    that only forwards names when its module is in shared chunks).
 * 3. **The other entries again**, and those first-use modules, with splitting. A module of the
 *    root's closure is not built again: each module importing it gets a stand-in that re-exports
 *    its names from the root's chunks holding them (as the cores import them), so it lands in the
 *    importer's chunk and no file of the build only forwards names (the cores' export lists, ~38 KB,
 *    were repeated per layer).
 *
 * So every module exists once across the Node build (one class, one module-level state, for
 * `mcp-file-bridge`, `/node`, `/storage-kit`, `/testing`, ...). An entry that shares a module with the
 * root loads the root's chunks holding it (more code than its own closure, no other package).
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
  /**
   * An entry (a name in `entries`, `node/bridge`) whose share of the root gets chunks of its own:
   * the root's modules it reaches, statically or through its first-use code's static imports. It
   * loads that share at start (its first-use code's part too) and none of the root's other modules,
   * at start or on a call. One entry: two would share one group, each loading the other's share.
   */
  narrow?: string;
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
  // The name each export of a root module has in the cores: `m$` and a number (short: every
  // import of the other entries spells it).
  const alias = new Map<string, string>();
  for (const file of shape.root)
    for (const name of names.get(file) ?? []) alias.set(`${file}\0${name}`, `m$${alias.size.toString(36)}`);
  const aliasOf = (file: string, name: string) => alias.get(`${file}\0${name}`) as string;
  const lazyName = new Map(
    [...shape.lazy].map((file) => [
      file,
      `node/lazy-${relative(join(cwd, "src"), file).replace(/\.ts$/, "").split(sep).join("-")}`,
    ]),
  );
  const layer = layers(shape);
  const top = Math.max(0, ...layer.values());
  const coreOf = (file: string) => `core-${layer.get(file)}`;
  const dir = dirname(options.root);

  // 1. and 3. The other entries and the root's first-use modules, with each root module's names taken
  // from `from(file)`: a list of `export { ... } from "./<file>.js"` statements.
  const rest: Record<string, string> = {};
  for (const [name, file] of Object.entries(options.entries))
    if (name !== options.root) rest[name] = absolute(file);
  for (const [file, name] of lazyName) rest[name] = file;
  const others = (from: (file: string, names: string[]) => string) =>
    build({
      ...common,
      entryPoints: rest,
      write: false,
      plugins: [
        ...options.plugins,
        {
          name: "node-from-root",
          setup(b) {
            b.onResolve({ filter: /.*/, namespace: "mfb-from-root" }, (args) => ({
              path: args.path,
              external: true,
            }));
            b.onResolve({ filter: /.*/ }, async (args) => {
              if (args.kind === "entry-point" || args.pluginData?.inner) return undefined;
              const found = await b.resolve(args.path, {
                kind: args.kind,
                importer: args.importer,
                resolveDir: args.resolveDir,
                pluginData: { inner: true },
              });
              if (found.external || !shape.root.has(found.path)) return undefined;
              // One stand-in per importer, with the names it imports, so each lands in its
              // importer's chunk: a stand-in that several entries shared would be a chunk of its own
              // that only forwards names.
              return {
                path: `${found.path}\0${args.importer}`,
                namespace: "mfb-from-root",
                pluginData: { file: found.path, wanted: wantedNames(args.importer, args.path, args.kind) },
              };
            });
            b.onLoad({ filter: /.*/, namespace: "mfb-from-root" }, (args) => {
              const { file, wanted } = args.pluginData as { file: string; wanted: Set<string> | undefined };
              const all = names.get(file) ?? [];
              return {
                contents: from(file, wanted === undefined ? all : all.filter((name) => wanted.has(name))),
                loader: "js",
                resolveDir: cwd,
              };
            });
          },
        },
      ],
    });
  // First through the cores (below), to learn the names the other entries import: the cores
  // export only those. Every output of this build is in dist/node/, next to the cores.
  const throughCores = await others((file, wanted) => {
    const list = wanted.map((name) => `${aliasOf(file, name)} as ${name}`);
    return `export { ${list.join(", ")} } from "./${coreOf(file)}.js";`;
  });
  const used = new Set<string>();
  const exportedAs = new Set(alias.values());
  for (const { text } of throughCores.outputFiles) {
    for (const [name] of text.matchAll(/\bm\$[0-9a-z]+\b/g)) if (exportedAs.has(name)) used.add(name);
  }

  // 2. The root. `core-<n>` re-exports the modules of layers 0 to n, so every part of the root's
  // modules is reached by the root and the cores from some n up: one chunk per layer. The cores
  // only shape the chunks: they are not written (nothing imports them once step 3 is done).
  const coreSource = (level: number) =>
    [...shape.root]
      .filter((file) => (layer.get(file) as number) <= level)
      .map((file) => {
        const within = shape.inner.get(file);
        const exported = (names.get(file) ?? []).filter(
          (name) => used.has(aliasOf(file, name)) || within === "all" || within?.has(name),
        );
        const list = exported.map((name) => `${name} as ${aliasOf(file, name)}`).join(", ");
        return exported.length === 0 ? "" : `export { ${list} } from ${JSON.stringify(file)};`;
      })
      .join("\n");
  const cores = new Set(Array.from({ length: top + 1 }, (_, n) => `${dir}/core-${n}`));
  const rootBuild = await build({
    ...common,
    write: false,
    entryPoints: {
      [options.root]: absolute(options.entries[options.root] as string),
      ...Object.fromEntries([...cores].map((name, n) => [name, `mfb-core:${n}`])),
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
            contents: coreSource(Number(args.path)),
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

  // 3. The other entries again, each name taken from the chunk of the root that holds it (what the
  // cores import it as), so no core is loaded or shipped.
  const coreFiles = new Set([...cores].map((name) => absolute(join(options.outDir, `${name}.js`))));
  const held = heldNames(rootBuild.outputFiles.filter(({ path }) => coreFiles.has(path)));
  // Imported under the short `m$` names, which the importers' code then spells (as through the cores).
  const direct = await others((file, wanted) => {
    const byChunk = new Map<string, string[]>();
    const exported: string[] = [];
    for (const name of wanted) {
      const short = aliasOf(file, name);
      const at = held.get(short);
      if (at === undefined) continue;
      byChunk.set(at.chunk, [...(byChunk.get(at.chunk) ?? []), `${at.name} as ${short}`]);
      exported.push(`${short} as ${name}`);
    }
    const imports = [...byChunk].map(([chunk, list]) => `import { ${list.join(", ")} } from "${chunk}";`);
    return [...imports, `export { ${exported.join(", ")} };`].join("\n");
  });
  for (const { path, contents } of [...rootBuild.outputFiles, ...direct.outputFiles]) {
    if (coreFiles.has(path)) continue;
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, contents);
  }
}

/**
 * The names `importer` imports (or re-exports) from `specifier`, read from its source's
 * `import { ... } from` / `export { ... } from` statements (`type` ones left out), or `undefined`
 * (all names) for `import * as`, `export *` or `import()`. A name missed here fails the build
 * (esbuild: no matching export), it is never left out silently.
 */
function wantedNames(importer: string, specifier: string, kind: string): Set<string> | undefined {
  if (kind !== "import-statement") return undefined;
  const source = readFileSync(importer, "utf8");
  const quoted = specifier.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const statement = new RegExp(`\\b(import|export)\\s+(type\\s+)?([^;]*?)\\s*from\\s*["']${quoted}["']`, "g");
  const wanted = new Set<string>();
  for (const [, , typeOnly, clause] of source.matchAll(statement)) {
    if (typeOnly !== undefined) continue;
    // Comments in a list (which may hold commas) are not names: left in, a re-exported name went
    // missing from the output without an error.
    const list = /^\{([^}]*)\}$/.exec((clause as string).replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g, "").trim());
    if (list === null) return undefined;
    for (const item of (list[1] as string).split(",")) {
      const [name] = item.trim().split(/\s+as\s+/);
      if (name === undefined || name === "" || /^type\s/.test(name)) continue;
      if (!/^[A-Za-z_$][\w$]*$/.test(name))
        throw new Error(`${importer}: cannot read the name "${name}" imported from ${specifier}`);
      wanted.add(name);
    }
  }
  return wanted;
}

/**
 * From the cores' text (`import{a,b as c}from"./chunk-X.js";...export{a as m$1,c as m$2}`): where
 * each `m$` name is held, as the chunk's file and the name the chunk exports it under.
 */
function heldNames(cores: { path: string; text: string }[]): Map<string, { chunk: string; name: string }> {
  const held = new Map<string, { chunk: string; name: string }>();
  const items = (list: string) =>
    list
      .split(",")
      .map((item) => item.trim().split(/\s+as\s+/))
      .filter(([first]) => first !== "")
      .map(([first, second]) => [first as string, second ?? (first as string)] as const);
  for (const { path, text } of cores) {
    const local = new Map<string, { chunk: string; name: string }>();
    let rest = text.replace(
      /\bimport\s*\{([^}]*)\}\s*from\s*"([^"]+)"\s*;?/g,
      (_, list: string, chunk: string) => {
        for (const [name, as] of items(list)) local.set(as, { chunk, name });
        return "";
      },
    );
    rest = rest.replace(/\bimport\s*"[^"]+"\s*;?/g, "");
    rest = rest.replace(/\bexport\s*\{([^}]*)\}\s*;?/g, (_, list: string) => {
      for (const [name, as] of items(list)) {
        const at = local.get(name);
        if (at === undefined) throw new Error(`${path}: ${name} is not imported from a chunk`);
        held.set(as, at);
      }
      return "";
    });
    if (rest.trim() !== "") throw new Error(`${path} holds more than re-exports: ${rest.slice(0, 200)}`);
  }
  return held;
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
 * modules outside them it imports on demand, those of the root's modules that an entry importing
 * no zod reaches (light), those the `narrow` entry reaches, and the names the root's modules import
 * of each other.
 */
async function analyze(options: NodeBuildOptions, common: BuildOptions): Promise<Shape> {
  // What each module imports of each other module, by name (`undefined`: all of its names).
  const imported: { importer: string; file: string; names: Set<string> | undefined }[] = [];
  const { metafile } = (await build({
    ...common,
    entryPoints: Object.fromEntries(
      Object.entries(options.entries).map(([name, file]) => [name, absolute(file)]),
    ),
    plugins: [
      {
        name: "node-imported-names",
        setup(b) {
          b.onResolve({ filter: /.*/ }, async (args) => {
            // Only between the package's own modules: a bundled package's imports are not read.
            if (
              args.kind !== "import-statement" ||
              args.pluginData?.inner ||
              args.importer.includes("node_modules")
            )
              return undefined;
            const found = await b.resolve(args.path, {
              kind: args.kind,
              importer: args.importer,
              resolveDir: args.resolveDir,
              pluginData: { inner: true },
            });
            if (!found.external && found.path !== "")
              imported.push({
                importer: args.importer,
                file: found.path,
                names: wantedNames(args.importer, args.path, args.kind),
              });
            return undefined;
          });
        },
      },
      ...options.plugins,
    ],
    write: false,
    metafile: true,
  })) as { metafile: Metafile };
  const outputs = metafile.outputs;
  const bytes = new Map<string, number>();
  /**
   * The modules and packages an entry loads statically; with `onDemand`, also those its `import()`s
   * load (the modules only: what first-use code reaches).
   */
  const closure = (entry: string, onDemand = false) => {
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
      for (const [input, { bytesInOutput }] of Object.entries(outputs[out]?.inputs ?? {})) {
        modules.add(absolute(input));
        bytes.set(absolute(input), bytesInOutput);
      }
      for (const { path, kind, external } of outputs[out]?.imports ?? []) {
        if (kind === "dynamic-import" && onDemand && !external) visit(path);
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
  const narrow = new Set<string>();
  if (options.narrow !== undefined)
    for (const file of closure(options.narrow, true).modules) if (root.has(file)) narrow.add(file);
  const light = new Set<string>();
  for (const entry of Object.keys(options.entries)) {
    if (entry === options.root) continue;
    const reached = closure(entry);
    // Light: an entry that loads no zod (its own packages aside, which the root does not load).
    if (![...reached.packages].some(isZod))
      for (const file of reached.modules) if (root.has(file)) light.add(file);
  }
  // The root's `import()`s of modules outside it, and the `import()`s of those modules' closures in
  // turn (image shaping, imported on demand by the artifacts' work, itself first-use code): each is
  // an entry of build 3 (`lazy-*`). An `import()` left to esbuild would be an entry of its own, named
  // by hash, that only forwards names when its module is also in another entry's chunks.
  const lazy = new Set<string>();
  const scanned = new Set<string>();
  const pending = Object.keys(metafile.inputs).filter((input) => root.has(absolute(input)));
  for (let input = pending.pop(); input !== undefined; input = pending.pop()) {
    if (scanned.has(input)) continue;
    scanned.add(input);
    const inRoot = root.has(absolute(input));
    for (const { path, kind, external } of metafile.inputs[input]?.imports ?? []) {
      if (external || root.has(absolute(path))) continue;
      if (kind === "dynamic-import") lazy.add(absolute(path));
      // From the root only its `import()`s; from first-use code its static imports too.
      if (kind === "dynamic-import" || (!inRoot && kind === "import-statement")) pending.push(path);
    }
  }
  // Dependencies before the modules importing them (depth-first, post-order).
  const order: string[] = [];
  const placed = new Set<string>();
  const place = (input: string) => {
    const file = absolute(input);
    if (placed.has(file) || !root.has(file)) return;
    placed.add(file);
    for (const { path, kind, external } of metafile.inputs[input]?.imports ?? [])
      if (kind === "import-statement" && !external) place(path);
    order.push(file);
  };
  for (const input of Object.keys(metafile.inputs))
    if (absolute(input) === absolute(options.entries[options.root] as string)) place(input);
  for (const file of root) if (!placed.has(file)) order.push(file);
  // The names the root's modules import of each other (the root entry's own list aside): what a
  // core must re-export of a module, on top of what the other entries import, to place every part
  // of it in its own layer's chunk. A part no core reaches goes to the lowest chunk whose modules
  // import it (`writableDisk`, which `FileBridge` uses, went to the zod-free entries' chunk).
  const rootSource = absolute(options.entries[options.root] as string);
  const inner = new Map<string, Set<string> | "all">();
  for (const { importer, file, names } of imported) {
    if (importer === rootSource || !root.has(importer) || !root.has(file) || inner.get(file) === "all")
      continue;
    if (names === undefined) inner.set(file, "all");
    else inner.set(file, new Set([...((inner.get(file) as Set<string> | undefined) ?? []), ...names]));
  }
  return { root: new Set(order), lazy, light, narrow, inner, bytes };
}

/** Whether `name` is zod (`zod`, `zod/v4`, ...): the package the root's heavy modules import. */
const isZod = (name: string) => name === "zod" || name.startsWith("zod/");

/** What {@link analyze} finds. */
interface Shape {
  /** The modules the root loads statically, dependencies first. */
  root: Set<string>;
  /** Modules outside `root` that `root`, or first-use code it loads, imports on demand. */
  lazy: Set<string>;
  /** The modules of `root` that an entry importing no zod reaches (its own packages aside). */
  light: Set<string>;
  /** The modules of `root` that the `narrow` entry reaches, itself or through its first-use code. */
  narrow: Set<string>;
  /** The names of each module of `root` that other modules of `root` import (`"all"`: every one). */
  inner: Map<string, Set<string> | "all">;
  /** Each module's bytes in the output. */
  bytes: Map<string, number>;
}

/**
 * Most bytes per chunk of the root, under 128 KiB. The root's code as one 320 KB chunk (and an 84 KB
 * one) cost ~0.3–0.45 MiB more peak RSS than the same code in 28 files, and in chunks under 128 KiB
 * it did not (docs/performance.md, session 18): most likely because Node holds a module's source as
 * one string, and V8 gives a string over its largest regular object (128 KiB) pages of its own.
 * Fewer, larger chunks cost less CPU (~3 ms for 2 files fewer). A layer's chunk comes out larger
 * than its modules' bytes here (a module its layer does not re-export joins the chunk of the lowest
 * layer importing it): at 120 KB one chunk was 137 KB once `/s3`'s modules were light. At 115 KB the
 * root's zod-side modules took two chunks (97 and 21 KB); at 125 KB they take one of 117 KB, so Node
 * loads the root as 3 files instead of 4: ~0.9 ms less to import it after the SDK (median of 40
 * paired runs), and `/mcp` alone loads 20 KB more (it used the first of the two). Session 26.
 */
const CHUNK_BYTES = 125_000;

/**
 * The root's modules in layers of at most {@link CHUNK_BYTES} (one chunk each), in four groups
 * that each start a layer: light and narrow, light only, narrow only, neither; each dependencies
 * first. Each group's modules import only their own and earlier groups' (light and narrow are each
 * closed under imports, so are their intersection and union), so a light entry loads the chunks of
 * the first two groups and a narrow one those of the first and third.
 */
function layers(shape: Shape): Map<string, number> {
  const layer = new Map<string, number>();
  let level = 0;
  let filled = 0;
  const place = (files: string[]) => {
    for (const file of files) {
      const size = shape.bytes.get(file) ?? 0;
      if (filled > 0 && filled + size > CHUNK_BYTES) {
        level++;
        filled = 0;
      }
      layer.set(file, level);
      filled += size;
    }
  };
  const root = [...shape.root];
  const { light, narrow } = shape;
  const groups = [
    root.filter((file) => light.has(file) && narrow.has(file)),
    root.filter((file) => light.has(file) && !narrow.has(file)),
    root.filter((file) => !light.has(file) && narrow.has(file)),
    root.filter((file) => !light.has(file) && !narrow.has(file)),
  ];
  for (const group of groups) {
    if (filled > 0) {
      level++;
      filled = 0;
    }
    place(group);
  }
  return layer;
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
