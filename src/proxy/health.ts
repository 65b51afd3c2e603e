/**
 * `GET /healthz`: is every upstream reachable, and does every configured tool and argument exist in
 * the upstream's real `tools/list`? A missing one is `adapter_wiring_incomplete` (status 503).
 */
import type { ServerRules } from "./config.js";
import type { ProxyCore } from "./proxy-core.js";
import { schemaAt } from "./schema-paths.js";
import type { JsonObject, MountedUpstream } from "./types.js";

/**
 * One problem found by the health check.
 *
 * @example
 * ```ts
 * const problem: HealthProblem = { code: "adapter_wiring_incomplete", upstream: "files", tool: "convrt", message: "…" };
 * ```
 */
export interface HealthProblem {
  code: "adapter_wiring_incomplete" | "upstream_unreachable";
  upstream: string;
  tool?: string;
  argument?: string;
  message: string;
}

/**
 * What `GET /healthz` answers (with status 200 when `status` is `"ok"`, else 503).
 *
 * @example
 * ```ts
 * const report: HealthReport = await proxy.health();
 * if (report.status !== "ok") console.error(report.problems);
 * ```
 */
export interface HealthReport {
  status: "ok" | "adapter_wiring_incomplete" | "upstream_unreachable";
  upstreams: Record<string, { reachable: boolean; tools?: number; error?: string }>;
  problems: HealthProblem[];
}

/** Checks reachability and the wiring of the configured tools against each upstream's tools. */
export async function checkHealth(
  core: ProxyCore,
  rules: (upstream: MountedUpstream) => ServerRules | undefined,
): Promise<HealthReport> {
  const report: HealthReport = { status: "ok", upstreams: {}, problems: [] };
  for (const upstream of core.upstreams) {
    const name = upstream.port.name;
    let tools: JsonObject[];
    try {
      await upstream.port.connect();
      tools = await core.upstreamTools(upstream);
      report.upstreams[name] = { reachable: true, tools: tools.length };
    } catch (error) {
      const message = (error as Error).message;
      report.upstreams[name] = { reachable: false, error: message };
      report.problems.push({ code: "upstream_unreachable", upstream: name, message });
      continue;
    }
    const byName = new Map(tools.map((tool) => [String(tool.name), tool]));
    for (const [toolName, rule] of Object.entries(rules(upstream)?.tools ?? {})) {
      const tool = byName.get(toolName);
      if (!tool) {
        report.problems.push({
          code: "adapter_wiring_incomplete",
          upstream: name,
          tool: toolName,
          message: `tool "${toolName}" is configured but upstream "${name}" has no such tool`,
        });
        continue;
      }
      const args = [
        ...(rule.upload?.args ?? []),
        ...(rule.artifacts?.locator === "none" ? [rule.artifacts.outputArg] : []),
        ...(rule.artifacts && "outputDirArg" in rule.artifacts && rule.artifacts.outputDirArg
          ? [rule.artifacts.outputDirArg]
          : []),
      ];
      for (const arg of args) {
        if (schemaAt(tool.inputSchema, arg).length === 0) {
          report.problems.push({
            code: "adapter_wiring_incomplete",
            upstream: name,
            tool: toolName,
            argument: arg,
            message: `argument "${arg}" of tool "${toolName}" is configured but not in its input schema`,
          });
        }
      }
    }
  }
  if (report.problems.some((p) => p.code === "upstream_unreachable")) report.status = "upstream_unreachable";
  else if (report.problems.length > 0) report.status = "adapter_wiring_incomplete";
  return report;
}
