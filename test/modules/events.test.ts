import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import { type TestServer, startTestServer } from "../helpers";

let ts: TestServer;

beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(() => ts.stop());

const ingest = (body: unknown, key: string | null = ts.serverKey) => ts.api("/api/sdk/v1/events", { body, key });
const HOUR = 3600;

describe("event catalog", () => {
  test("register, 409 on a registered name, get by id, prefix or name, q, update, delete; each write audited", async () => {
    const created = await ts.api("/api/admin/events", {
      body: { name: "checkout.completed", folder: "commerce", description: "An order was paid", properties: [{ name: "amount", type: "number", required: true, description: "EUR" }] },
    });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(["id", "name"]);
    const id = created.body.id as string;
    expect(id).toMatch(/^evt_/);
    const again = await ts.api("/api/admin/events", { body: { name: "checkout.completed" } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("ALREADY_EXISTS");

    const byId = await ts.api(`/api/admin/events/${id}`);
    expect(byId.body).toMatchObject({ id, name: "checkout.completed", folder: "commerce", pending: 0, properties: [{ name: "amount", type: "number", required: true, description: "EUR" }] });
    expect((await ts.api(`/api/admin/events/${id.slice(0, 10)}`)).body.id).toBe(id);
    expect((await ts.api("/api/admin/events/checkout.completed")).body.id).toBe(id);
    expect((await ts.api("/api/admin/events/evt_")).status).toBe(id.startsWith("evt_") ? 200 : 404);
    expect((await ts.api("/api/admin/events/nope")).status).toBe(404);
    expect((await ts.api("/api/admin/events?q=COMMERCE")).body.map((e: any) => e.name)).toEqual(["checkout.completed"]);

    const updated = await ts.api(`/api/admin/events/${id}`, { method: "PATCH", body: { description: "Paid, after 3-D Secure" } });
    expect(updated.status).toBe(200);
    expect(updated.body.description).toBe("Paid, after 3-D Secure");
    expect((await ts.api(`/api/admin/events/${id}`, { method: "PATCH", body: { pending: 0 } })).status).toBe(400);

    const temp = await ts.api("/api/admin/events", { body: { name: "temp.event" } });
    expect((await ts.api(`/api/admin/events/${temp.body.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await ts.api("/api/admin/events/temp.event")).status).toBe(404);
    const actions = (await auditOf(ts.store, ts.projectId)).map((a) => a.action);
    expect(actions).toEqual(expect.arrayContaining(["event.create", "event.update", "event.delete"]));
  });

  test("bad bodies are refused by field and store nothing", async () => {
    for (const body of [{ name: "$error:x" }, { name: "has space" }, { name: "" }, { name: "x", extra: 1 }, { name: "x", properties: [{ name: "a b", type: "string" }] }, { name: "x", properties: [{ name: "a", type: "date" }] }]) {
      const res = await ts.api("/api/admin/events", { body });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("VALIDATION");
    }
    expect((await ts.api("/api/admin/events/x")).status).toBe(404);
  });
});

describe("event ingest", () => {
  test("a batch is acknowledged 202 once stored; unknown names become pending rows, properties join the catalog and the attributes", async () => {
    const now = Date.now();
    const res = await ingest({
      events: [
        { name: "signup", unitId: "u1", ts: now, properties: { plan: "pro", seats: 3 } },
        { name: "signup", unitId: "u2", ts: new Date(now).toISOString(), properties: { plan: "free", referrer: "ads" } },
        { name: "checkout.completed", unitId: "u1", value: 59.9, properties: { amount: 59.9, coupon: true } },
      ],
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: 3 });
    const list = (await ts.api("/api/admin/events")).body as any[];
    const signup = list.find((e) => e.name === "signup");
    expect(signup).toMatchObject({ pending: 1 });
    expect(signup.properties.map((p: any) => [p.name, p.type])).toEqual([
      ["plan", "string"],
      ["seats", "number"],
      ["referrer", "string"],
    ]);
    // A registered event keeps its pending 0 and gains the property it did not list.
    const checkout = list.find((e) => e.name === "checkout.completed");
    expect(checkout.pending).toBe(0);
    expect(checkout.properties.map((p: any) => p.name)).toEqual(["amount", "coupon"]);

    await ts.server.ctx.services.attributes.flush();
    const attributes = (await ts.api("/api/admin/attributes")).body.map((a: any) => [a.name, a.source]);
    expect(attributes).toEqual(expect.arrayContaining([["plan", "auto"], ["seats", "auto"], ["referrer", "auto"], ["coupon", "auto"]]));

    // Registering a pending name approves it: no conflict.
    const approved = await ts.api("/api/admin/events", { body: { name: "signup", folder: "growth" } });
    expect(approved.status).toBe(200);
    expect(approved.body).toEqual({ id: signup.id, name: "signup" });
    expect((await ts.api("/api/admin/events/signup")).body).toMatchObject({ pending: 0, folder: "growth" });
  });

  test("contexts the SDK evaluated locally add their attribute names", async () => {
    expect((await ingest({ events: [{ name: "app.open" }], contexts: [{ targetingKey: "u1", device: "ios", beta: true }] })).status).toBe(202);
    await ts.server.ctx.services.attributes.flush();
    const names = (await ts.api("/api/admin/attributes")).body.map((a: any) => a.name);
    expect(names).toEqual(expect.arrayContaining(["device", "beta"]));
    expect(names).not.toContain("targetingKey");
  });


  test("a catalog change while ingest loads the known names is not hidden by that load: a deleted event comes back as pending", async () => {
    expect((await ts.api("/api/admin/events", { body: { name: "racy.event" } })).status).toBe(201);
    // The catalog read of the next batch is wrapped (the read itself stays real): the event is deleted while it is in flight.
    const store = ts.store as typeof ts.store & { all: typeof ts.store.all };
    const realAll = store.all.bind(store);
    let armed = true;
    store.all = (async (sql: string, ...params: unknown[]) => {
      const rows = await realAll(sql, ...(params as never[]));
      if (armed && sql.includes("FROM event_catalog WHERE project_id = ? ORDER BY name")) {
        armed = false;
        expect((await ts.api("/api/admin/events/racy.event", { method: "DELETE" })).status).toBe(204);
      }
      return rows;
    }) as typeof store.all;
    try {
      // This batch read the catalog before the delete: it still takes the event as known.
      expect((await ingest({ events: [{ name: "racy.event", unitId: "u1" }] })).status).toBe(202);
      expect(armed).toBe(false);
    } finally {
      delete (store as { all?: unknown }).all;
    }
    // The next batch must not: the name is unknown again, so it comes back pending.
    expect((await ingest({ events: [{ name: "racy.event", unitId: "u1" }] })).status).toBe(202);
    const back = await ts.api("/api/admin/events/racy.event");
    expect(back.status).toBe(200);
    expect(back.body.pending).toBe(1);
  });
  test("one bad event refuses the whole batch, naming it; nothing is stored", async () => {
    const before = (await ts.api("/api/admin/events")).body.length;
    const cases: [unknown, string][] = [
      [{ events: [{ name: "ok.one" }, { name: "bad name" }] }, "events[1].name"],
      [{ events: [{ name: "ok.one", ts: "yesterday" }] }, "events[0].ts"],
      [{ events: [{ name: "ok.one", ts: Date.now() + 3 * 86_400_000 }] }, "events[0].ts"],
      [{ events: [{ name: "ok.one", properties: { "a b": 1 } }] }, "events[0].properties"],
      [{ events: [{ name: "ok.one", properties: { nested: { x: 1 } } }] }, "properties"],
      [{ events: [] }, "events"],
      [{ events: Array.from({ length: 1001 }, () => ({ name: "ok.one" })) }, "events"],
      [{ events: [{ name: "ok.one", extra: 1 }] }, "extra"],
    ];
    for (const [body, field] of cases) {
      const res = await ingest(body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("VALIDATION");
      expect(res.body.detail).toContain(field);
    }
    expect((await ts.api("/api/admin/events")).body.length).toBe(before);
    expect((await ts.api("/api/admin/events/ok.one")).status).toBe(404);
  });

  test("only a server key may send events", async () => {
    expect((await ingest({ events: [{ name: "x" }] }, null)).status).toBe(401);
    expect((await ingest({ events: [{ name: "x" }] }, ts.clientKey)).status).toBe(403);
    expect((await ingest({ events: [{ name: "x" }] }, ts.adminKey)).status).toBe(403);
    expect((await ingest({ events: [{ name: "x" }] }, "sdk_server_nope")).status).toBe(401);
  });

  test("1,000 events a call, many calls at once: every acknowledged event is counted exactly once", async () => {
    const from = Math.floor(Date.now() / 1000 / HOUR) * HOUR - 2 * HOUR;
    const batch = Array.from({ length: 1000 }, (_, i) => ({ name: "bulk.tick", unitId: `u${i % 50}`, ts: (from + 60 + (i % 3600)) * 1000 }));
    const answers = await Promise.all(Array.from({ length: 20 }, () => ingest({ events: batch })));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(202));
    const { analytics } = ts.server.ctx.services;
    const hourly = await analytics.series({ projectId: ts.projectId, from, to: from + 2 * HOUR, bucket: HOUR, measure: { kind: "count", event: "bulk.tick", filters: [] } });
    expect(hourly.rows.map((r) => r.v)).toEqual([20_000, 0]);
    expect(hourly.sql).toContain("event_hourly");
    const raw = await analytics.series({ projectId: ts.projectId, from, to: from + 2 * HOUR, bucket: HOUR - 1, measure: { kind: "count", event: "bulk.tick", filters: [] } });
    expect(raw.rows.reduce((s, r) => s + r.v, 0)).toBe(20_000);
    const units = await analytics.series({ projectId: ts.projectId, from, to: from + 2 * HOUR, bucket: 2 * HOUR, measure: { kind: "unique", event: "bulk.tick", filters: [] } });
    expect(units.rows).toEqual([{ t: from, v: 50 }]);
    // Another project's events never show.
    const other = await ts.newProject("Other");
    const elsewhere = await analytics.series({ projectId: other.projectId, from, to: from + 2 * HOUR, bucket: HOUR, measure: { kind: "count", event: "bulk.tick", filters: [] } });
    expect(elsewhere.rows.map((r) => r.v)).toEqual([0, 0]);
  });

  test("retention: raw events past the project's setting are removed, roll-ups stay", async () => {
    const other = await ts.newProject("Retention");
    const old = Date.now() - 40 * 86_400_000;
    const res = await ts.api("/api/sdk/v1/events", { key: other.serverKey, body: { events: [{ name: "old.one", ts: old }, { name: "old.one" }] } });
    expect(res.status).toBe(202);
    const patched = await ts.api(`/api/admin/projects/${other.projectId}`, { method: "PATCH", key: other.adminKey, body: { eventRetentionDays: 35 } });
    expect(patched.status).toBe(200);
    expect(patched.body.eventRetentionDays).toBe(35);
    expect((await ts.api(`/api/admin/projects/${other.projectId}`, { method: "PATCH", key: other.adminKey, body: { eventRetentionDays: 0 } })).status).toBe(400);
    const { analytics } = ts.server.ctx.services;
    const from = Math.floor(old / 1000 / 86400) * 86400;
    const to = from + 41 * 86400;
    const rawCount = async () =>
      (await analytics.series({ projectId: other.projectId, from: from + 1, to, bucket: to - from, measure: { kind: "count", event: "old.one", filters: [] } })).rows[0]!.v;
    expect(await rawCount()).toBe(2);
    await analytics.applyRetention();
    expect(await rawCount()).toBe(1);
    const hourly = await analytics.series({ projectId: other.projectId, from, to, bucket: to - from, measure: { kind: "count", event: "old.one", filters: [] } });
    expect(hourly.rows[0]!.v).toBe(2);
  });
});
