import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startRelay } from "../../src/modules/relays/edge/relay";
import { configIsUniform, gateIsUniform, killswitchIsUniform } from "../../src/modules/usage/stale";
import { createClient } from "../../src/sdk";
import { type TestServer, expectErrorShape, startTestServer, tempDir } from "../helpers";

// Stale flags, first half (issue 30): evaluation counts per flag, env and day from every path that
// evaluates, each flag's usage, and stale flags with their reasons and weekly digest.

const DAY = 86_400_000;
let now = Date.now();
let ts: TestServer;

/** Every counted row of the main project, as {flag/env: count}. */
async function counts(server = ts, projectId = ts.projectId): Promise<Record<string, number>> {
  await server.server.ctx.services.usage.flush();
  const rows = await server.store.all<{ flag: string; env: string; count: number | string }>(
    "SELECT flag, env, SUM(count) AS count FROM flag_evaluations WHERE project_id = ? GROUP BY flag, env ORDER BY flag, env",
    projectId,
  );
  return Object.fromEntries(rows.map((r) => [`${r.flag}/${r.env}`, Number(r.count)]));
}

async function clear(): Promise<void> {
  await ts.server.ctx.services.usage.flush();
  await ts.store.run("DELETE FROM flag_evaluations");
}

beforeAll(async () => {
  // Timers far away: each test flushes and sends digests itself.
  ts = await startTestServer({ clock: () => now, usageFlushMs: 3_600_000, staleDigestCheckMs: 3_600_000, alertsEveryMs: 0, experimentsEveryMs: 0 });
  expect((await ts.api("/api/admin/killswitches", { body: { name: "checkout", value: true, switches: { eu: false } } })).status).toBe(201);
  expect((await ts.api("/api/admin/gates", { body: { name: "beta", rules: [{ conditions: [{ attr: "plan", op: "eq", value: "pro" }], passPercentage: 50 }] } })).status).toBe(201);
  expect((await ts.api("/api/admin/configs", { body: { name: "limits", schema: { type: "integer" }, value: 5 } })).status).toBe(201);
});

afterAll(async () => {
  await ts?.stop();
});

