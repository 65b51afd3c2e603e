/**
 * Commit of a finished tus upload through the same put pipeline as a single-request upload: the
 * staged bytes are adopted by the store (`store.adopt()`: a link on the same filesystem, or a
 * server-side copy in the same S3 bucket, with the sha256 hashed while they arrived; a final
 * upload's partial uploads copied one after another, hashed by reading them once) or streamed into
 * `store.stage()` (anything the store cannot take over) — size cap, quota, sha256, a new file id
 * either way — then the ticket is used up, the file made visible, the ticket's handle recorded,
 * `onStored` called (which lists it), and the staging removed.
 */
import { Readable } from "node:stream";
import { scopeRefsOf } from "../../scope/scope-refs.js";
import { Sha256Stream } from "../../storage/kit/sha256-stream.js";
import type {
  AdoptObject,
  AdoptObjectPart,
  PutOptions,
  StagedFile,
  StoredFile,
} from "../../storage/types.js";
import { declaredFileCheck } from "../declared-file.js";
import type { UploadRequestContext } from "../handler-types.js";
import { formatUploadHandle, type TicketRecord, ticketStateKey } from "../upload-handle.js";
import { type TusRecord, tusRecordKey, tusTicketKey, writeRecord } from "./records.js";
import type { TusService, TusTicket } from "./service.js";
import { releaseStaging } from "./staging-ledger.js";

/** S3's smallest multipart part (all but the last): a final upload's parts below it are streamed. */
const MIN_COPY_PART = 5 * 1024 * 1024;

/** The bytes of an upload: its own staging object, or its parts' in order. */
function uploadBytes(service: TusService, id: string, record: TusRecord, lengths: number[]): Readable {
  const { staging } = service;
  if (!record.parts) return staging.read(id, record.offset);
  const parts = record.parts;
  return Readable.from(
    (async function* () {
      for (const [index, part] of parts.entries()) {
        yield* staging.read(part, lengths[index] ?? 0);
      }
    })(),
  );
}

/**
 * Stages the upload's bytes in the store: a whole upload whose staging is a local file (or an
 * object) the store can take over is adopted with the sha256 hashed while its bytes arrived
 * (nothing is read again; on S3, when the bytes arrived through another process, the staged object
 * is hashed once); a final upload whose parts are objects the store can copy (see
 * {@link adoptableParts}) is hashed by reading them once and adopted; anything else streams through
 * `store.stage()`.
 */
async function stageUpload(
  service: TusService,
  id: string,
  record: TusRecord,
  partLengths: number[],
  options: PutOptions,
): Promise<StagedFile> {
  const { store } = service.config;
  const { staging } = service;
  if (service.adopts && !record.parts && store.adopt) {
    const path = staging.localPath?.(id);
    const object = path === undefined ? await staging.adoptable?.(id, record.offset) : undefined;
    if (path !== undefined || object !== undefined) {
      const sha256 = await service.hashes.digest(staging, id, record.offset);
      const source = { size: record.offset, sha256, ...(object ? { object } : { path }) };
      const adopted = await store.adopt(source, options);
      if (adopted) return adopted;
    }
  }
  if (service.adopts && record.parts && store.adopt) {
    const objects = await adoptableParts(service, record.parts, partLengths);
    if (objects) {
      const sha256 = await digestOf(uploadBytes(service, id, record, partLengths));
      const adopted = await store.adopt({ size: record.offset, sha256, objects }, options);
      if (adopted) return adopted;
    }
  }
  return store.stage(uploadBytes(service, id, record, partLengths), options);
}

/**
 * The staged objects of a final upload's parts, when every one is a whole object in the store's own
 * bucket, sent through its own client (the store names them as `client` and `bucket`, as `s3Store`
 * does), each but the last at least S3's smallest multipart part (5 MiB); else `undefined`. All of
 * it is checked before the parts are hashed, so a commit the store cannot take reads them once.
 */
