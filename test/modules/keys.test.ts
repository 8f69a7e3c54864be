import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import { unavailable } from "../../src/lib/errors";
import { sha256Hex } from "../../src/lib/ids";
import { createLogger } from "../../src/lib/log";
import type { ServiceContext, Services } from "../../src/lib/module";
import { RESYNC, type Store, openStore, parseStoreTarget } from "../../src/lib/store";
import { storeMigrations } from "../../src/modules";
import { KEYS_CHANNEL, KeysService } from "../../src/modules/keys/service";
import { ProjectsService } from "../../src/modules/projects/service";
import { startTestServer, type TestServer } from "../helpers";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ lastUsedFlushMs: 500 });
});
afterAll(() => s.stop());

test("minting each type gives the DECISIONS.md format and the secret once", async () => {
  for (const type of ["admin", "client", "server"] as const) {
    const r = await s.api("/api/admin/keys", { body: { type, name: `my ${type}` } });
    expect(r.status).toBe(201);
    expect(r.body.key).toMatch(new RegExp(`^sdk_${type}_[A-Za-z0-9]+$`));
    expect(r.body).toMatchObject({ type, name: `my ${type}` });
    expect(r.body.id).toMatch(/^key_/);
    expect(Array.isArray(r.body.scopes)).toBe(true);
    const list = await s.api("/api/admin/keys");
    expect(list.text).not.toContain(r.body.key);
    const row = (list.body as any[]).find((k) => k.id === r.body.id);
    expect(row.maskedKey).toBe(`sdk_${type}_…${r.body.key.slice(-4)}`);
    expect(row).not.toHaveProperty("key");
  }
  const client = await s.api("/api/admin/keys", { body: { type: "client" } });
  expect(client.body.scopes).toEqual(["tickets:public_create"]);
});

test("only the hash of a secret is stored", async () => {
  const r = await s.api("/api/admin/keys", { body: { type: "server" } });
  const rows = await s.store.all("SELECT * FROM sdk_keys WHERE id = ?", r.body.id);
  expect(JSON.stringify(rows)).not.toContain(r.body.key);
  expect(JSON.stringify(rows)).toContain(new Bun.CryptoHasher("sha256").update(r.body.key).digest("hex"));
});

test("a new admin key works; a revoked one is UNAUTHORIZED at once", async () => {
  const r = await s.api("/api/admin/keys", { body: { type: "admin" } });
  expect((await s.api("/api/admin/projects/current", { key: r.body.key })).status).toBe(200);
  const del = await s.api(`/api/admin/keys/${r.body.id}`, { method: "DELETE" });
  expect(del.status).toBe(204);
  const after = await s.api("/api/admin/projects/current", { key: r.body.key });
  expect(after.status).toBe(401);
  expect(after.body.code).toBe("UNAUTHORIZED");
  expect(((await s.api("/api/admin/keys")).body as any[]).some((k) => k.id === r.body.id)).toBe(false);
  const again = await s.api(`/api/admin/keys/${r.body.id}`, { method: "DELETE" });
  expect(again.status).toBe(404);
});

test("bad mint bodies get VALIDATION / BAD_REQUEST and mint nothing", async () => {
  const before = ((await s.api("/api/admin/keys")).body as any[]).length;
  for (const body of [{}, { type: "superuser" }, { type: 1 }, { type: "admin", name: 5 }, { type: "client", scopes: "x" }]) {
    const r = await s.api("/api/admin/keys", { body });
    expect(r.status, JSON.stringify(body)).toBe(400);
    expect(r.body.code).toBe("VALIDATION");
  }
  const scope = await s.api("/api/admin/keys", { body: { type: "server", scopes: ["tickets:public_create"] } });
  expect(scope.status).toBe(400);
  expect(scope.body.code).toBe("BAD_REQUEST");
  expect(scope.body.detail).toContain("scopes");
  const bad = await s.api("/api/admin/keys", { rawBody: "{" });
  expect(bad.status).toBe(400);
  expect(bad.body.code).toBe("BAD_REQUEST");
  expect(((await s.api("/api/admin/keys")).body as any[]).length).toBe(before);
});

test("a client key may be minted without the public ticket scope", async () => {
  const r = await s.api("/api/admin/keys", { body: { type: "client", scopes: [] } });
  expect(r.status).toBe(201);
  expect(r.body.scopes).toEqual([]);
});

