import { isId } from "../internal/ids.js";
import { optionCheck } from "../internal/options.js";
import { parseMediaType } from "../media/media-type.js";
import { assertScope, MAX_SCOPE_LENGTH } from "../scope/scope.js";
import { type ScopeRefs, UNKEYED_SCOPE_REFS } from "../scope/scope-refs.js";
import type { FileKind, StoredFile } from "../storage/types.js";
import type { ParsedResourceUri, ResourceTemplateOptions, TemplateVariables } from "./options.js";
import { expandTemplate, matchTemplate, type ParsedTemplate, parseTemplate } from "./uri-template.js";

// The registry's URI templates: compiled and checked once, then used to build and parse URIs.
//
// A template's scope variable carries, by default, the scope's opaque reference (`scopeRef`), never
// the scope itself: a scope is often a bearer value (an MCP session id), and URIs are shared (tool
// text, links, upload replies). A URI with a reference is resolved by comparing it with the
// reference of the caller's own scope, so it can only ever name the caller's scope. Templates with
// `scopeInUri: "raw"` carry the scope as it is (for non-secret, verified ids such as chat ids);
// only those can name another scope, which the registry's `authorize` hook then decides on.

export interface Template {
  readonly index: number;
  readonly options: ResourceTemplateOptions;
  readonly parsed: ParsedTemplate;
  readonly scopeVar?: string;
  /** How the scope variable carries the scope: its reference, or the scope as it is. */
  readonly scopeInUri: "ref" | "raw";
  readonly idVar?: string;
  readonly pathVar?: string;
}

export interface ParsedUri {
  template: Template;
  /** The scope named in the URI (templates with `scopeInUri: "raw"`). */
  scope?: string;
  /** The scope reference named in the URI (templates with `scopeInUri: "ref"`, the default). */
  scopeRef?: string;
  id?: string;
  path?: string;
}

/**
 * Default templates, see {@link ResourceRegistryOptions.templates}.
 *
 * @example
 * ```ts
 * new ResourceRegistry({ store, templates: [...DEFAULT_RESOURCE_TEMPLATES, myTemplate] });
 * ```
 */
export const DEFAULT_RESOURCE_TEMPLATES: readonly ResourceTemplateOptions[] = Object.freeze([
  {
    name: "uploads",
    uriTemplate: "file://uploads/{scope}/{+path}",
    title: "Uploaded files",
    description: "Files uploaded in this session. Pass the URI to a tool as a file argument.",
    kind: "upload",
  },
  {
    name: "artifacts",
    uriTemplate: "artifact://sessions/{scope}/{id}/{filename}",
    title: "Tool outputs",
    description: "Files produced by tools in this session.",
    kind: "artifact",
  },
]);

const KINDS: readonly FileKind[] = ["upload", "artifact", "file"];

const check = optionCheck("ResourceRegistry");

/** What `scopeRef()` produces: 128 bits, base64url, 22 characters. */
const SCOPE_REF = /^[A-Za-z0-9_-]{22}$/;

function validPath(path: string): boolean {
  if (path.length === 0 || path.includes("\u0000")) return false;
  return path.split("/").every((segment) => segment !== "" && segment !== "." && segment !== "..");
}

export function validScope(scope: string): boolean {
  try {
    assertScope(scope);
    return true;
  } catch {
    return false;
  }
}

function compileTemplate(options: ResourceTemplateOptions, index: number): Template {
  const label = `templates[${index}]`;
  if (typeof options !== "object" || options === null) throw check.error(label, "must be an object");
  if (typeof options.name !== "string" || options.name.length === 0) {
    throw check.error(`${label}.name`, "must be a non-empty string");
  }
  const parsed = parseTemplate(options.uriTemplate, `${label}.uriTemplate`);
  if (options.kind !== undefined && !KINDS.includes(options.kind)) {
    throw check.error(`${label}.kind`, `must be one of ${KINDS.join(", ")}`);
  }
  if (options.mimeType !== undefined && parseMediaType(options.mimeType) === null) {
    throw check.error(`${label}.mimeType`, "must be a media type");
  }
  const scopeInUri = options.scopeInUri ?? "ref";
  if (scopeInUri !== "ref" && scopeInUri !== "raw") {
    throw check.error(`${label}.scopeInUri`, 'must be "ref" or "raw"');
  }
  const mapping = options.variables ?? {};
  const has = (name: string | undefined): name is string =>
    name !== undefined && parsed.variables.includes(name);
  const pick = (role: keyof TemplateVariables, defaults: string[]): string | undefined => {
    const given = mapping[role];
    if (given !== undefined) {
      if (!has(given))
        throw check.error(`${label}.variables.${role}`, `names {${given}}, which the template does not have`);
      return given;
    }
    return defaults.find((name) => has(name) && !Object.values(mapping).includes(name));
  };
  const scopeVar = pick("scope", ["scope"]);
  const idVar = pick("id", ["id"]);
  const pathVar = pick("path", ["path", "filename", "name"]);
  const roles = [scopeVar, idVar, pathVar].filter((name) => name !== undefined);
  if (new Set(roles).size !== roles.length) {
    throw check.error(`${label}.variables`, "cannot give one variable two parts");
  }
  for (const variable of parsed.variables) {
    if (!roles.includes(variable)) {
      throw check.error(`${label}.variables`, `does not map {${variable}}: every variable needs a part`);
    }
  }
  if (idVar === undefined && pathVar === undefined) {
    throw check.error(label, "needs an id or a path variable to find files");
  }
  return {
    index,
    options,
    parsed,
    scopeInUri,
    ...(scopeVar === undefined ? {} : { scopeVar }),
    ...(idVar === undefined ? {} : { idVar }),
    ...(pathVar === undefined ? {} : { pathVar }),
  };
}

