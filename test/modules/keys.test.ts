import { afterAll, beforeAll, expect, test } from "bun:test";
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
  const rows = s.server.db.query("SELECT * FROM sdk_keys WHERE id = ?").all(r.body.id);
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
  const immediately = s.server.db.query("SELECT last_used_at FROM sdk_keys WHERE id = ?").get(r.body.id) as any;
  expect(immediately.last_used_at).toBeNull();
  // ... but by the flush timer shortly after (polled: the machine may be busy).
  let stored: any;
  for (let i = 0; i < 100; i++) {
    await Bun.sleep(50);
    stored = s.server.db.query("SELECT last_used_at FROM sdk_keys WHERE id = ?").get(r.body.id);
    if (stored.last_used_at) break;
  }
  expect(new Date(stored.last_used_at).getTime()).toBeGreaterThanOrEqual(before - 5);
  const listed = ((await s.api("/api/admin/keys")).body as any[]).find((k) => k.id === r.body.id);
  expect(listed.lastUsedAt).not.toBeNull();
});

test("a foreign admin key cannot list or revoke our keys", async () => {
  const other = s.newProject("Foreign");
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