test("last use is recorded off the request path and shown in the list", async () => {
  const r = await s.api("/api/admin/keys", { body: { type: "admin" } });
  const before = Date.now();
  await s.api("/api/admin/projects/current", { key: r.body.key });
  // Not written by the request itself ...
  const immediately = await s.store.one<any>("SELECT last_used_at FROM sdk_keys WHERE id = ?", r.body.id);
  expect(immediately.last_used_at).toBeNull();
  // ... but by the flush timer shortly after (polled: the machine may be busy).
  let stored: any;
  for (let i = 0; i < 100; i++) {
    await Bun.sleep(50);
    stored = await s.store.one("SELECT last_used_at FROM sdk_keys WHERE id = ?", r.body.id);
    if (stored.last_used_at) break;
  }
  expect(new Date(stored.last_used_at).getTime()).toBeGreaterThanOrEqual(before - 5);
  const listed = ((await s.api("/api/admin/keys")).body as any[]).find((k) => k.id === r.body.id);
  expect(listed.lastUsedAt).not.toBeNull();
});

test("a foreign admin key cannot list or revoke our keys", async () => {
  const other = await s.newProject("Foreign");
  const ours = ((await s.api("/api/admin/keys")).body as any[]).map((k) => k.id);
  const theirs = ((await s.api("/api/admin/keys", { key: other.adminKey })).body as any[]).map((k) => k.id);
  expect(theirs.some((id) => ours.includes(id))).toBe(false);
  const del = await s.api(`/api/admin/keys/${ours[0]}`, { method: "DELETE", key: other.adminKey });
  expect(del.status).toBe(404);
  expect(((await s.api("/api/admin/keys")).body as any[]).map((k) => k.id)).toEqual(ours);
  const scoped = await s.api("/api/admin/keys", { key: other.adminKey, headers: { "x-project-id": s.projectId } });
  expect(scoped.status).toBe(403);
});

test("the list takes q: case-insensitive substring of the name; over 100 characters is VALIDATION", async () => {
  const a = await s.api("/api/admin/keys", { body: { type: "server", name: "Checkout Backend" } });
  const b = await s.api("/api/admin/keys", { body: { type: "client", name: "marketing site" } });
  const found = await s.api("/api/admin/keys?q=CHECKOUT");
  expect(found.status).toBe(200);
  expect((found.body as any[]).map((k) => k.id)).toEqual([a.body.id]);
  const none = await s.api("/api/admin/keys?q=nothing-matches-this");
  expect(none.body).toEqual([]);
  const all = await s.api("/api/admin/keys?q=");
  expect((all.body as any[]).map((k) => k.id)).toEqual(expect.arrayContaining([a.body.id, b.body.id]));
  const long = await s.api(`/api/admin/keys?q=${"a".repeat(101)}`);
  expect(long.status).toBe(400);
  expect(long.body.code).toBe("VALIDATION");
  expect(long.body.detail).toContain("q");
});

test("a key id over 128 characters is VALIDATION and revokes nothing", async () => {
  const before = ((await s.api("/api/admin/keys")).body as any[]).length;
  const r = await s.api(`/api/admin/keys/${"k".repeat(129)}`, { method: "DELETE" });
  expect(r.status).toBe(400);
  expect(r.body.code).toBe("VALIDATION");
  expect(r.body.detail).toContain("id");
  expect(((await s.api("/api/admin/keys")).body as any[]).length).toBe(before);
});

test("OpenAPI documents the key routes at the paths of DECISIONS.md", async () => {
  const paths = (await s.api("/openapi/json", { key: null })).body.paths;
  expect(Object.keys(paths["/api/admin/keys"] ?? {}).sort()).toEqual(["get", "post"]);
  expect(paths["/api/admin/keys/"]).toBeUndefined();
  expect(paths["/api/admin/keys"].get.parameters.map((p: any) => p.name)).toContain("q");
  expect(Object.keys(paths["/api/admin/keys/{id}"].delete.responses)).toEqual(expect.arrayContaining(["400", "401", "403", "404"]));
});