async function adoptableParts(
  service: TusService,
  parts: string[],
  lengths: number[],
): Promise<AdoptObjectPart[] | undefined> {
  const { adoptable } = service.staging;
  if (!adoptable) return undefined;
  const sizes = parts.map((_, index) => lengths[index] ?? 0);
  if (sizes.slice(0, -1).some((size) => size < MIN_COPY_PART)) return undefined;
  const objects = await Promise.all(parts.map((part, index) => adoptable(part, sizes[index] ?? 0)));
  const store = service.config.store as { client?: unknown; bucket?: unknown };
  const reached = (object: AdoptObject | undefined): object is AdoptObject =>
    object !== undefined && object.client === store.client && object.bucket === store.bucket;
  if (!objects.every(reached)) return undefined;
  return objects.map((object, index) => ({ object, size: sizes[index] ?? 0 }));
}

/** The sha256 of a stream's bytes (hashed in the shared worker past the first MiB, never held whole). */
async function digestOf(bytes: Readable): Promise<string> {
  const hash = new Sha256Stream();
  try {
    for await (const chunk of bytes) await hash.update(chunk as Uint8Array);
    return await hash.digest();
  } catch (error) {
    hash.dispose();
    bytes.destroy();
    throw error;
  }
}

/** Removes an upload that can never commit: its record, its staging (and its parts'), its ticket link. */
async function dropUpload(
  service: TusService,
  ticket: TusTicket,
  id: string,
  record: TusRecord,
): Promise<void> {
  const { state } = service;
  const ids = [id, ...(record.parts ?? [])];
  await Promise.all(ids.map((each) => state.delete(tusRecordKey(each))));
  if ((await state.get(tusTicketKey(ticket.verified.fileId))) === id) {
    await state.delete(tusTicketKey(ticket.verified.fileId));
  }
  service.hashes.drop(id);
  await Promise.all(ids.map((each) => service.staging.remove(each)));
  await releaseStaging(service, ticket.limits.scope, ids);
}

/** What a commit answers with: the stored file and the ticket's handle. */
export interface TusCommitted {
  file: StoredFile;
  handle: string;
}

/**
 * Commits upload `id` (its lock held by the caller). `partLengths` are the lengths of a final
 * upload's parts. On failure nothing is stored and the staging stays, so the commit can be retried.
 */
export async function commitTusUpload(
  service: TusService,
  ctx: Pick<UploadRequestContext, "report">,
  ticket: TusTicket,
  id: string,
  record: TusRecord,
  partLengths: number[] = [],
): Promise<TusCommitted> {
  const { config, state } = service;
  const { limits, verified } = ticket;
  const staged = await stageUpload(service, id, record, partLengths, {
    scope: limits.scope,
    name: record.name,
    mimeType: record.mimeType,
    typeFromBytes: true,
    kind: "upload",
    ttl: limits.ttlMs / 1000,
    maxBytes: limits.maxBytes,
    expectedSize: record.length,
  });
  try {
    declaredFileCheck(verified.claims ?? {})?.(staged.file);
  } catch (error) {
    // Complete but not the declared file: it can never commit. Gone, so the ticket starts over.
    await staged.abort();
    await dropUpload(service, ticket, id, record).catch((cause) => ctx.report(cause));
    throw error;
  }
  let file: StoredFile;
  try {
    // A single-use ticket is used up only now: until here every failure left the upload resumable.
    await config.minter.consume?.(verified);
    file = await staged.commit();
  } catch (error) {
    await staged.abort();
    throw error;
  }
  const now = service.now();
  const handle = formatUploadHandle(limits.scope, verified.fileId, scopeRefsOf(config.minter));
  await writeRecord(state, id, { ...record, fileId: file.id, handle, sha256: file.sha256 }, now);
  const ticketRecord: TicketRecord = { scope: limits.scope, files: [file.id] };
  try {
    await state.set(ticketStateKey(verified.fileId), ticketRecord, { ttl: limits.ttlMs / 1000 });
  } catch (error) {
    ctx.report(error);
  }
  try {
    await config.onStored?.(file);
  } catch (error) {
    ctx.report(error);
  }
  const staging = [id, ...(record.parts ?? [])];
  await Promise.all(staging.map((part) => service.staging.remove(part).catch((error) => ctx.report(error))));
  // The store counts the file now: its staging share ends.
  await releaseStaging(service, limits.scope, staging).catch((error) => ctx.report(error));
  service.onProgress?.({
    ticketId: verified.fileId,
    scope: limits.scope,
    offset: file.size,
    length: file.size,
    fileId: file.id,
  });
  // The minter's keyed scope reference, as in the single-request path's handles (not the unkeyed hash).
  return { file, handle };
}
