/**
 * Input form: a string a registered {@link FileSourceResolver} recognises (`upload://…` handles,
 * resource URIs this server issued). The resolver finds the file in the caller's scope; its bytes are
 * copied through the materializer and checked against the size and sha256 the resolver declared.
 */
import { createReadStream } from "node:fs";
import { FileBridgeError } from "../../errors/file-bridge-error.js";
import type { CallContext } from "../call-context.js";
import { aborted, resolverFailure, tooLarge } from "../failures.js";
import { type MaterializeSpec, materializeStream } from "../materialize.js";
import type { FileSourceResolver, ResolvedFile, ResolverResult } from "../types.js";

/** Resolves `input` with `resolver` in the caller's scope; `null` from the resolver is `NOT_FOUND`. */
export async function fromResolver(
  resolver: FileSourceResolver,
  input: string,
  ctx: CallContext,
): Promise<ResolvedFile> {
  let result: ResolverResult | null;
  try {
    result = await resolver.resolve(input, {
      scope: ctx.scope,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
  } catch (error) {
    if (ctx.signal?.aborted) throw aborted();
    throw resolverFailure(`the ${resolver.name} resolver`, error);
  }
  if (ctx.signal?.aborted) throw aborted();
  if (!result) throw new FileBridgeError("NOT_FOUND", `no such ${resolver.name}`, { data: { uri: input } });
  return materializeResult(resolver, result, ctx);
}

/**
 * Resolves `input` to each file it stands for: the resolver's `resolveEach` when it has one (an
 * upload handle stands for every file of its upload), else its one file. More than `maxFiles` is
 * `TOO_MANY_FILES` before anything is copied. All or nothing: a failure disposes the files already
 * made. `null`, or no file at all, is `NOT_FOUND`.
 */
export async function fromResolverEach(
  resolver: FileSourceResolver,
  input: string,
  ctx: CallContext,
  maxFiles: number,
): Promise<ResolvedFile[]> {
  if (!resolver.resolveEach) return [await fromResolver(resolver, input, ctx)];
  let results: ResolverResult[] | null;
  try {
    results = await resolver.resolveEach(input, {
      scope: ctx.scope,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
  } catch (error) {
    if (ctx.signal?.aborted) throw aborted();
    throw resolverFailure(`the ${resolver.name} resolver`, error);
  }
  if (ctx.signal?.aborted) throw aborted();
  if (!results || results.length === 0) {
    throw new FileBridgeError("NOT_FOUND", `no such ${resolver.name}`, { data: { uri: input } });
  }
  if (results.length > maxFiles) {
    throw new FileBridgeError("TOO_MANY_FILES", `at most ${maxFiles} files can be sent at once`, {
      data: { limit: maxFiles, count: results.length },
    });
  }
  const files: ResolvedFile[] = [];
  try {
    for (const result of results) files.push(await materializeResult(resolver, result, ctx));
  } catch (error) {
    await Promise.allSettled(files.map((file) => file.dispose()));
    throw error;
  }
  return files;
}

/** Copies a resolver's file through the materializer, checked against its declared size and sha256. */
function materializeResult(
  resolver: FileSourceResolver,
  result: ResolverResult,
  ctx: CallContext,
): Promise<ResolvedFile> {
  if (result.size !== undefined && result.size > ctx.maxBytes) throw tooLarge(result.size, ctx.maxBytes);
  const spec: MaterializeSpec = {
    kind: "resolver",
    detail: resolver.name,
    name: result.name,
    mimeType: result.mimeType,
    expectedSize: result.size,
    expectedSha256: result.sha256,
  };
  const found = result;
  return materializeStream(ctx, spec, () =>
    found.localPath ? createReadStream(found.localPath) : found.open(),
  );
}