test("mint and revoke each record one audit row naming the caller, never the secret", async () => {
  const r = await s.api("/api/admin/keys", { body: { type: "server", name: "audited" } });
  const del = await s.api(`/api/admin/keys/${r.body.id}`, { method: "DELETE" });
  expect(del.status).toBe(204);
  const rows = (await auditOf(s.store, s.projectId, 1000)).filter((a) => a.subjectId === r.body.id);
  expect(rows.map((a) => a.action)).toEqual(["key.revoke", "key.mint"]);
  for (const row of rows) {
    expect(row.subjectName).toBe("audited");
    expect(row.actorType).toBe("key");
    expect(row.actorEmail).toMatch(/^admin-key:key_[A-Za-z0-9_-]+@keys\.local$/);
  }
  expect(rows[1]!.detail).toMatchObject({ type: "server", scopes: ["sdk:read"] });
  const text = JSON.stringify(await s.store.all("SELECT * FROM audit_log WHERE subject_id = ?", r.body.id));
  expect(text).not.toContain(r.body.key);
  expect(text).not.toContain(sha256Hex(r.body.key));
  // A revoke that finds nothing records nothing.
  const before = (await auditOf(s.store, s.projectId, 1000)).length;
  expect((await s.api(`/api/admin/keys/${r.body.id}`, { method: "DELETE" })).status).toBe(404);
  expect((await auditOf(s.store, s.projectId, 1000)).length).toBe(before);
});

/** A KeysService of its own on the test server's store, whose announcements the test makes (and whose writes it may break). */
function detachedKeys(write?: Store["write"]) {
  let listener: ((payload: string) => void) | undefined;
  const store = Object.create(s.store) as Store;
  store.listen = (_channel, fn) => {
    listener = fn;
    return () => {};
  };
  if (write) store.write = write;
  const warnings: string[] = [];
  const log = { ...createLogger({ requests: false, quiet: true }), warn: (msg: string) => void warnings.push(msg) };
  const services = {} as Services;
  const ctx: ServiceContext = { store, log, options: { maxBodyBytes: 1 << 20, lastUsedFlushMs: 3_600_000 }, services, shutdown: new AbortController().signal };
  services.projects = new ProjectsService(ctx);
  services.keys = new KeysService(ctx);
  return { keys: services.keys, announce: (payload: string) => listener!(payload), warnings };
}

describe("the key directory", () => {
  test("cached answers from memory only: undefined until resolved, null for a secret known to be no key", async () => {
    const keys = s.server.ctx.services.keys;
    const unknown = `sdk_server_Unknown${Date.now()}`;
    expect(keys.cached(unknown)).toBeUndefined();
    expect(await keys.resolve(unknown)).toBeNull();
    expect(keys.cached(unknown)).toBeNull();
    const known = await keys.resolve(s.serverKey);
    expect(known).toMatchObject({ projectId: s.projectId, type: "server", scopes: ["sdk:read"] });
    expect(keys.cached(s.serverKey)).toEqual(known);
  });

  test("minting a secret cached as unknown makes it work at once", async () => {
    const keys = s.server.ctx.services.keys;
    const chosen = `sdk_admin_ChosenSecret${Date.now()}`;
    expect((await s.api("/api/admin/projects/current", { key: chosen })).status).toBe(401);
    expect(keys.cached(chosen)).toBeNull();
    await keys.mint(s.projectId, { type: "admin", name: "chosen" }, chosen);
    expect(keys.cached(chosen)).toBeUndefined();
    expect((await s.api("/api/admin/projects/current", { key: chosen })).status).toBe(200);
    // The same secret twice is ALREADY_EXISTS, not a second key.
    await expect(keys.mint(s.projectId, { type: "admin" }, chosen)).rejects.toMatchObject({ code: "ALREADY_EXISTS" });
  });

  test("announcements forget what they name; RESYNC and unknown payloads forget everything", async () => {
    const { keys, announce } = detachedKeys();
    const other = await s.newProject("Cache neighbour");
    const server = (await keys.resolve(s.serverKey))!;
    await keys.resolve(s.clientKey);
    await keys.resolve(other.serverKey);
    announce(`revoked:${server.id}`);
    expect(keys.cached(s.serverKey)).toBeUndefined();
    expect(keys.cached(s.clientKey)).not.toBeUndefined();
    announce(`project:${s.projectId}`);
    expect(keys.cached(s.clientKey)).toBeUndefined();
    expect(keys.cached(other.serverKey)).not.toBeUndefined();
    announce(RESYNC);
    expect(keys.cached(other.serverKey)).toBeUndefined();
    await keys.resolve(other.serverKey);
    announce("something-a-newer-server-says");
    expect(keys.cached(other.serverKey)).toBeUndefined();
    // A resolution that was reading while an eviction arrived is answered, not kept.
    const reading = keys.resolve(other.serverKey);
    announce(`revoked:key_unrelated`);
    expect((await reading)?.projectId).toBe(other.projectId);
    expect(keys.cached(other.serverKey)).toBeUndefined();
    await keys.close();
  });

  test("the last-used flush keeps its stamps while the store is busy, drops them on other failures, and never throws", async () => {
    let mode: "busy" | "broken" | "ok" = "busy";
    const write = ((fn: Parameters<Store["write"]>[0]) =>
      mode === "busy" ? Promise.reject(unavailable(1)) : mode === "broken" ? Promise.reject(new Error("disk on fire")) : s.store.write(fn)) as Store["write"];
    const { keys, warnings } = detachedKeys(write);
    const minted = await s.api("/api/admin/keys", { body: { type: "server", name: "flushed" } });
    const stored = async () => (await s.store.one<{ last_used_at: string | null }>("SELECT last_used_at FROM sdk_keys WHERE id = ?", minted.body.id))!.last_used_at;

    keys.markUsed(minted.body.id);
    await keys.flushLastUsed();
    expect(await stored()).toBeNull();
    mode = "ok";
    await keys.flushLastUsed();
    const first = await stored();
    expect(first).not.toBeNull();

    await Bun.sleep(5);
    keys.markUsed(minted.body.id);
    mode = "broken";
    await keys.flushLastUsed();
    expect(warnings).toContain("last-used flush failed");
    mode = "ok";
    await keys.flushLastUsed();
    expect(await stored()).toBe(first);

    // A newer use written by another server is never overwritten by an older one.
    const later = new Date(Date.now() + 3_600_000).toISOString();
    await s.store.run("UPDATE sdk_keys SET last_used_at = ? WHERE id = ?", later, minted.body.id);
    keys.markUsed(minted.body.id);
    await keys.close();
    expect(await stored()).toBe(later);
  });
});

