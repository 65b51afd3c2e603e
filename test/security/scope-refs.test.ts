import { describe, expect, it } from "vitest";
import { defaultArtifactUri } from "../../src/artifacts/artifacts.js";
import { ResourceRegistry } from "../../src/registry/resource-registry.js";
import { scopeRef } from "../../src/scope/scope.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import { formatUploadHandle, parseUploadHandle } from "../../src/uploads/upload-handle.js";
import { codeOf } from "../support/helpers.js";

// Scope references at the unit level: what a URI or handle can and cannot name, and the options
// that keep a registry from silently trusting URIs.

const SESSION = "3f2a9c1e-5b7d-4e21-9a0f-6c8d2b1e4f70";

describe("scope references", () => {
  it("are 22 base64url characters, stable, and differ per scope", () => {
    expect(scopeRef(SESSION)).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(scopeRef(SESSION)).toBe(scopeRef(SESSION));
    expect(scopeRef(SESSION)).not.toBe(scopeRef(`${SESSION} `));
  });

  it("stand for the scope in handles and default artifact URIs", () => {
    const handle = formatUploadHandle(SESSION, "01jabcdefghjkmnpqrstvwxyz0");
    expect(handle).toBe(`upload://sessions/${scopeRef(SESSION)}/01jabcdefghjkmnpqrstvwxyz0`);
    expect(parseUploadHandle(handle)).toEqual({
      scopeRef: scopeRef(SESSION),
      id: "01jabcdefghjkmnpqrstvwxyz0",
    });
    // A handle spelled with the scope itself is not a handle at all.
    expect(parseUploadHandle(`upload://sessions/${SESSION}/01jabcdefghjkmnpqrstvwxyz0`)).toBeNull();
    const uri = defaultArtifactUri({ scope: SESSION, id: "01jabcdefghjkmnpqrstvwxyz0", name: "a.txt" });
    expect(uri).not.toContain(SESSION);
  });

  it("resolve only for the caller whose scope has that reference; the raw scope is not accepted", async () => {
    const registry = new ResourceRegistry({ store: memoryStore() });
    const file = await registry.add(Buffer.from("mine"), { scope: SESSION, name: "a.txt" });
    const uri = registry.uriFor(file);
    expect(uri).toBe(`file://uploads/${scopeRef(SESSION)}/a.txt`);
    const resolver = registry.resolver();
    expect(await resolver.resolve(uri, { scope: SESSION })).toMatchObject({ name: "a.txt" });
    expect(await resolver.resolve(uri, { scope: "someone-else" })).toBeNull();
    expect(await resolver.resolve(`file://uploads/${SESSION}/a.txt`, { scope: SESSION })).toBeNull();
    expect(registry.parseUri(`file://uploads/${SESSION}/a.txt`)).toBeNull();
    // link() of another scope's file for a caller: not found (its URI would resolve for nobody else).
    expect(await codeOf(registry.link(file, { scope: "someone-else" }))).toBe("NOT_FOUND");
    await registry.close();
  });

  it("authorize needs a raw-scope template, and scopeInUri is checked", () => {
    const store = memoryStore();
    expect(() => new ResourceRegistry({ store, authorize: () => true })).toThrowError(
      expect.objectContaining({ code: "INVALID_OPTION" }),
    );
    expect(
      () =>
        new ResourceRegistry({
          store,
          templates: [
            { name: "u", uriTemplate: "file://uploads/{scope}/{+path}", scopeInUri: "plain" as never },
          ],
        }),
    ).toThrowError(expect.objectContaining({ code: "INVALID_OPTION" }));
    const raw = new ResourceRegistry({
      store,
      templates: [{ name: "u", uriTemplate: "file://uploads/{scope}/{+path}", scopeInUri: "raw" }],
      authorize: (scope) => scope === "chat-1",
    });
    expect(raw.uriFor({ scope: "chat-1", id: "01jabcdefghjkmnpqrstvwxyz0", name: "a.txt" } as never)).toBe(
      "file://uploads/chat-1/a.txt",
    );
  });

  it("authorize is never asked about another scope's reference", async () => {
    const asked: string[] = [];
    const registry = new ResourceRegistry({
      store: memoryStore(),
      templates: [
        { name: "chats", uriTemplate: "chat://{scope}/{+path}", scopeInUri: "raw", kind: "upload" },
        { name: "outputs", uriTemplate: "out://{scope}/{id}", kind: "artifact" },
      ],
      authorize: (scope) => {
        asked.push(scope);
        return true;
      },
    });
    const output = await registry.add(Buffer.from("x"), { scope: SESSION, name: "o.txt", kind: "artifact" });
    const chat = await registry.add(Buffer.from("y"), { scope: "chat-1", name: "c.txt", kind: "upload" });
    expect(await registry.resolver().resolve(registry.uriFor(output), { scope: "other" })).toBeNull();
    expect(await registry.resolver().resolve(registry.uriFor(chat), { scope: "other" })).toMatchObject({
      name: "c.txt",
    });
    expect(asked).toEqual(["chat-1"]);
    await registry.close();
  });
});
