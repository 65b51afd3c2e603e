/**
 * Shared by the bucket attack tests (real radosgw): two scopes (alice, bob), each with a files
 * extension client whose `direct` uploads go straight to the bucket, one store with its own prefix.
 */
import { randomBytes } from "node:crypto";
import { HeadObjectCommand } from "@aws-sdk/client-s3";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { requireServices } from "../../../scripts/services/test-env.js";
import { s3Store } from "../../../src/s3/s3-store.js";
import { SignedUrlMinter } from "../../../src/signing/signed-url-minter.js";
import { memoryState } from "../../../src/storage/memory-state.js";
import type { StoredFile } from "../../../src/storage/types.js";
import { UploadHandleResolver } from "../../../src/uploads/upload-handle-resolver.js";
import { connection, objectKeys, testClient } from "../../s3/s3-helpers.js";
import { type Descriptor, DRAFT_CLIENT_CAPABILITY, draftFiles } from "../../support/draft-files-client.js";

export const SECRET = "a-test-secret-that-is-long-enough-0123456789";

/** A store, two scopes' files-extension clients, and teardown. */
export async function bucketSetup(cleanups: Array<() => Promise<void>>) {
  const prefix = `attack-${randomBytes(6).toString("hex")}/`;
  const store = s3Store({ ...connection(), prefix, sweepInterval: 0 });
  const state = memoryState();
  const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: "http://127.0.0.1:9", state });
  const stored: StoredFile[] = [];
  const s3 = testClient();
  cleanups.push(async () => {
    await store.close?.();
    s3.destroy();
  });
  const clientOf = async (scope: string) => {
    const uploads = new UploadHandleResolver({ store, state, minter, scope: () => scope, ttl: "10m" });
    const server = new McpServer({ name: "t", version: "1.0.0" });
    uploads.attach(server, { files: { direct: { onStored: (file) => void stored.push(file) } } });
    const client = new Client(
      { name: "c", version: "1.0.0" },
      { capabilities: DRAFT_CLIENT_CAPABILITY as never },
    );
    const [a, b] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(b), client.connect(a)]);
    cleanups.push(async () => {
      await client.close();
      await server.close();
    });
    return draftFiles(client as never);
  };
  const keys = () => objectKeys(s3, prefix);
  /** The user metadata of an object (`x-amz-meta-*`). */
  const metadataOf = async (key: string) =>
    (await s3.send(new HeadObjectCommand({ Bucket: requireServices().s3.bucket, Key: key }))).Metadata ?? {};
  /** What an anonymous GET of an object answers (no credentials at all). */
  const anonymousStatus = async (key: string) =>
    (await fetch(`${requireServices().s3.endpoint}/${requireServices().s3.bucket}/${key}`)).status;
  return {
    prefix,
    store,
    stored,
    s3,
    alice: await clientOf("alice"),
    bob: await clientOf("bob"),
    keys,
    metadataOf,
    anonymousStatus,
  };
}

/**
 * Sends `bytes` as the descriptor says, plus what an attacker adds: extra request headers, and the
 * same names as extra form fields when the descriptor is a multipart form.
 */
export async function sendWith(
  descriptor: Descriptor,
  bytes: Uint8Array | undefined,
  extra: Record<string, string>,
): Promise<Response> {
  const headers = { ...descriptor.headers, ...extra };
  if (descriptor.multipart) {
    const form = new FormData();
    for (const [key, value] of Object.entries({ ...descriptor.multipart.fields, ...extra }))
      form.append(key, value);
    form.append(descriptor.multipart.fileField, new Blob([new Uint8Array(bytes ?? [])]), "f");
    return fetch(descriptor.url, { method: descriptor.method, headers: extra, body: form });
  }
  return fetch(descriptor.url, {
    method: descriptor.method,
    headers,
    ...(bytes === undefined ? {} : { body: new Uint8Array(bytes) }),
  });
}