/** The compiled templates of a registry, and the URI work done with them. */
export class TemplateSet {
  readonly all: readonly Template[];
  private readonly byKind: Readonly<Record<FileKind, Template>>;

  /** @throws FileBridgeError `INVALID_OPTION` naming the bad template. */
  constructor(
    templates: readonly ResourceTemplateOptions[] | undefined,
    /** How scopes become references: the registry minter's (`minter.scopeRefs`). */
    readonly refs: ScopeRefs = UNKEYED_SCOPE_REFS,
  ) {
    const templateOptions = templates ?? DEFAULT_RESOURCE_TEMPLATES;
    if (!Array.isArray(templateOptions) || templateOptions.length === 0) {
      throw check.error("templates", "must be a non-empty array");
    }
    this.all = templateOptions.map(compileTemplate);
    const names = new Set(this.all.map((t) => t.options.name));
    const sources = new Set(this.all.map((t) => t.parsed.source));
    if (names.size !== this.all.length) throw check.error("templates", "must have unique names");
    if (sources.size !== this.all.length) throw check.error("templates", "must have unique uriTemplates");
    const forKind = (kind: FileKind): Template =>
      this.all.find((t) => t.options.kind === kind) ??
      this.all.find((t) => t.options.kind === undefined) ??
      (this.all[0] as Template);
    this.byKind = { upload: forKind("upload"), artifact: forKind("artifact"), file: forKind("file") };
  }

  /** The resource URI of a stored file, from the first template of its kind. */
  uriFor(file: Pick<StoredFile, "scope" | "id" | "name" | "kind">): string {
    return this.uriWith(this.templateFor(file), file);
  }

  uriWith(template: Template, file: Pick<StoredFile, "scope" | "id" | "name">): string {
    const values: Record<string, string> = {};
    if (template.scopeVar) values[template.scopeVar] = this.scopeValue(template, file.scope);
    if (template.idVar) values[template.idVar] = file.id;
    if (template.pathVar) values[template.pathVar] = file.name;
    return expandTemplate(template.parsed, values);
  }

  /** What a template's scope variable holds for `scope`: its reference, or (raw) the scope itself. */
  scopeValue(template: Template, scope: string): string {
    return template.scopeInUri === "raw" ? scope : this.refs.of(scope);
  }

  /**
   * The scope a parsed URI names, seen from `callerScope`: the caller's own scope when the URI has
   * no scope variable or carries the caller's reference; the scope as written for a raw template
   * (another scope then needs `authorize`); `null` for another scope's reference, which nothing can
   * turn back into a scope, so it resolves exactly like "not found".
   */
  scopeFor(parsed: ParsedUri, callerScope: string): string | null {
    if (parsed.scope !== undefined) return parsed.scope;
    if (parsed.scopeRef !== undefined)
      return this.refs.matches(parsed.scopeRef, callerScope) ? callerScope : null;
    return callerScope;
  }

  /** True when some template carries the scope as it is, so a URI can name another scope. */
  hasRawScope(): boolean {
    return this.all.some((t) => t.scopeVar !== undefined && t.scopeInUri === "raw");
  }

  templateFor(file: Pick<StoredFile, "kind">): Template {
    return this.byKind[file.kind] ?? (this.all[0] as Template);
  }

  /** The template whose source is `uriTemplate` (a completion reference), if any. */
  bySource(uriTemplate: string): Template | undefined {
    return this.all.find((t) => t.parsed.source === uriTemplate);
  }

  /** The public form of a parsed URI. */
  describe(parsed: ParsedUri): ParsedResourceUri {
    return {
      template: parsed.template.options.name,
      ...(parsed.scope === undefined ? {} : { scope: parsed.scope }),
      ...(parsed.scopeRef === undefined ? {} : { scopeRef: parsed.scopeRef }),
      ...(parsed.id === undefined ? {} : { id: parsed.id }),
      ...(parsed.path === undefined ? {} : { path: parsed.path }),
    };
  }

  parse(uri: unknown): ParsedUri | null {
    if (typeof uri !== "string" || uri.length === 0 || uri.length > 8192) return null;
    for (const template of this.all) {
      const values = matchTemplate(template.parsed, uri);
      if (!values) continue;
      const result: ParsedUri = { template };
      if (template.scopeVar) {
        const scope = values[template.scopeVar] as string;
        if (template.scopeInUri === "raw") {
          if (scope.length > MAX_SCOPE_LENGTH || !validScope(scope)) return null;
          result.scope = scope;
        } else {
          if (!SCOPE_REF.test(scope)) return null;
          result.scopeRef = scope;
        }
      }
      if (template.idVar) {
        const id = values[template.idVar];
        if (!isId(id)) return null;
        result.id = id;
      }
      if (template.pathVar) {
        const path = values[template.pathVar] as string;
        if (!validPath(path)) return null;
        result.path = path;
      }
      return result;
    }
    return null;
  }
}
