/**
 * One `mcpServers` entry of a proxy config mounted with its `servers` rules: the upstream connection
 * (on the proxy's SDK generation), its handoff and output folders, the `FileBridge` that resolves
 * its file arguments, and the adapters of its marked tools (upload consumers, artifact producers).
 * A step of `createFileProxy`.
 */
import { mkdir } from "node:fs/promises";
import { FileBridge } from "../bridge/file-bridge.js";
import type { Duration } from "../internal/duration.js";
import type { ResourceRegistry } from "../registry/resource-registry.js";
import type { FileStore } from "../storage/types.js";
import type { UploadHandleResolver } from "../uploads/upload-handle-resolver.js";
import { keepCallFoldersSwept } from "./call-outputs.js";
import type { ServerRules, ToolRule, UpstreamServerConfig } from "./config.js";
import { confinedFolders, type Folders } from "./confined-file.js";
import type { ProxySdk } from "./sdk/load-sdk.js";
import { artifactProducer, uploadConsumer } from "./stored-file-adapters.js";
import type { JsonObject, MountedUpstream, ToolAdapter, UpstreamPort } from "./types.js";

/** What every mounted upstream shares: the proxy's stores, limits and SDK generation. */
export interface MountDeps {
  generation: ProxySdk;
  store: FileStore;
  registry: ResourceRegistry;
  uploads: UploadHandleResolver;
  /** Largest file argument or upload, in bytes. */
  maxBytes: number;
  /** Most files per call. */
  maxFiles: number;
  /** Largest captured artifact, in bytes. */
  artifactMaxBytes: number;
  /** How long captured artifacts live. */
  artifactTtl: Duration;
  /** Timeout of one upstream call, in milliseconds. */
  callTimeoutMs: number;
  /** How long an upstream may take to answer `initialize`, in milliseconds. */
  initializeTimeoutMs?: number;
  upstreamStderr: "inherit" | "pipe" | "ignore";
  /** Where the upstream's notifications go (the core, once it exists). */
  onNotification: (port: UpstreamPort, method: string, params: JsonObject | undefined) => void;
  log: (line: string) => void;
}

/** True when a server's rules mark any tool argument as an upload (the proxy then serves `get_upload_url`). */
export function wantsUploads(rules: ServerRules | undefined): boolean {
  return Object.values(rules?.tools ?? {}).some((rule) => Boolean(rule.upload));
}

/** The bridge that resolves one upstream's file arguments into its handoff folder. */
function bridgeFor(rules: ServerRules | undefined, deps: MountDeps): FileBridge {
  return new FileBridge({
    maxBytes: deps.maxBytes,
    maxFiles: deps.maxFiles,
    forms: { path: false, dataUrl: true, object: true, resolver: true, https: false, base64: false },
    resolvers: [deps.uploads.fileSourceResolver(), deps.registry.resolver()],
    ...(rules?.handoffDir ? { tmpDir: rules.handoffDir } : {}),
  });
}

/** The adapters of one tool by its rule: an upload consumer, an artifact producer, both, or none. */
function adaptersOf(
  rule: ToolRule | undefined,
  rules: ServerRules | undefined,
  bridge: FileBridge,
  outputs: Folders,
  deps: MountDeps,
): ToolAdapter[] {
  const adapters: ToolAdapter[] = [];
  if (rule?.upload) {
    adapters.push(
      uploadConsumer(rule.upload, {
        bridge,
        uploads: deps.uploads,
        store: deps.store,
        maxFiles: deps.maxFiles,
        // The files extension revision Claude Code ships: descriptors answered with upload_required.
        descriptors: deps.uploads.descriptorAnswerer(),
        ...(rules?.handoffDir ? { handoffDir: rules.handoffDir } : {}),
      }),
    );
  }
  if (rule?.artifacts) {
    adapters.push(
      artifactProducer(rule.artifacts, {
        registry: deps.registry,
        outputs,
        maxBytes: deps.artifactMaxBytes,
        ttl: deps.artifactTtl,
        store: deps.store,
        images: rule.images,
      }),
    );
  }
  return adapters;
}

/**
 * Mounts one upstream: its connection (not connected yet), its folders (created, mode 0700), and
 * `adaptersFor` by its tools' rules.
 */
export async function mountUpstream(
  name: string,
  target: UpstreamServerConfig,
  rules: ServerRules | undefined,
  deps: MountDeps,
): Promise<MountedUpstream> {
  const port: UpstreamPort = deps.generation.upstream({
    name,
    target,
    stderr: deps.upstreamStderr,
    timeoutMs: deps.callTimeoutMs,
    ...(deps.initializeTimeoutMs === undefined ? {} : { initializeTimeoutMs: deps.initializeTimeoutMs }),
    onNotification: (method, params) => deps.onNotification(port, method, params),
    onError: (error) => deps.log(`upstream ${name}: ${error.message}`),
  });
  if (rules?.handoffDir) await mkdir(rules.handoffDir, { recursive: true, mode: 0o700 });
  for (const dir of rules?.outputDirs ?? []) await mkdir(dir, { recursive: true, mode: 0o700 });
  const outputs = await confinedFolders(rules?.outputDirs ?? []);
  // Call folders (`out-*`) a killed proxy left in the folder that holds them: swept now and on a timer.
  if (outputs.real[0] !== undefined) void keepCallFoldersSwept(outputs.real[0]);
  const bridge = bridgeFor(rules, deps);
  const tools = rules?.tools ?? {};
  return {
    port,
    ...(rules?.prefix ? { prefix: rules.prefix } : {}),
    adaptersFor: (tool: JsonObject) => {
      const rule = tools[String(tool.name)];
      return rule ? adaptersOf(rule, rules, bridge, outputs, deps) : [];
    },
  };
}