describe("evaluation counts", () => {
  test("OFREP single (a sub-switch counts for its killswitch) and bulk land in the table per flag and env; unknown keys and 304s count nothing", async () => {
    await clear();
    const ofrep = (path: string, body: unknown, headers: Record<string, string> = {}) => ts.api(`/ofrep/v1/evaluate/flags${path}`, { body, key: ts.serverKey, headers });
    expect((await ofrep("/checkout", { context: {} })).status).toBe(200);
    expect((await ofrep("/checkout/eu", { context: {} })).status).toBe(200);
    expect((await ofrep("/beta", { context: { targetingKey: "u1", plan: "pro", env: "staging" } })).status).toBe(200);
    expect((await ofrep("/nope", { context: {} })).status).toBe(404);
    const bulk = await ofrep("", { context: { targetingKey: "u1" } });
    expect(bulk.status).toBe(200);
    expect((await ofrep("", { context: { targetingKey: "u1" } }, { "if-none-match": bulk.headers.get("etag")! })).status).toBe(304);
    expect(await counts()).toEqual({ "beta/prod": 1, "beta/staging": 1, "checkout/prod": 3, "limits/prod": 1 });
    const row = await ts.store.one<{ day: string; last_at: string }>("SELECT day, last_at FROM flag_evaluations WHERE flag = 'checkout' AND env = 'prod'");
    expect(row!.day).toBe(new Date(now).toISOString().slice(0, 10));
  });

  test("GrowthBook remote evaluation counts every feature it evaluated", async () => {
    await clear();
    const res = await ts.api(`/api/eval/${ts.serverKey}?env=dev`, { body: { attributes: { user_id: "u1" } }, key: null });
    expect(res.status).toBe(200);
    expect(await counts()).toEqual({ "beta/dev": 1, "checkout/dev": 1, "limits/dev": 1 });
  });

  test("the SDK counts its local evaluations and sends them with its flush; the batch route counts known names only", async () => {
    await clear();
    const client = createClient({ baseUrl: ts.url, sdkKey: ts.serverKey, env: "prod", stream: false, pollIntervalMs: 3_600_000, flushIntervalMs: 3_600_000, onWarning: () => {} });
    try {
      await client.ready();
      for (let i = 0; i < 5; i++) client.isKilled("checkout", "eu");
      client.isEnabled("beta", { user_id: "u1" });
      client.getConfig("limits", 1);
      client.getConfig("limits", 1);
      client.isEnabled("no-such-gate");
      await client.flush();
    } finally {
      await client.close();
    }
    expect(await counts()).toEqual({ "beta/prod": 1, "checkout/prod": 5, "limits/prod": 2 });

    const batch = await ts.api("/api/sdk/v1/evaluations", { body: { env: "staging", counts: { checkout: 7, ghost: 1_000, ["x".repeat(300)]: 1 } }, key: ts.serverKey });
    expect(batch.status).toBe(202);
    expect(batch.body).toEqual({ accepted: 1, ignored: 2 });
    const rows = await counts();
    expect(rows["checkout/staging"]).toBe(7);
    expect(Object.keys(rows).some((k) => k.startsWith("ghost") || k.startsWith("xxx"))).toBe(false);
  });

  test("hostile batches: too many names, huge or negative counts, unknown fields, a wrong key or another env of a browser key are refused, never a 500, and count nothing", async () => {
    await clear();
    const tooMany = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`f${i}`, 1]));
    const bad: [unknown, number][] = [
      [{ counts: tooMany }, 400],
      [{ counts: { checkout: 1e12 } }, 400],
      [{ counts: { checkout: -3 } }, 400],
      [{ counts: { checkout: 1.5 } }, 400],
      [{ counts: { checkout: "x" } }, 400],
      [{ counts: [1, 2] }, 400],
      [{ counts: {}, extra: 1 }, 400],
      [{ env: "moon", counts: { checkout: 1 } }, 400],
      [{}, 400],
    ];
    for (const [body, status] of bad) {
      const res = await ts.api("/api/sdk/v1/evaluations", { body, key: ts.serverKey });
      expect([JSON.stringify(body).slice(0, 60), res.status]).toEqual([JSON.stringify(body).slice(0, 60), status]);
      expectErrorShape(res.body);
    }
    expect((await ts.api("/api/sdk/v1/evaluations", { rawBody: "{not json", key: ts.serverKey })).status).toBe(400);
    expect((await ts.api("/api/sdk/v1/evaluations", { body: { counts: { checkout: 1 } }, key: ts.adminKey })).status).toBe(403);
    expect((await ts.api("/api/sdk/v1/evaluations", { body: { counts: { checkout: 1 } }, key: null })).status).toBe(401);
    const browser = await ts.api("/api/admin/keys", { body: { type: "browser", env: "prod" } });
    expect(browser.status).toBe(201);
    const other = await ts.api("/api/sdk/v1/evaluations", { body: { env: "dev", counts: { checkout: 1 } }, key: browser.body.key });
    expect(other.status).toBe(403);
    expect(await counts()).toEqual({});
    const own = await ts.api("/api/sdk/v1/evaluations", { body: { counts: { checkout: 2 } }, key: browser.body.key });
    expect([own.status, own.body]).toEqual([202, { accepted: 1, ignored: 0 }]);
    expect(await counts()).toEqual({ "checkout/prod": 2 });
  });

  test("an edge relay counts its own OFREP answers and forwards SDK batches: both reach the upstream's counts", async () => {
    await clear();
    const relay = await startRelay({ port: 0, host: "127.0.0.1", dataDir: tempDir(), upstream: ts.url, key: ts.serverKey, quiet: true, logRequests: false, evaluationsFlushMs: 3_600_000 });
    try {
      // The relay serves once it has the env's snapshot.
      const deadline = Date.now() + 15_000;
      let single: Response | undefined;
      while (Date.now() < deadline) {
        single = await fetch(`${relay.url}/ofrep/v1/evaluate/flags/limits`, { method: "POST", headers: { "x-sdk-key": ts.serverKey, "content-type": "application/json" }, body: JSON.stringify({ context: {} }) });
        if (single.status === 200) break;
        await Bun.sleep(100);
      }
      expect(single?.status).toBe(200);
      const batch = await fetch(`${relay.url}/api/sdk/v1/evaluations`, { method: "POST", headers: { "x-sdk-key": ts.serverKey, "content-type": "application/json" }, body: JSON.stringify({ env: "prod", counts: { checkout: 4, ghost: 2 } }) });
      expect(batch.status).toBe(202);
      relay.relay.flushEvaluations();
      const until = Date.now() + 15_000;
      let got: Record<string, number> = {};
      while (Date.now() < until) {
        got = await counts();
        if (got["limits/prod"] && got["checkout/prod"]) break;
        await Bun.sleep(100);
      }
      expect(got).toEqual({ "checkout/prod": 4, "limits/prod": 1 });
    } finally {
      await relay.stop();
    }
  });

  test("servers flushing the same rows at once add up: no count is lost", async () => {
    await clear();
    const others = await Promise.all([1, 2].map(() => startTestServer({ dataDir: ts.dataDir, store: ts.storeUrl, usageFlushMs: 3_600_000, staleDigestCheckMs: 3_600_000, alertsEveryMs: 0, experimentsEveryMs: 0 })));
    try {
      const recorders = [ts, ...others].map((s) => s.server.ctx.services.usage);
      for (let round = 0; round < 20; round++) {
        recorders.forEach((u, i) => u.recorder.counter.add(ts.projectId, "prod", ["checkout", "beta"], round + i + 1));
        await Promise.all(recorders.map((u) => u.flush()));
      }
      // Σ over 20 rounds of (r+1) + (r+2) + (r+3) = 3 · 210 + 3 · 20 = 690.
      expect(await counts()).toEqual({ "beta/prod": 690, "checkout/prod": 690 });
    } finally {
      for (const o of others) await o.stop();
    }
  });
});