describe("a second server on the same store", () => {
  let store2: Store;
  let keys2: KeysService;
  let projects2: ProjectsService;

  beforeAll(async () => {
    store2 = await openStore(parseStoreTarget(s.storeUrl, s.dataDir), { migrations: storeMigrations(), busyBudgetMs: 5000, poolSize: 2 });
    const services = {} as Services;
    const ctx: ServiceContext = {
      store: store2,
      log: createLogger({ requests: false, quiet: true }),
      options: { maxBodyBytes: 1 << 20, lastUsedFlushMs: 3_600_000 },
      services,
      shutdown: new AbortController().signal,
    };
    projects2 = services.projects = new ProjectsService(ctx);
    keys2 = services.keys = new KeysService(ctx);
  });
  afterAll(async () => {
    await keys2.close();
    await store2.close();
  });

  /** Polls until `ok` or the deadline; answers how long it took (ms), or -1. */
  async function within(ms: number, ok: () => Promise<boolean>): Promise<number> {
    const start = Date.now();
    while (Date.now() - start < ms) {
      if (await ok()) return Date.now() - start;
      await Bun.sleep(25);
    }
    return -1;
  }

  test("a key it revokes is refused here within a second", async () => {
    const minted = await s.api("/api/admin/keys", { body: { type: "server" } });
    const snapshot = () => s.api("/api/sdk/v1/snapshot?env=prod", { key: null, headers: { "x-sdk-key": minted.body.key } });
    expect((await snapshot()).status).toBe(200);
    expect(s.server.ctx.services.keys.cached(minted.body.key)?.id).toBe(minted.body.id);
    await keys2.revoke(s.projectId, minted.body.id);
    const took = await within(3000, async () => (await snapshot()).status === 401);
    expect(took).toBeGreaterThanOrEqual(0);
    expect(took).toBeLessThan(1500);
  });

  test("a domain it sets reaches the keys cached here", async () => {
    const snapshot = (origin: string) => s.api("/api/sdk/v1/snapshot?env=prod", { key: null, headers: { "x-sdk-key": s.serverKey, origin } });
    expect((await snapshot("https://anywhere.example")).status).toBe(200);
    await projects2.update(s.projectId, { domain: "second.example" });
    expect(await within(3000, async () => (await snapshot("https://anywhere.example")).status === 403)).toBeGreaterThanOrEqual(0);
    expect((await snapshot("https://second.example")).status).toBe(200);
    await projects2.update(s.projectId, { domain: "" });
    expect(await within(3000, async () => (await snapshot("https://anywhere.example")).status === 200)).toBeGreaterThanOrEqual(0);
  });

  test("a secret it mints stops being unknown here", async () => {
    const chosen = `sdk_admin_SecondServer${Date.now()}`;
    expect((await s.api("/api/admin/projects/current", { key: chosen })).status).toBe(401);
    await keys2.mint(s.projectId, { type: "admin", name: "from the second server" }, chosen);
    expect(await within(3000, async () => (await s.api("/api/admin/projects/current", { key: chosen })).status === 200)).toBeGreaterThanOrEqual(0);
  });
});
