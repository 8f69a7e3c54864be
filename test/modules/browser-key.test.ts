/**
 * The browser key (issue 28, item 1; DECISIONS "The browser key and other SDK
 * ecosystems"): bound to one env, it gets evaluated answers and may send
 * events and errors, and is refused everything that holds rules and salts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectErrorShape, startTestServer, type TestServer } from "../helpers";

let s: TestServer;
let browserKey: string;
let browserKeyId: string;
const KS = "checkout";

beforeAll(async () => {
  s = await startTestServer();
  expect((await s.api("/api/admin/killswitches", { body: { name: KS } })).status).toBe(201);
  for (const env of ["prod", "staging"]) {
    expect((await s.api(`/api/admin/killswitches/${KS}/value`, { method: "PUT", body: { env, value: env === "prod" } })).status).toBe(200);
  }
  const minted = await s.api("/api/admin/keys", { body: { type: "browser", name: "web app" } });
  expect(minted.status).toBe(201);
  browserKey = minted.body.key;
  browserKeyId = minted.body.id;
});
afterAll(() => s.stop());

const ofrep = (path: string, key: string | null, context: Record<string, unknown> = {}) =>
  s.api(`/ofrep/v1/evaluate/flags${path}`, { key: null, headers: key ? { "x-sdk-key": key } : {}, body: { context } });

describe("minting", () => {
  test("a browser key has the DECISIONS format, the three scopes and the project's defaultEnv", async () => {
    const r = await s.api("/api/admin/keys", { body: { type: "browser" } });
    expect(r.status).toBe(201);
    expect(r.body.key).toMatch(/^sdk_browser_[A-Za-z0-9]+$/);
    expect(r.body).toMatchObject({ type: "browser", env: "prod", scopes: ["flags:evaluate", "events:ingest", "errors:ingest"] });
    const listed = ((await s.api("/api/admin/keys")).body as any[]).find((k) => k.id === r.body.id);
    expect(listed).toMatchObject({ type: "browser", env: "prod", maskedKey: `sdk_browser_…${r.body.key.slice(-4)}` });
    const row = await s.store.one<{ env: string }>("SELECT env FROM sdk_keys WHERE id = ?", r.body.id);
    expect(row?.env).toBe("prod");
    const audit = await s.store.one<{ detail: string }>("SELECT detail FROM audit_log WHERE subject_id = ? AND action = 'key.mint'", r.body.id);
    expect(JSON.parse(audit!.detail)).toMatchObject({ type: "browser", env: "prod" });
  });

  test("a browser key may be bound to another env; other types take no env", async () => {
    const staging = await s.api("/api/admin/keys", { body: { type: "browser", env: "staging" } });
    expect(staging.status).toBe(201);
    expect(staging.body.env).toBe("staging");
    const server = await s.api("/api/admin/keys", { body: { type: "server" } });
    expect(server.body.env).toBeNull();
    const before = ((await s.api("/api/admin/keys")).body as any[]).length;
    const refused = await s.api("/api/admin/keys", { body: { type: "server", env: "prod" } });
    expect(refused.status).toBe(400);
    expect(expectErrorShape(refused.body).code).toBe("VALIDATION");
    expect(refused.body.detail).toContain("env");
    const badEnv = await s.api("/api/admin/keys", { body: { type: "browser", env: "qa" } });
    expect(badEnv.status).toBe(400);
    const foreignScope = await s.api("/api/admin/keys", { body: { type: "browser", scopes: ["sdk:read"] } });
    expect(foreignScope.status).toBe(400);
    expect(((await s.api("/api/admin/keys")).body as any[]).length).toBe(before);
  });
});

describe("what a browser key may do", () => {
  test("OFREP single and bulk answer its env's evaluated flags", async () => {
    const one = await ofrep(`/${KS}`, browserKey);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ key: KS, value: true, reason: "STATIC" });
    const bulk = await ofrep("", browserKey, { targetingKey: "u1" });
    expect(bulk.status).toBe(200);
    expect((bulk.body.flags as any[]).find((f) => f.key === KS)?.value).toBe(true);
    expect(bulk.headers.get("etag")).toBeTruthy();
    // The same context and tag: 304.
    const again = await s.api("/ofrep/v1/evaluate/flags", { key: null, headers: { "x-sdk-key": browserKey, "if-none-match": bulk.headers.get("etag")! }, body: { context: { targetingKey: "u1" } } });
    expect(again.status).toBe(304);
  });

  test("a staging browser key reads staging", async () => {
    const staging = (await s.api("/api/admin/keys", { body: { type: "browser", env: "staging" } })).body.key;
    expect((await ofrep(`/${KS}`, staging)).body.value).toBe(false);
  });

  test("events and errors are accepted", async () => {
    const events = await s.api("/api/sdk/v1/events", { key: null, headers: { "x-sdk-key": browserKey }, body: { events: [{ name: "page_view", unitId: "u1" }] } });
    expect(events.status).toBe(202);
    const errors = await s.api("/api/sdk/v1/errors", { key: null, headers: { "x-sdk-key": browserKey }, body: { errors: [{ message: "boom in the browser", type: "TypeError" }] } });
    expect(errors.status).toBe(202);
    const sentry = await s.api(`/api/1/store/?sentry_key=${browserKey}`, { key: null, body: { event_id: "a".repeat(32), exception: { values: [{ type: "RangeError", value: "sentry from a browser" }] } } });
    expect(sentry.status).toBe(200);
  });
});

describe("what a browser key is refused", () => {
  test("the snapshot and the stream are FORBIDDEN (they hold every rule and salt)", async () => {
    for (const path of ["/api/sdk/v1/snapshot", "/api/sdk/v1/snapshot?env=prod", "/api/sdk/v1/stream"]) {
      const r = await s.api(path, { key: null, headers: { "x-sdk-key": browserKey } });
      expect(r.status).toBe(403);
      expect(expectErrorShape(r.body).code).toBe("FORBIDDEN");
      expect(r.body.detail).toContain("browser key");
    }
  });

  test("another env is FORBIDDEN, even evaluated", async () => {
    for (const path of [`/${KS}`, ""]) {
      const r = await ofrep(path, browserKey, { env: "staging" });
      expect(r.status).toBe(403);
      expect(expectErrorShape(r.body).code).toBe("FORBIDDEN");
    }
    // Its own env named explicitly is fine.
    expect((await ofrep(`/${KS}`, browserKey, { env: "prod" })).status).toBe(200);
  });

  test("nothing under /api/admin", async () => {
    for (const headers of [{ authorization: `Bearer ${browserKey}` }, { "x-sdk-key": browserKey }] as Record<string, string>[]) {
      const r = await s.api("/api/admin/killswitches", { key: null, headers });
      expect([401, 403]).toContain(r.status);
    }
    const bearer = await s.api("/api/admin/keys", { key: null, headers: { authorization: `Bearer ${browserKey}` } });
    expect(bearer.status).toBe(403);
    expect(bearer.body.error).toContain("browser key");
  });

  test("the public intake takes a client key, not a browser key", async () => {
    const r = await s.api("/ops/bug", { key: null, headers: { "x-sdk-key": browserKey }, body: { title: "t", description: "d" } });
    expect(r.status).toBe(403);
  });

  test("a browser key without a scope is refused that path only", async () => {
    const evalOnly = (await s.api("/api/admin/keys", { body: { type: "browser", scopes: ["flags:evaluate"] } })).body.key;
    expect((await ofrep(`/${KS}`, evalOnly)).status).toBe(200);
    const events = await s.api("/api/sdk/v1/events", { key: null, headers: { "x-sdk-key": evalOnly }, body: { events: [{ name: "page_view" }] } });
    expect(events.status).toBe(403);
    expect(events.body.error).toContain("events:ingest");
    const errors = await s.api("/api/sdk/v1/errors", { key: null, headers: { "x-sdk-key": evalOnly }, body: { errors: [{ message: "x" }] } });
    expect(errors.status).toBe(403);
  });

  test("a revoked browser key is UNAUTHORIZED at once", async () => {
    const k = (await s.api("/api/admin/keys", { body: { type: "browser" } })).body;
    expect((await ofrep(`/${KS}`, k.key)).status).toBe(200);
    expect((await s.api(`/api/admin/keys/${k.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await ofrep(`/${KS}`, k.key)).status).toBe(401);
  });

  test("the key in use is still live", async () => {
    expect(((await s.api("/api/admin/keys")).body as any[]).some((k) => k.id === browserKeyId)).toBe(true);
  });
});
