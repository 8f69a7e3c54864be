import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createClient } from "../../src/sdk";
import { inRollout } from "../../src/sdk/rollouts";
import { type TestServer, startTestServer } from "../helpers";

// Guarded rollouts: the API, the snapshot and SDK split, and the lifecycle by hand. The monitor's
// decisions over simulated traffic are in rollout-simulation.test.ts.

let ts: TestServer;
let now = Date.parse("2026-11-24T09:00:00.000Z");
const api = (path: string, init: { method?: string; body?: unknown; key?: string } = {}) => ts.api(`/api/admin/rollouts${path}`, init);
const everyone = [{ name: "everyone", conditions: [], passPercentage: 100 }];
let gateSeq = 0;

async function newGate(): Promise<string> {
  const name = `gate-${++gateSeq}`;
  const res = await ts.api("/api/admin/gates", { body: { name } });
  expect(res.status).toBe(201);
  return name;
}

const snapshot = async () => (await ts.api("/api/sdk/v1/snapshot?env=prod", { key: ts.serverKey })).body;
const audit = async (action: string) => (await ts.api(`/api/admin/audit?action=${action}`)).body.entries as { subjectId: string; actorEmail: string; detail: any }[];

beforeAll(async () => {
  ts = await startTestServer({ rolloutsEveryMs: 0, alertsEveryMs: 0, experimentsEveryMs: 0, clock: () => now });
  await ts.api("/api/admin/events", { body: { name: "purchase" } });
  const metric = await ts.api("/api/admin/metrics", { body: { name: "purchases", kind: "count", event: "purchase" } });
  expect(metric.status).toBe(201);
});
afterAll(() => ts.stop());