describe("usage and stale flags", () => {
  test("a flag's usage: last evaluated per env and 30 days, oldest first; an unknown name is 404", async () => {
    await clear();
    await ts.store.run("INSERT INTO flag_evaluations (project_id, flag, env, day, count, last_at) VALUES (?, 'checkout', 'prod', ?, 40, ?)", ts.projectId, new Date(now - 3 * DAY).toISOString().slice(0, 10), new Date(now - 3 * DAY).toISOString());
    await ts.store.run("INSERT INTO flag_evaluations (project_id, flag, env, day, count, last_at) VALUES (?, 'checkout', 'dev', ?, 2, ?)", ts.projectId, new Date(now - 40 * DAY).toISOString().slice(0, 10), new Date(now - 40 * DAY).toISOString());
    expect((await ts.api("/ofrep/v1/evaluate/flags/checkout", { body: { context: {} }, key: ts.serverKey })).status).toBe(200);
    const res = await ts.api("/api/admin/flags/checkout/usage?env=prod");
    expect(res.status).toBe(200);
    expect(res.body.days).toHaveLength(30);
    expect(res.body.days[29]).toEqual({ day: new Date(now).toISOString().slice(0, 10), count: 1 });
    expect(res.body.days[26]).toEqual({ day: new Date(now - 3 * DAY).toISOString().slice(0, 10), count: 40 });
    expect(res.body.total).toBe(41);
    expect(res.body.lastEvaluatedAt.prod).toBe(new Date(now).toISOString());
    expect(res.body.lastEvaluatedAt.dev).toBe(new Date(now - 40 * DAY).toISOString());
    expect(res.body.lastEvaluatedAt.staging).toBeNull();
    const all = await ts.api("/api/admin/flags/checkout/usage");
    expect([all.body.env, all.body.total]).toEqual([null, 41]);
    const missing = await ts.api("/api/admin/flags/nothing-here/usage");
    expect(missing.status).toBe(404);
    expectErrorShape(missing.body);
    expect((await ts.api("/api/admin/flags/checkout/usage?env=moon")).status).toBe(400);
    expect((await ts.api("/api/admin/flags/checkout/usage", { key: ts.serverKey })).status).toBe(403);
  });

  test("one value for everyone: which published states serve it", () => {
    expect(killswitchIsUniform({ value: true, switches: {} })).toBe(true);
    expect(killswitchIsUniform({ value: true, switches: { eu: true } })).toBe(true);
    expect(killswitchIsUniform({ value: true, switches: { eu: false } })).toBe(false);
    expect(gateIsUniform([])).toBe(true);
    expect(gateIsUniform([{ conditions: [], passPercentage: 100 }, { conditions: [{ attr: "plan", op: "eq", value: "pro" }], passPercentage: 0 }])).toBe(true);
    expect(gateIsUniform([{ conditions: [], passPercentage: 0 }])).toBe(true);
    expect(gateIsUniform([{ conditions: [], passPercentage: 50 }])).toBe(false);
    expect(gateIsUniform([{ conditions: [{ attr: "plan", op: "eq", value: "pro" }], passPercentage: 100 }])).toBe(false);
    expect(configIsUniform([])).toBe(true);
    expect(configIsUniform(undefined)).toBe(true);
    expect(configIsUniform([{ conditions: [], value: 1 }])).toBe(false);
  });

  test("staleAfterDays is a project setting: default 30, PATCH validated (1 to 365)", async () => {
    const got = await ts.api(`/api/admin/projects/${ts.projectId}`);
    expect(got.body.staleAfterDays).toBe(30);
    for (const bad of [0, 366, 2.5, "soon", null]) {
      const res = await ts.api(`/api/admin/projects/${ts.projectId}`, { method: "PATCH", body: { staleAfterDays: bad } });
      expect(res.status).toBe(400);
      expectErrorShape(res.body);
    }
    expect((await ts.api(`/api/admin/projects/${ts.projectId}`)).body.staleAfterDays).toBe(30);
  });

  test("a flag with one value for N days and no evaluations is listed stale with that reason; an evaluation takes not_evaluated off, a longer setting lists nothing", async () => {
    await clear();
    const start = now;
    try {
      const fresh = await ts.api("/api/admin/flags/stale");
      expect(fresh.status).toBe(200);
      expect(fresh.body).toEqual({ staleAfterDays: 30, flags: [] });
      // 31 days on: nothing was published or evaluated since the flags were made.
      now = start + 31 * DAY;
      const later = await ts.api("/api/admin/flags/stale?env=prod");
      expect(later.status).toBe(200);
      const byName = Object.fromEntries(later.body.flags.map((f: { name: string }) => [f.name, f]));
      // checkout (true, sub-switch eu false) serves two values; beta has a conditional 50 % rule; limits has no rules.
      expect(byName.limits).toMatchObject({ name: "limits", kind: "config", env: "prod", reasons: ["one_value", "not_evaluated"], lastEvaluatedAt: null });
      expect(byName.checkout).toMatchObject({ kind: "killswitch", reasons: ["not_evaluated"] });
      expect(byName.beta).toMatchObject({ kind: "gate", reasons: ["not_evaluated"] });
      expect(typeof byName.limits.lastChangedAt).toBe("string");

      // An evaluation today takes not_evaluated away; one value stays a reason.
      expect((await ts.api("/ofrep/v1/evaluate/flags/limits", { body: { context: {} }, key: ts.serverKey })).status).toBe(200);
      const after = await ts.api("/api/admin/flags/stale?env=prod");
      expect(after.body.flags.find((f: { name: string }) => f.name === "limits").reasons).toEqual(["one_value"]);
      // A shorter setting applies at once; a longer one lists nothing.
      expect((await ts.api(`/api/admin/projects/${ts.projectId}`, { method: "PATCH", body: { staleAfterDays: 60 } })).status).toBe(200);
      expect((await ts.api("/api/admin/flags/stale")).body).toEqual({ staleAfterDays: 60, flags: [] });
      expect((await ts.api(`/api/admin/projects/${ts.projectId}`, { method: "PATCH", body: { staleAfterDays: 30 } })).status).toBe(200);
      expect((await ts.api("/api/admin/flags/stale?env=moon")).status).toBe(400);
    } finally {
      now = start;
    }
  });

  test("the weekly digest: one flags.stale_digest per project per week, claimed once across servers", async () => {
    const start = now;
    const other = await startTestServer({ dataDir: ts.dataDir, store: ts.storeUrl, clock: () => now, usageFlushMs: 3_600_000, staleDigestCheckMs: 3_600_000, alertsEveryMs: 0, experimentsEveryMs: 0 });
    const digests = async () => Number((await ts.store.one<{ n: number }>("SELECT COUNT(*) AS n FROM outbox_events WHERE project_id = ? AND type = 'flags.stale_digest'", ts.projectId))!.n);
    try {
      await ts.server.ctx.services.usage.sendDigests();
      expect(await digests()).toBe(0);
      now = start + 31 * DAY;
      const sent = await Promise.all([ts, other, ts, other].map((s) => s.server.ctx.services.usage.sendDigests()));
      expect(sent.flat().filter((id) => id === ts.projectId)).toHaveLength(1);
      expect(await digests()).toBe(1);
      const row = await ts.store.one<{ payload: string }>("SELECT payload FROM outbox_events WHERE project_id = ? AND type = 'flags.stale_digest'", ts.projectId);
      const payload = JSON.parse(row!.payload);
      expect(payload.staleAfterDays).toBe(30);
      expect(payload.flags.some((f: { name: string; reasons: string[] }) => f.name === "limits" && f.reasons.includes("one_value"))).toBe(true);
      now = start + 35 * DAY;
      await ts.server.ctx.services.usage.sendDigests();
      expect(await digests()).toBe(1);
      now = start + 39 * DAY;
      await other.server.ctx.services.usage.sendDigests();
      expect(await digests()).toBe(2);
    } finally {
      now = start;
      await other.stop();
    }
  });
});
