import { FileBridgeError } from "../errors/file-bridge-error.js";
import { toMcpRequestError } from "./errors.js";
import type {
  HostMethod,
  HostMethods,
  HostRequestContext,
  HostRequestHandler,
  HostResource,
  HostResourceHandle,
} from "./host.js";
import { loadHostWork } from "./load-host-work.js";
import type { McpResource } from "./types.js";

/**
 * The fixed resources of one host (`McpHost.registerResource`), for any SDK generation's adapter:
 * it composes them with whatever else serves `resources/list` and `resources/read` (a
 * `ResourceRegistry` mounts those through `handle()`), or answers alone when nothing else does.
 * Fixed resources come first on the first page of `resources/list`, and a read of their URI never
 * reaches the other handler.
 */
export class FixedResources {
  readonly #byUri = new Map<string, HostResource>();
  /** The methods this adapter answers with its own handlers (none until a resource needs them). */
  readonly #ownMounted = new Set<string>();

  /**
   * `McpHost.registerResource`, the same for every adapter: when a piece serves resources through the
   * port (or these handlers already answer), the composed handlers pick the resource up; when nothing
   * serves them, the adapter's own handlers are mounted; when the server serves resources outside the
   * port (an McpServer's own `registerResource`), the resource joins those through `joinServer`.
   */
  register(resource: HostResource, adapter: FixedResourceAdapter): HostResourceHandle {
    const viaPort = adapter.handled("resources/list") && adapter.handled("resources/read");
    if (viaPort || this.#ownMounted.size > 0) return { remove: this.add(resource) };
    if (OWN_RESOURCE_METHODS.every((method) => adapter.canHandle(method))) {
      adapter.declareResources(); // the SDKs refuse resource handlers before the capability is declared
      const remove = this.add(resource);
      for (const method of OWN_RESOURCE_METHODS) {
        adapter.mount(method, this.own[method] as HostRequestHandler<typeof method>);
        this.#ownMounted.add(method);
      }
      return { remove };
    }
    if (!adapter.joinServer) {
      throw new FileBridgeError(
        "INVALID_INPUT",
        "registerResource: the server already handles resources/list",
      );
    }
    return adapter.joinServer(resource, resourceMetadata(resource));
  }

  /** Whether `method` is answered by this adapter's own handlers (a piece may replace them). */
  ownsHandler(method: string): boolean {
    return this.#ownMounted.has(method);
  }

  /** A piece now handles `method` itself: the adapter's own handler for it is gone. */
  releaseHandler(method: string): void {
    this.#ownMounted.delete(method);
  }

  get size(): number {
    return this.#byUri.size;
  }

  /** Adds a resource; `INVALID_INPUT` for a malformed one or a URI already taken. Returns its removal. */
  add(resource: HostResource): () => void {
    if (
      typeof resource !== "object" ||
      resource === null ||
      typeof resource.uri !== "string" ||
      !/^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(resource.uri) ||
      typeof resource.name !== "string" ||
      resource.name === "" ||
      typeof resource.read !== "function"
    ) {
      throw new FileBridgeError("INVALID_INPUT", "registerResource: needs a uri, a name and read()");
    }
    if (this.#byUri.has(resource.uri)) {
      throw new FileBridgeError("INVALID_INPUT", `registerResource: ${resource.uri} is already registered`);
    }
    this.#byUri.set(resource.uri, resource);
    return () => {
      if (this.#byUri.get(resource.uri) === resource) this.#byUri.delete(resource.uri);
    };
  }

  /** The `resources/list` entries of the fixed resources (made by host-work.ts, loaded on first use). */
  async entries(): Promise<McpResource[]> {
    return (await loadHostWork()).fixedEntries(this.#byUri.values());
  }

  /** `resources/list` and `resources/read` handlers wrapped so they serve the fixed resources too. */
  compose<M extends keyof HostMethods>(method: M, handler: HostRequestHandler<M>): HostRequestHandler<M> {
    if (method === "resources/list") {
      const list = handler as unknown as HostRequestHandler<"resources/list">;
      const composed: HostRequestHandler<"resources/list"> = async (params, ctx) => {
        const result = await list(params, ctx);
        if (params.cursor !== undefined || this.#byUri.size === 0) return result;
        return { ...result, resources: [...(await this.entries()), ...result.resources] };
      };
      return composed as unknown as HostRequestHandler<M>;
    }
    if (method === "resources/read") {
      const read = handler as unknown as HostRequestHandler<"resources/read">;
      const composed: HostRequestHandler<"resources/read"> = async (params, ctx) => {
        const fixed = this.#byUri.get(params.uri);
        return fixed ? fixed.read(ctx) : read(params, ctx);
      };
      return composed as unknown as HostRequestHandler<M>;
    }
    return handler;
  }

  /** The handlers a host mounts when nothing else serves resources. */
  readonly own = {
    "resources/list": async (params: { cursor?: string }) =>
      params.cursor === undefined ? { resources: await this.entries() } : { resources: [] },
    "resources/templates/list": async () => ({ resourceTemplates: [] }),
    "resources/read": async (params: { uri: string }, ctx: HostRequestContext) => {
      const fixed = this.#byUri.get(params.uri);
      if (!fixed) {
        const missing = new FileBridgeError("NOT_FOUND", `Resource ${params.uri} not found`);
        throw toMcpRequestError(missing, { uri: params.uri });
      }
      return fixed.read(ctx);
    },
  } satisfies {
    [M in "resources/list" | "resources/templates/list" | "resources/read"]: HostRequestHandler<M>;
  };
}

/** The resource methods an adapter answers itself when only fixed resources exist. */
export const OWN_RESOURCE_METHODS = ["resources/list", "resources/templates/list", "resources/read"] as const;

/** What {@link FixedResources.register} needs from an adapter. */
export interface FixedResourceAdapter {
  /** Whether a piece mounted `method` through the port. */
  handled(method: HostMethod): boolean;
  canHandle(method: HostMethod): boolean;
  declareResources(): void;
  mount<M extends HostMethod>(method: M, handler: HostRequestHandler<M>): void;
  /** Joins the server's own resources (an McpServer's `registerResource`); absent for a low-level server. */
  joinServer?(resource: HostResource, metadata: Record<string, unknown>): HostResourceHandle;
}

/** The listing metadata of a fixed resource, as an SDK's `registerResource` takes it. */
export function resourceMetadata(resource: HostResource): Record<string, unknown> {
  return {
    ...(resource.title === undefined ? {} : { title: resource.title }),
    ...(resource.description === undefined ? {} : { description: resource.description }),
    ...(resource.mimeType === undefined ? {} : { mimeType: resource.mimeType }),
    ...(resource._meta === undefined ? {} : { _meta: resource._meta }),
  };
}