describe("POST /api/admin/rollouts", () => {
  test("a gate's rollout starts at its first stage, with the error rate watched, and enters the snapshot", async () => {
    const gate = await newGate();
    const before = (await snapshot()).revision;
    const res = await api("", { body: { gate, env: "prod", rules: everyone, metrics: [{ metric: "purchases", direction: "higher", tolerance: 0.05 }], description: "New checkout" } });
    expect(res.status).toBe(201);
    const r = res.body;
    expect(r).toMatchObject({ kind: "gate", subject: gate, env: "prod", status: "running", stage: 0, percent: 1, onRegression: "rollback", notify: true, falseAlarmRate: 0.05 });
    expect(r.id).toMatch(/^rol_/);
    expect(r.stages.map((s: { percent: number }) => s.percent)).toEqual([1, 5, 25, 50, 100]);
    expect(r.watch).toEqual([
      { metric: "errors", metricId: null, direction: "lower", tolerance: 0 },
      { metric: "purchases", metricId: expect.stringMatching(/^met_/), direction: "higher", tolerance: 0.05 },
    ]);
    expect(r.previous).toEqual({ rules: [], version: 1 });
    const snap = await snapshot();
    expect(snap.revision).toBeGreaterThan(before);
    expect(snap.rollouts[r.id]).toEqual({ kind: "gate", name: gate, salt: expect.any(String), stage: 0, percent: 1, rules: everyone });
    expect((await audit("rollout.create")).some((a) => a.subjectId === r.id)).toBe(true);

    // One unfinished rollout per gate and env.
    const again = await api("", { body: { gate, env: "prod", rules: everyone } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("ALREADY_EXISTS");
    // Another env is free.
    expect((await api("", { body: { gate, env: "staging", rules: everyone } })).status).toBe(201);
  });

  test("a config's rollout takes the env's draft, checked against the schema", async () => {
    const created = await ts.api("/api/admin/configs", { body: { name: "limits", schema: { type: "object", properties: { perMinute: { type: "integer" } }, required: ["perMinute"] }, value: { perMinute: 60 } } });
    expect(created.status).toBe(201);
    const noDraft = await api("", { body: { config: "limits", env: "prod" } });
    expect(noDraft.status).toBe(400);
    expect(noDraft.body.detail).toContain("draft");
    const bad = await api("", { body: { config: "limits", env: "prod", value: { perMinute: "many" } } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("VALIDATION");
    const draft = await ts.api("/api/admin/configs/limits/drafts", { method: "PUT", body: { env: "prod", value: { perMinute: 120 } }, headers: { "x-project-id": ts.projectId } });
    expect(draft.status).toBe(200);
    const res = await api("", { body: { config: "limits", env: "prod", stages: [{ percent: 50, minutes: 10 }, { percent: 100, minutes: 0 }] } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ kind: "config", change: { value: { perMinute: 120 } }, previous: { value: { perMinute: 60 }, version: 1 }, percent: 50 });
    const published = (await snapshot()).rollouts[res.body.id];
    expect(published).toMatchObject({ kind: "config", name: "limits", percent: 50, value: { perMinute: 120 } });
    // getConfig with a context, and OFREP, give each unit its group's value.
    const sdk = createClient({ baseUrl: ts.url, sdkKey: ts.serverKey, env: "prod", stream: false, flushIntervalMs: 60_000 });
    try {
      await sdk.ready();
      for (let i = 0; i < 50; i++) {
        const user = `cfg-user-${i}`;
        const expected = inRollout({ salt: published.salt, percent: 50 }, user) ? 120 : 60;
        expect(sdk.getConfig("limits", { perMinute: 0 }, { user_id: user })).toEqual({ perMinute: expected });
        if (i < 5) {
          const flag = await ts.api("/ofrep/v1/evaluate/flags/limits", { body: { context: { targetingKey: user, env: "prod" } }, key: ts.serverKey });
          expect(flag.body.value).toEqual({ perMinute: expected });
        }
      }
      expect(sdk.getConfig("limits", { perMinute: 0 })).toEqual({ perMinute: 60 }); // no context: the published value
    } finally {
      await sdk.close();
    }
  });

  test("a config's rollout of new rules (issue 29): units in the stage are served by them, completing publishes value and rules as one version", async () => {
    const created = await ts.api("/api/admin/configs", { body: { name: "tiers", schema: { type: "integer" }, value: 1 } });
    expect(created.status).toBe(201);
    const rules = [
      { name: "pro", conditions: [{ attr: "plan", op: "eq", value: "pro" }], value: 10 },
      { name: "ab", conditions: [], split: [{ value: 2, weight: 50 }, { value: 3, weight: 50 }] },
    ];
    const bad = await api("", { body: { config: "tiers", env: "prod", rules: [{ conditions: [], value: "ten" }] } });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toContain("rules[0].value");
    const res = await api("", { body: { config: "tiers", env: "prod", rules, stages: [{ percent: 50, minutes: 10 }, { percent: 100, minutes: 0 }] } });
    expect(res.status).toBe(201);
    const published = (await snapshot()).rollouts[res.body.id];
    expect(published).toMatchObject({ kind: "config", name: "tiers", percent: 50, value: 1, rules: [{ name: "pro", value: 10 }, { name: "ab" }] });
    let rolledUnits = 0;
    for (let i = 0; i < 40; i++) {
      const user = `tier-user-${i}`;
      const flag = await ts.api("/ofrep/v1/evaluate/flags/tiers", { body: { context: { targetingKey: user, plan: i % 4 === 0 ? "pro" : "free" } }, key: ts.serverKey });
      if (!inRollout({ salt: published.salt, percent: 50 }, user)) {
        expect(flag.body.value).toBe(1);
        continue;
      }
      rolledUnits++;
      if (i % 4 === 0) expect(flag.body.value).toBe(10);
      else expect([2, 3]).toContain(flag.body.value);
    }
    expect(rolledUnits).toBeGreaterThan(5);
    expect((await api(`/${res.body.id}/advance`, { method: "POST" })).status).toBe(200);
    expect((await api(`/${res.body.id}/advance`, { method: "POST" })).body).toMatchObject({ status: "completed" });
    const config = (await ts.api("/api/admin/configs/tiers")).body;
    expect(config.envs.prod).toMatchObject({ value: 1, rules, version: 2 });
    // The buckets the stage served are the ones published.
    expect((await snapshot()).configs.tiers.rules[1].split).toEqual(published.rules[1].split);
  });

  test("a config rollout's rules may name a segment: the snapshot carries it while serving, and its delete is refused naming the rollout", async () => {
    expect((await ts.api("/api/admin/segments", { body: { name: "rollout-vips", ids: ["vip-1"] } })).status).toBe(201);
    expect((await ts.api("/api/admin/configs", { body: { name: "vip-limits", schema: { type: "integer" }, value: 1 } })).status).toBe(201);
    const res = await api("", { body: { config: "vip-limits", env: "prod", rules: [{ conditions: [{ attr: "user_id", op: "in_segment", value: "rollout-vips" }], value: 50 }], stages: [{ percent: 100, minutes: 0 }] } });
    expect(res.status).toBe(201);
    expect((await snapshot()).segments["rollout-vips"]).toEqual({ attribute: "user_id", ids: ["vip-1"] });
    const flag = await ts.api("/ofrep/v1/evaluate/flags/vip-limits", { body: { context: { targetingKey: "vip-1" } }, key: ts.serverKey });
    expect(flag.body.value).toBe(50);
    const refused = await ts.api("/api/admin/segments/rollout-vips", { method: "DELETE" });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toContain(`rollout ${res.body.id} of config vip-limits (prod)`);
  });

  test("bad plans and references are refused, naming the field, and store nothing", async () => {
    const gate = await newGate();
    const count = async () => Number((await ts.store.one<{ n: number }>("SELECT COUNT(*) AS n FROM rollouts"))!.n);
    const before = await count();
    const cases: [Record<string, unknown>, number, string][] = [
      [{ env: "prod", rules: everyone }, 400, "gate"],
      [{ gate, config: "limits", env: "prod" }, 400, "gate"],
      [{ gate, env: "prod" }, 400, "rules"],
      [{ gate, env: "qa", rules: everyone }, 400, "env"],
      [{ gate, env: "prod", rules: everyone, stages: [{ percent: 10, minutes: 5 }] }, 400, "stages[0].percent"],
      [{ gate, env: "prod", rules: everyone, stages: [{ percent: 50, minutes: 5 }, { percent: 20, minutes: 5 }, { percent: 100, minutes: 0 }] }, 400, "stages[1].percent"],
      [{ gate, env: "prod", rules: everyone, stages: [{ percent: 50, minutes: 1.5 }, { percent: 100, minutes: 0 }] }, 400, "stages.0.minutes"],
      [{ gate, env: "prod", rules: everyone, metrics: [{ metric: "nope", direction: "lower" }] }, 404, "metrics[0].metric"],
      [{ gate, env: "prod", rules: everyone, metrics: [{ metric: "purchases", direction: "sideways" }] }, 400, "metrics.0.direction"],
      [{ gate, env: "prod", rules: everyone, metrics: [{ metric: "errors", direction: "lower" }] }, 400, "metrics[0].metric"],
      [{ gate, env: "prod", rules: [{ conditions: [{ attr: "country", op: "nope", value: "x" }] }] }, 400, "rules"],
      [{ gate, env: "prod", rules: everyone, startAt: "tomorrow" }, 400, "startAt"],
      [{ gate, env: "prod", rules: everyone, falseAlarmRate: 0.9 }, 400, "falseAlarmRate"],
      [{ gate, env: "prod", rules: everyone, surprise: true }, 400, "surprise"],
      [{ gate: "no-such-gate", env: "prod", rules: everyone }, 404, "gate"],
    ];
    for (const [body, status, field] of cases) {
      const res = await api("", { body });
      expect({ body, status: res.status }).toEqual({ body, status });
      if (field) expect(`${res.body.detail}`).toContain(field);
    }
    expect(await count()).toBe(before);
  });

  test("references name resources of the caller's project: another project's gate, config or metric is NOT_FOUND; a watched metric is not deleted", async () => {
    const o = await ts.newProject("Other rollouts project");
    const as = (path: string, body: unknown) => ts.api(path, { key: o.adminKey, body });
    expect((await as("/api/admin/gates", { name: "their-gate" })).status).toBe(201);
    const theirGate = (await ts.api("/api/admin/gates/their-gate", { key: o.adminKey })).body.id as string;
    expect((await as("/api/admin/configs", { name: "their-config", schema: { type: "number" }, value: 1 })).status).toBe(201);
    expect((await as("/api/admin/events", { name: "purchase" })).status).toBe(201);
    const theirMetric = (await as("/api/admin/metrics", { name: "their-purchases", kind: "count", event: "purchase" })).body.id as string;
    const gate = await newGate();
    const before = Number((await ts.store.one<{ n: number }>("SELECT COUNT(*) AS n FROM rollouts"))!.n);
    for (const [body, field] of [
      [{ gate: "their-gate", env: "prod", rules: everyone }, "gate"],
      [{ gate: theirGate, env: "prod", rules: everyone }, "gate"],
      [{ config: "their-config", env: "prod", value: 2 }, "config"],
      [{ gate, env: "prod", rules: everyone, metrics: [{ metric: theirMetric, direction: "higher" }] }, "metrics[0].metric"],
    ] as const) {
      const res = await api("", { body });
      expect([res.status, res.body.code], JSON.stringify(body)).toEqual([404, "NOT_FOUND"]);
      expect(`${res.body.detail}`, JSON.stringify(body)).toContain(field);
    }
    expect(Number((await ts.store.one<{ n: number }>("SELECT COUNT(*) AS n FROM rollouts"))!.n)).toBe(before);

    // A metric an unfinished rollout watches is not deleted; racing a rollout that names it, never a rollout watching nothing.
    expect((await ts.api("/api/admin/metrics", { body: { name: "watched-here", kind: "count", event: "purchase" } })).status).toBe(201);
    const r = (await api("", { body: { gate, env: "prod", rules: everyone, metrics: [{ metric: "watched-here", direction: "higher" }] } })).body;
    const refused = await ts.api("/api/admin/metrics/watched-here", { method: "DELETE" });
    expect([refused.status, refused.body.code]).toEqual([400, "VALIDATION"]);
    expect(refused.body.detail).toContain(r.id);
    expect((await api(`/${r.id}/rollback`, { method: "POST" })).status).toBe(200);
    expect((await ts.api("/api/admin/metrics/watched-here", { method: "DELETE" })).status).toBe(204);
    for (let i = 0; i < 4; i++) {
      const g = await newGate();
      expect((await ts.api("/api/admin/metrics", { body: { name: `racing-${i}`, kind: "count", event: "purchase" } })).status).toBe(201);
      const [made, gone] = await Promise.all([
        api("", { body: { gate: g, env: "prod", rules: everyone, metrics: [{ metric: `racing-${i}`, direction: "higher" }] } }),
        ts.api(`/api/admin/metrics/racing-${i}`, { method: "DELETE" }),
      ]);
      const exists = (await ts.api(`/api/admin/metrics/racing-${i}`)).status === 200;
      if (made.status === 201) expect([i, exists, gone.status]).toEqual([i, true, 400]);
      else expect([i, made.status, exists, gone.status]).toEqual([i, 404, false, 204]);
    }
  });

  test("two creations of the same gate and env at once: exactly one wins", async () => {
    const gate = await newGate();
    const results = await Promise.all(Array.from({ length: 8 }, () => api("", { body: { gate, env: "prod", rules: everyone } })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    const rows = await ts.store.all<{ id: string }>("SELECT id FROM rollouts WHERE subject_name = ? AND env = 'prod'", gate);
    expect(rows.length).toBe(1);
  });
});

describe("lifecycle by hand", () => {
  test("pause, resume, advance, roll back: each audited; the rollback leaves the snapshot", async () => {
    const gate = await newGate();
    const r = (await api("", { body: { gate, env: "prod", rules: everyone } })).body;
    const paused = await api(`/${r.id}/pause`, { method: "POST", body: { reason: "checking logs" } });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ status: "paused", outcome: { kind: "paused", reason: "checking logs", auto: false, by: expect.stringContaining("admin-key") } });
    expect((await api(`/${r.id}/pause`, { method: "POST" })).status).toBe(400);
    // Paused still serves its stage.
    expect((await snapshot()).rollouts[r.id].percent).toBe(1);
    now += 60_000;
    const resumed = await api(`/${r.id}/resume`, { method: "POST" });
    expect(resumed.body).toMatchObject({ status: "running", outcome: null, stageStartedAt: new Date(now).toISOString() });
    const advanced = await api(`/${r.id}/advance`, { method: "POST" });
    expect(advanced.body).toMatchObject({ status: "running", stage: 1, percent: 5 });
    expect((await snapshot()).rollouts[r.id]).toMatchObject({ stage: 1, percent: 5 });
    const before = (await snapshot()).revision;
    const rolled = await api(`/${r.id}/rollback`, { method: "POST", body: { reason: "support tickets" } });
    expect(rolled.body).toMatchObject({ status: "rolled_back", percent: 0, outcome: { kind: "rolled_back", reason: "support tickets", auto: false } });
    const snap = await snapshot();
    expect(snap.revision).toBeGreaterThan(before);
    expect(snap.rollouts[r.id]).toBeUndefined();
    // The gate itself never changed.
    expect((await ts.api(`/api/admin/gates/${gate}`)).body.envs.prod.rules).toEqual([]);
    for (const action of ["rollout.pause", "rollout.resume", "rollout.advance", "rollout.rollback"]) {
      expect((await audit(action)).some((a) => a.subjectId === r.id && a.actorEmail.startsWith("admin-key"))).toBe(true);
    }
    expect((await api(`/${r.id}/resume`, { method: "POST" })).status).toBe(400);
  });

  test("advancing past the last stage publishes the gate's rules for everyone", async () => {
    const gate = await newGate();
    const r = (await api("", { body: { gate, env: "prod", rules: everyone, stages: [{ percent: 50, minutes: 60 }, { percent: 100, minutes: 0 }] } })).body;
    expect((await api(`/${r.id}/advance`, { method: "POST" })).body).toMatchObject({ stage: 1, percent: 100 });
    const done = await api(`/${r.id}/advance`, { method: "POST" });
    expect(done.body).toMatchObject({ status: "completed", percent: 100, outcome: { kind: "completed" } });
    const g = (await ts.api(`/api/admin/gates/${gate}`)).body;
    expect(g.envs.prod.rules).toEqual(everyone);
    const snap = await snapshot();
    expect(snap.rollouts[r.id]).toBeUndefined();
    expect(snap.gates[gate].rules).toEqual(everyone);
  });

  test("a scheduled rollout waits for its time, then the monitor starts it", async () => {
    const gate = await newGate();
    const r = (await api("", { body: { gate, env: "prod", rules: everyone, startAt: new Date(now + 3_600_000).toISOString() } })).body;
    expect(r).toMatchObject({ status: "scheduled", percent: 0, stageStartedAt: null });
    expect((await snapshot()).rollouts[r.id]).toBeUndefined();
    await ts.server.ctx.services.rollouts.monitor.checkAll(now);
    expect((await api(`/${r.id}`)).body.status).toBe("scheduled");
    await ts.server.ctx.services.rollouts.monitor.checkAll(now + 3_600_000);
    expect((await api(`/${r.id}`)).body).toMatchObject({ status: "running", stage: 0 });
    expect((await snapshot()).rollouts[r.id]).toMatchObject({ percent: 1 });
  });

  test("list with q and status, get by the gate's name, patch, delete only when finished", async () => {
    const gate = await newGate();
    const r = (await api("", { body: { gate, env: "prod", rules: everyone, description: "Search revamp" } })).body;
    expect((await api(`?q=revamp`)).body.map((x: { id: string }) => x.id)).toEqual([r.id]);
    expect((await api(`?status=running&q=${gate}`)).body.length).toBe(1);
    expect((await api(`?status=paused&q=${gate}`)).body.length).toBe(0);
    expect((await api("?status=nope")).status).toBe(400);
    expect((await api(`?env=prod&kind=gate&q=${gate}`)).body.length).toBe(1);
    expect((await api(`?env=dev&q=${gate}`)).body.length).toBe(0);
    expect((await api(`?kind=config&q=${gate}`)).body.length).toBe(0);
    expect((await api("?env=qa")).status).toBe(400);
    expect((await api("?kind=flag")).status).toBe(400);
    expect((await api(`/${gate}`)).body.id).toBe(r.id);
    expect((await api(`/${r.id.slice(0, 12)}`)).body.id).toBe(r.id);
    expect((await api("/rol_nothing")).status).toBe(404);
    const patched = await api(`/${r.id}`, { method: "PATCH", body: { onRegression: "pause", notify: false } });
    expect(patched.body).toMatchObject({ onRegression: "pause", notify: false });
    expect((await api(`/${r.id}`, { method: "PATCH", body: { stages: [] } })).status).toBe(400);
    expect((await api(`/${r.id}`, { method: "DELETE" })).status).toBe(400);
    await api(`/${r.id}/rollback`, { method: "POST" });
    expect((await api(`/${r.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await api(`/${r.id}`)).status).toBe(404);
    expect((await audit("rollout.delete")).some((a) => a.subjectId === r.id)).toBe(true);
  });

  test("a person's pause wins over a monitor decision taken just before it", async () => {
    const gate = await newGate();
    const r = (await api("", { body: { gate, env: "prod", rules: everyone, stages: [{ percent: 50, minutes: 0 }, { percent: 100, minutes: 0 }] } })).body;
    const rollouts = ts.server.ctx.services.rollouts;
    await api(`/${r.id}/pause`, { method: "POST" });
    // What the monitor would do next, had it judged the stage before the pause: refused, the pause stays.
    await expect(rollouts.moveToStage(ts.projectId, r.id, 1, { email: "system@svc.local", type: "system" }, 0)).rejects.toThrow("not running");
    await expect(rollouts.complete(ts.projectId, r.id, { email: "system@svc.local", type: "system" }, true)).rejects.toThrow("not serving");
    expect((await api(`/${r.id}`)).body).toMatchObject({ status: "paused", stage: 0 });
    // A person may still advance a paused rollout: it then runs.
    expect((await api(`/${r.id}/advance`, { method: "POST" })).body).toMatchObject({ status: "running", stage: 1 });
  });

  test("a gate or config with an unfinished rollout cannot be deleted", async () => {
    const gate = await newGate();
    const r = (await api("", { body: { gate, env: "prod", rules: everyone } })).body;
    const refused = await ts.api(`/api/admin/gates/${gate}`, { method: "DELETE" });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toContain(r.id);
    expect((await ts.api(`/api/admin/gates/${gate}`)).status).toBe(200);
    await api(`/${r.id}/rollback`, { method: "POST" });
    expect((await ts.api(`/api/admin/gates/${gate}`, { method: "DELETE" })).status).toBe(204);
  });

  test("a rollback and a pause at once: one wins, the other is refused, the state is the winner's", async () => {
    const gate = await newGate();
    const r = (await api("", { body: { gate, env: "prod", rules: everyone } })).body;
    const [a, b] = await Promise.all([api(`/${r.id}/rollback`, { method: "POST" }), api(`/${r.id}/pause`, { method: "POST" })]);
    const statuses = [a.status, b.status].sort();
    const final = (await api(`/${r.id}`)).body.status;
    if (statuses[0] === 200 && statuses[1] === 200) expect(final).toBe("rolled_back"); // pause first, then rollback of the paused one
    else expect(statuses).toEqual([200, 400]);
    expect(["rolled_back", "paused"]).toContain(final);
  });
});

describe("the split in SDKs and OFREP", () => {
  test("units below the stage's percent get the new rules, the rest the old; each logs its stage's exposure", async () => {
    const gate = await newGate();
    const created = await api("", { body: { gate, env: "prod", rules: everyone, stages: [{ percent: 30, minutes: 60 }, { percent: 100, minutes: 0 }] } });
    // (Asserted so that a refused create says why, instead of failing on the snapshot below.)
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const r = created.body;
    const published = (await snapshot()).rollouts;
    expect(Object.keys(published ?? {}), "the snapshot's rollouts").toContain(r.id);
    const salt = published[r.id].salt as string;
    const sdk = createClient({ baseUrl: ts.url, sdkKey: ts.serverKey, env: "prod", stream: false, flushIntervalMs: 60_000, now: () => now });
    try {
      await sdk.ready();
      let on = 0;
      for (let i = 0; i < 1000; i++) {
        const user = `user-${i}`;
        const value = sdk.isEnabled(gate, { user_id: user });
        expect(value).toBe(inRollout({ salt, percent: 30 }, user));
        if (value) on++;
      }
      // About 30 %, with six standard deviations either side (the rollout's salt is new each run: 240–360 failed
      // about one run in 25,000).
      expect(on).toBeGreaterThan(213);
      expect(on).toBeLessThan(387);
      expect(sdk.isEnabled(gate, {})).toBe(false); // no unit: the old rules
      // OFREP answers the same for a unit.
      for (const user of ["user-1", "user-2", "user-3", "user-4"]) {
        const res = await ts.api(`/ofrep/v1/evaluate/flags/${gate}`, { body: { context: { targetingKey: user, env: "prod" } }, key: ts.serverKey });
        expect(res.body.value).toBe(inRollout({ salt, percent: 30 }, user));
        if (res.body.value) expect(res.body.reason).toBe("SPLIT");
      }
      await sdk.flush();
      const exposures = await ts.server.ctx.services.analytics.eventStore.exposureCounts(ts.projectId, `${r.id}_0`);
      expect(exposures.variants.find((v) => v.variant === "new")!.n).toBe(on);
      expect(exposures.variants.find((v) => v.variant === "old")!.n).toBe(1000 - on);
    } finally {
      await sdk.close();
    }
  });
});
