import { afterAll, beforeAll, expect, test } from "bun:test";
import { createClient } from "../../src/sdk/index";
import { type TestServer, startTestServer } from "../helpers";

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
  const rules = [{ conditions: [{ attr: "plan", op: "eq", value: "pro" }], passPercentage: 100 }];
  expect((await ts.api("/api/admin/gates", { body: { name: "pro-only", rules } })).status).toBe(201);
});
afterAll(() => ts.stop());

const HOUR = 3600;

test("svc.track queues events and sends them in batches; flush and close deliver what is queued", async () => {
  const svc = createClient({ baseUrl: ts.url, sdkKey: ts.serverKey, env: "prod", stream: false, flushIntervalMs: 60_000 });
  await svc.ready();
  const from = Math.floor(Date.now() / 1000 / HOUR) * HOUR;
  for (let i = 0; i < 2500; i++) svc.track("sdk.click", { unitId: `u${i % 10}`, value: 2, properties: { plan: i % 2 ? "pro" : "free" } });
  await svc.flush();
  svc.track("sdk.click", { unitId: "late", ts: new Date() });
  await svc.close();
  const { analytics } = ts.server.ctx.services;
  const count = await analytics.series({ projectId: ts.projectId, from, to: from + HOUR, bucket: HOUR, measure: { kind: "count", event: "sdk.click", filters: [] } });
  expect(count.rows[0]!.v).toBe(2501);
  const sum = await analytics.series({ projectId: ts.projectId, from, to: from + HOUR, bucket: HOUR, measure: { kind: "sum", event: "sdk.click", filters: [] } });
  expect(sum.rows[0]!.v).toBe(5000);
  expect((await ts.api("/api/admin/events/sdk.click")).body).toMatchObject({ pending: 1, properties: [{ name: "plan", type: "string" }] });
});

test("contexts given to isEnabled add their attribute names (never their values) to the server's attributes", async () => {
  const sent: unknown[] = [];
  const svc = createClient({
    baseUrl: ts.url,
    sdkKey: ts.serverKey,
    env: "prod",
    stream: false,
    flushIntervalMs: 60_000,
    fetch: async (url, init) => {
      if (init?.method === "POST") sent.push(JSON.parse(String(init.body)));
      return fetch(url, init);
    },
  });
  await svc.ready();
  expect(svc.isEnabled("pro-only", { user_id: "u1", plan: "pro", email: "ada@example.com", seats: 12 })).toBe(true);
  await svc.flush();
  // The evaluation counts (issue 30) follow in their own batch: one per env.
  expect(sent).toEqual([{ events: [], contexts: [{ user_id: "", plan: "", email: "", seats: 0 }] }, { env: "prod", counts: { "pro-only": 1 } }]);
  await ts.server.ctx.services.attributes.flush();
  const names = (await ts.api("/api/admin/attributes")).body.map((a: any) => [a.name, a.type]);
  expect(names).toEqual(expect.arrayContaining([["email", "string"], ["seats", "number"], ["plan", "string"]]));
  await svc.close();
});

test("a send that fails keeps the batch for the next flush", async () => {
  let fail = true;
  const svc = createClient({
    baseUrl: ts.url,
    sdkKey: ts.serverKey,
    env: "prod",
    stream: false,
    flushIntervalMs: 60_000,
    onError: () => {},
    fetch: async (url, init) => (init?.method === "POST" && fail ? new Response(JSON.stringify({ error: "Unavailable" }), { status: 503 }) : fetch(url, init)),
  });
  await svc.ready();
  const from = Math.floor(Date.now() / 1000 / HOUR) * HOUR;
  svc.track("sdk.retry", { unitId: "u1" });
  await svc.flush();
  fail = false;
  await svc.flush();
  await svc.close();
  const count = await ts.server.ctx.services.analytics.series({ projectId: ts.projectId, from, to: from + HOUR, bucket: HOUR, measure: { kind: "count", event: "sdk.retry", filters: [] } });
  expect(count.rows[0]!.v).toBe(1);
});

test("svc.captureError sends errors that become one tracked error per fingerprint", async () => {
  const svc = createClient({ baseUrl: ts.url, sdkKey: ts.serverKey, env: "prod", stream: false, flushIntervalMs: 60_000 });
  await svc.ready();
  const fail = (id: number) => {
    try {
      throw new TypeError(`cart ${id} has no items`);
    } catch (err) {
      svc.captureError(err, { unitId: `u${id}` });
    }
  };
  for (let i = 0; i < 3; i++) fail(i);
  svc.captureError("a plain string");
  await svc.close();
  const errors = (await ts.api("/api/admin/errors")).body as any[];
  const typeError = errors.find((e) => e.type === "TypeError");
  expect(typeError).toMatchObject({ count: 3, affectedUnits: 3, status: "unresolved" });
  expect(errors.find((e) => e.message.includes("a plain string"))).toMatchObject({ count: 1 });
});
