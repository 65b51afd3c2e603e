/**
 * A files-extension client written from the text of SEP-2631 ("File Objects and Transfer", draft)
 * and the Codex CLI variant, not from our server code: the capability it declares, the shapes it
 * accepts (zod schemas of the draft's FileValue and FileTransferDescriptor), and how it moves bytes
 * (follow the descriptor: method, url, headers, multipart field). It rides on any SDK client that
 * has `request(request, resultSchema)` (SDK v1 and v2 both do).
 */
import { createHash } from "node:crypto";
import { z } from "zod";

/** The client capability of the draft's current text. */
export const DRAFT_CLIENT_CAPABILITY = { files: { upload: true, download: true, transports: ["https"] } };

export const FileValueSchema = z.looseObject({
  uri: z.string(),
  name: z.string().optional(),
  mimeType: z.string().optional(),
  size: z.number().int().nonnegative().optional(),
  digest: z.object({ algorithm: z.string(), value: z.string() }).optional(),
});
export type DraftFileValue = z.infer<typeof FileValueSchema>;

export const DescriptorSchema = z.looseObject({
  transport: z.literal("https"),
  method: z.enum(["PUT", "POST", "GET"]),
  url: z.string(),
  headers: z.record(z.string(), z.string()).optional(),
  multipart: z
    .object({ fileField: z.string(), fields: z.record(z.string(), z.string()).optional() })
    .optional(),
  expiresAt: z.string().optional(),
});
export type Descriptor = z.infer<typeof DescriptorSchema>;

const AuthorizeUploadResult = z.looseObject({
  file: FileValueSchema,
  upload: DescriptorSchema,
  download: DescriptorSchema.optional(),
});
const AuthorizeDownloadResult = z.looseObject({ file: FileValueSchema, download: DescriptorSchema });
const VariantTransferResult = z.looseObject({ file: FileValueSchema, transfer: DescriptorSchema });
const VariantFileResult = z.looseObject({ file: FileValueSchema });

/** What the draft client needs of an SDK client. */
export interface RequestingClient {
  request(request: { method: string; params?: Record<string, unknown> }, schema: never): Promise<unknown>;
}

export interface AuthorizeUploadParams {
  name?: string;
  mimeType?: string;
  size?: number;
  digest?: { algorithm: string; value: string };
}

export const sha256Hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/**
 * The draft's `FileDigest` of `bytes`: "Digest values use unpadded base64url encoding" (RFC 4648 §5,
 * no `=`), algorithm `sha-256`. What this client declares to `authorizeUpload`.
 */
export const draftDigest = (bytes: Uint8Array) => ({
  algorithm: "sha-256",
  value: createHash("sha256").update(bytes).digest("base64url"),
});

/** Decodes an unpadded base64url string as the draft defines it; anything else throws. */
export function decodeBase64Url(value: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*$/.test(value) || value.length % 4 === 1) {
    throw new Error(`digest value ${JSON.stringify(value)} is not unpadded base64url`);
  }
  const standard = value.replace(/-/g, "+").replace(/_/g, "/");
  return new Uint8Array(Buffer.from(standard + "=".repeat((4 - (standard.length % 4)) % 4), "base64"));
}

/**
 * What the draft asks of a client that received a file's bytes: "clients MUST verify" the size and,
 * when present, the digest. The digest's value is decoded as unpadded base64url; a sha-256 is 32
 * bytes and must equal the sha-256 of `bytes`. Throws on any mismatch (the file is corrupt).
 */
export function verifyFile(file: DraftFileValue, bytes: Uint8Array): void {
  if (file.size !== undefined && file.size !== bytes.length) {
    throw new Error(`size ${file.size} declared, ${bytes.length} received`);
  }
  if (file.digest === undefined) return;
  if (file.digest.algorithm.toLowerCase() !== "sha-256") {
    throw new Error(`unknown digest algorithm ${file.digest.algorithm}`);
  }
  const declared = decodeBase64Url(file.digest.value);
  if (declared.length !== 32) throw new Error(`a sha-256 digest has 32 bytes, this one ${declared.length}`);
  const actual = createHash("sha256").update(bytes).digest();
  if (!actual.equals(declared)) throw new Error("digest mismatch: the file is corrupt");
}

/** The draft's methods (`authorizeUpload`, `authorizeDownload`) and the variant's. */
export function draftFiles(client: RequestingClient) {
  const call = <T>(method: string, params: Record<string, unknown>, schema: z.ZodType<T>) =>
    client.request({ method, params }, schema as never) as Promise<T>;
  return {
    authorizeUpload: (params: AuthorizeUploadParams) =>
      call("files/authorizeUpload", { ...params }, AuthorizeUploadResult),
    authorizeDownload: (uri: string) => call("files/authorizeDownload", { uri }, AuthorizeDownloadResult),
    prepareUpload: (params: { name: string; mimeType: string; size: number }) =>
      call("files/prepareUpload", params, VariantTransferResult),
    completeUpload: (uri: string) => call("files/completeUpload", { uri }, VariantFileResult),
    getDownload: (uri: string) => call("files/getDownload", { uri }, VariantTransferResult),
  };
}

/** Sends `bytes` as a descriptor says (raw body, or a multipart form with its file field). */
export async function sendBytes(descriptor: Descriptor, bytes: Uint8Array, name = "file"): Promise<Response> {
  if (descriptor.multipart) {
    const form = new FormData();
    for (const [key, value] of Object.entries(descriptor.multipart.fields ?? {})) form.append(key, value);
    form.append(descriptor.multipart.fileField, new Blob([new Uint8Array(bytes)]), name);
    return fetch(descriptor.url, { method: descriptor.method, headers: descriptor.headers, body: form });
  }
  return fetch(descriptor.url, {
    method: descriptor.method,
    headers: descriptor.headers,
    body: new Uint8Array(bytes),
  });
}

/** Fetches a GET descriptor's bytes. */
export async function fetchBytes(descriptor: Descriptor): Promise<Uint8Array> {
  const response = await fetch(descriptor.url, { method: descriptor.method, headers: descriptor.headers });
  if (!response.ok) throw new Error(`download failed: ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}
