import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import { type TestServer, expectErrorShape, startTestServer } from "../helpers";

let ts: TestServer;
let universe: string;
let other: string;

const api = (path: string, init: { method?: string; body?: unknown; key?: string } = {}) => ts.api(`/api/admin/experiments${path}`, init);
const create = (body: Record<string, unknown>) => api("", { body });
const start = (ref: string) => api(`/${encodeURIComponent(ref)}/start`, { method: "POST" });
const stop = (ref: string, body: unknown) => api(`/${encodeURIComponent(ref)}/stop`, { method: "POST", body });
const snapshot = async (env = "prod") => (await ts.api(`/api/sdk/v1/snapshot?env=${env}`, { key: ts.serverKey })).body;
const audits = async (action: string) => (await auditOf(ts.store, ts.projectId, 1000)).filter((r) => r.action === action);

const twoVariants = [
  { key: "control", weight: 50, value: "blue" },
  { key: "green", weight: 50, value: "green" },
];
let seq = 0;
const draft = (extra: Record<string, unknown> = {}) => ({ name: `exp-${++seq}`, universe: "web", variants: twoVariants, allocation: [0, 1000], ...extra });

beforeAll(async () => {
  ts = await startTestServer({ alertsEveryMs: 0, experimentsEveryMs: 0 });
  const scoped = { "x-project-id": ts.projectId };
  const u = await ts.api("/api/admin/universes", { body: { name: "web" }, headers: scoped });
  expect(u.status).toBe(201);
  universe = u.body.id;
  const o = await ts.api("/api/admin/universes", { body: { name: "accounts", unit_type: "account_id" }, headers: scoped });
  other = o.body.id;
  expect((await ts.api("/api/admin/events", { body: { name: "purchase", properties: [{ name: "amount", type: "number" }] } })).status).toBe(201);
  expect((await ts.api("/api/admin/metrics", { body: { name: "purchases", kind: "count", event: "purchase" } })).status).toBe(201);
  expect((await ts.api("/api/admin/metrics", { body: { name: "revenue", kind: "sum", event: "purchase", property: "amount" } })).status).toBe(201);
  expect((await ts.api("/api/admin/gates", { body: { name: "beta" } })).status).toBe(201);
});
afterAll(() => ts.stop());

describe("create, read, update, delete", () => {
  test("create answers the whole draft; get by id, name and id prefix; list with q and status", async () => {
    const res = await create(draft({ name: "checkout-button", description: "Green vs blue", primaryMetric: "purchases", guardrailMetrics: ["revenue", { metric: "purchases", worseWhen: "increase" }].slice(0, 1) }));
    expect(res.status).toBe(201);
    const e = res.body;
    expect(e.id).toMatch(/^exp_[A-Za-z0-9]{20}$/);
    expect(e).toMatchObject({ name: "checkout-button", description: "Green vs blue", universe: "web", universeId: universe, env: "prod", status: "draft", allocation: [0, 1000], gate: null, startedAt: null, stoppedAt: null, outcome: null });
    expect(e.variants).toEqual([
      { key: "control", name: "control", weight: 50, value: "blue" },
      { key: "green", name: "green", weight: 50, value: "green" },
    ]);
    expect(e.primaryMetric).toMatch(/^met_/);
    expect(e.guardrailMetrics).toEqual([{ metric: expect.stringMatching(/^met_/), worseWhen: "decrease" }]);
    for (const ref of [e.id, "checkout-button", e.id.slice(0, 12)]) expect((await api(`/${ref}`)).body.id).toBe(e.id);
    expect((await api("?q=GREEN")).body.map((x: { id: string }) => x.id)).toEqual([e.id]);
    expect((await api("?status=running")).body).toEqual([]);
    expect((await api("?status=draft")).body.some((x: { id: string }) => x.id === e.id)).toBe(true);
    expect((await api("?status=paused")).status).toBe(400);
    const [row] = await audits("experiment.create");
    expect(row).toMatchObject({ subjectId: e.id, subjectName: "checkout-button" });
  });

  test("refuses bad bodies naming the field, and changes nothing", async () => {
    const before = (await api("")).body.length;
    const cases: [Record<string, unknown>, string][] = [
      [draft({ variants: [twoVariants[0]] }), "variants"],
      [draft({ variants: [twoVariants[0], { key: "control", weight: 1 }] }), "variants[1].key"],
      [draft({ variants: [twoVariants[0], { key: "b", weight: 0 }] }), "variants"],
      [draft({ allocation: [500, 200] }), "allocation"],
      [draft({ allocation: [0, 10001] }), "allocation"],
      [draft({ variants: [twoVariants[0], { key: "b", weight: 1, override: { kind: "gate", name: "beta", value: "yes" } }] }), "variants[1].override.value"],
      [draft({ name: "exp_shadow" }), "name"],
      [draft({ extra: 1 }), ""],
      [draft({ variants: [twoVariants[0], { key: "b", weight: 1, colour: "red" }] }), ""],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expectErrorShape(res.body);
      if (field) expect(res.body.detail ?? "", JSON.stringify(body)).toContain(field);
    }
    expect((await api("")).body.length).toBe(before);
    expect((await create(draft({ name: "checkout-button" }))).status).toBe(409);
  });

  test("every reference names a resource of the caller's project: none, or another project's, is NOT_FOUND naming the field", async () => {
    const o = await ts.newProject("Other experiments project");
    const as = (path: string, body: unknown) => ts.api(path, { key: o.adminKey, body, headers: { "x-project-id": o.projectId } });
    const theirUniverse = (await as("/api/admin/universes", { name: "theirs" })).body.id as string;
    expect(theirUniverse).toStartWith("uni_");
    expect((await as("/api/admin/events", { name: "purchase" })).status).toBe(201);
    const theirMetric = (await as("/api/admin/metrics", { name: "their-purchases", kind: "count", event: "purchase" })).body.id as string;
    expect((await as("/api/admin/gates", { name: "their-gate" })).status).toBe(201);
    expect((await as("/api/admin/configs", { name: "their-config", schema: { type: "number" }, value: 1 })).status).toBe(201);
    const before = (await api("")).body.length;
    const override = (kind: string, name: string) => ({ variants: [twoVariants[0], { key: "b", weight: 1, override: { kind, name, value: kind === "gate" ? true : 2 } }] });
    const cases: [Record<string, unknown>, string][] = [
      [draft({ universe: "nope" }), "universe"],
      [draft({ universe: theirUniverse }), "universe"],
      [draft({ gate: "nope" }), "gate"],
      [draft({ gate: "their-gate" }), "gate"],
      [draft({ primaryMetric: "nope" }), "primaryMetric"],
      [draft({ primaryMetric: theirMetric }), "primaryMetric"],
      [draft({ guardrailMetrics: ["nope"] }), "guardrailMetrics[0].metric"],
      [draft({ guardrailMetrics: [theirMetric] }), "guardrailMetrics[0].metric"],
      [draft(override("gate", "nope")), "variants[1].override.name"],
      [draft(override("gate", "their-gate")), "variants[1].override.name"],
      [draft(override("config", "nope")), "variants[1].override.name"],
      [draft(override("config", "their-config")), "variants[1].override.name"],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      expect([res.status, res.body.code], JSON.stringify(body)).toEqual([404, "NOT_FOUND"]);
      expect(res.body.detail ?? "", JSON.stringify(body)).toContain(field);
    }
    expect((await api("")).body.length).toBe(before);
    // The same on a draft's PATCH: nothing changes.
    const e = (await create(draft())).body;
    for (const [patch, field] of [[{ gate: "their-gate" }, "gate"], [{ primaryMetric: theirMetric }, "primaryMetric"], [{ universe: theirUniverse }, "universe"]] as const) {
      const res = await api(`/${e.id}`, { method: "PATCH", body: patch });
      expect([res.status, res.body.code], JSON.stringify(patch)).toEqual([404, "NOT_FOUND"]);
      expect(res.body.detail).toContain(field);
    }
    expect((await api(`/${e.id}`)).body).toMatchObject({ gate: null, primaryMetric: null, universeId: universe });
  });

  test("a reference and a concurrent delete of what it names: never an experiment naming something gone", async () => {
    for (let i = 0; i < 4; i++) {
      expect((await ts.api("/api/admin/gates", { body: { name: `racing-gate-${i}` } })).status).toBe(201);
      expect((await ts.api("/api/admin/metrics", { body: { name: `racing-metric-${i}`, kind: "count", event: "purchase" } })).status).toBe(201);
      const [made, gateGone, metricGone] = await Promise.all([
        create(draft({ gate: `racing-gate-${i}`, primaryMetric: `racing-metric-${i}` })),
        ts.api(`/api/admin/gates/racing-gate-${i}`, { method: "DELETE" }),
        ts.api(`/api/admin/metrics/racing-metric-${i}`, { method: "DELETE" }),
      ]);
      const gateExists = (await ts.api(`/api/admin/gates/racing-gate-${i}`)).status === 200;
      const metricExists = (await ts.api(`/api/admin/metrics/racing-metric-${i}`)).status === 200;
      if (made.status === 201) {
        expect([i, gateExists, metricExists, gateGone.status, metricGone.status]).toEqual([i, true, true, 400, 400]);
        expect((await api(`/${made.body.id}`, { method: "DELETE" })).status).toBe(204);
      } else {
        expect([i, made.status]).toEqual([i, 404]);
      }
    }
  });

  test("a draft changes anything; nothing different writes nothing; delete", async () => {
    const e = (await create(draft())).body;
    const changed = await api(`/${e.id}`, { method: "PATCH", body: { allocation: [2000, 3000], universe: "accounts", gate: "beta", description: "x" } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ allocation: [2000, 3000], universe: "accounts", universeId: other, gate: "beta", description: "x" });
    const updates = (await audits("experiment.update")).filter((r) => r.subjectId === e.id);
    expect(updates.length).toBe(1);
    expect(updates[0]!.detail).toMatchObject({ fields: ["description", "universe", "allocation", "gate"] });
    const same = await api(`/${e.id}`, { method: "PATCH", body: { allocation: [2000, 3000] } });
    expect(same.body.updatedAt).toBe(changed.body.updatedAt);
    expect((await audits("experiment.update")).filter((r) => r.subjectId === e.id).length).toBe(1);
    expect((await api(`/${e.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await api(`/${e.id}`)).status).toBe(404);
    expect((await audits("experiment.delete")).some((r) => r.subjectId === e.id)).toBe(true);
  });
});

describe("lifecycle", () => {
  test("start publishes on its env only; running refuses design changes and delete; stop ships or rolls back", async () => {
    const e = (await create(draft({ allocation: [3000, 4000], env: "staging" }))).body;
    expect((await snapshot("staging")).experiments[e.name]).toBeUndefined();
    const started = await start(e.name);
    expect(started.status).toBe(200);
    expect(started.body.status).toBe("running");
    expect(started.body.startedAt).not.toBeNull();
    const published = (await snapshot("staging")).experiments[e.name];
    expect(published).toEqual({ id: e.id, universe: "web", salt: e.salt, allocation: [3000, 4000], variants: [{ key: "control", weight: 50, value: "blue" }, { key: "green", weight: 50, value: "green" }], gate: null });
    expect((await snapshot("prod")).experiments[e.name]).toBeUndefined();
    const frozen = await api(`/${e.id}`, { method: "PATCH", body: { allocation: [0, 10], description: "ok" } });
    expect(frozen.status).toBe(400);
    expect(frozen.body.detail).toContain("allocation");
    expect((await api(`/${e.id}`)).body.description).toBeNull();
    expect((await api(`/${e.id}`, { method: "DELETE" })).status).toBe(400);
    expect((await start(e.id)).status).toBe(400);
    // Renaming a running experiment republishes it under the new name.
    expect((await api(`/${e.id}`, { method: "PATCH", body: { name: `${e.name}-renamed` } })).status).toBe(200);
    expect(Object.keys((await snapshot("staging")).experiments)).toContain(`${e.name}-renamed`);
    expect((await stop(e.id, { decision: "ship" })).body.detail).toContain("variant");
    expect((await stop(e.id, { decision: "ship", variant: "purple" })).status).toBe(400);
    expect((await stop(e.id, { decision: "rollback", variant: "green" })).status).toBe(400);
    const stopped = await stop(e.id, { decision: "ship", variant: "green", reason: "won" });
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ status: "stopped", outcome: { decision: "ship", variant: "green", reason: "won", by: expect.any(String), auto: false } });
    expect((await snapshot("staging")).experiments[`${e.name}-renamed`]).toBeUndefined();
    expect((await stop(e.id, { decision: "rollback" })).status).toBe(400);
    expect((await api(`/${e.id}`, { method: "PATCH", body: { gate: "beta" } })).status).toBe(400);
    expect((await api(`/${e.id}`, { method: "PATCH", body: { description: "record" } })).status).toBe(200);
    for (const action of ["experiment.start", "experiment.stop"]) expect((await audits(action)).some((r) => r.subjectId === e.id)).toBe(true);
  });

  test("start refuses an allocation over the holdout or over a running experiment; the universe refuses delete and holdout moves while used", async () => {
    const a = (await create(draft({ allocation: [5000, 6000] }))).body;
    const b = (await create(draft({ allocation: [5500, 6500] }))).body;
    expect((await start(a.id)).status).toBe(200);
    const clash = await start(b.id);
    expect(clash.status).toBe(400);
    expect(clash.body.detail).toContain(a.name);
    expect((await api(`/${b.id}`)).body.status).toBe("draft");
    expect((await ts.api(`/api/admin/universes/${universe}`, { method: "DELETE" })).status).toBe(400);
    const holdout = await ts.api(`/api/admin/universes/${universe}`, { method: "PATCH", body: { holdout_range: [5900, 6000] } });
    expect(holdout.status).toBe(400);
    expect(holdout.body.detail).toContain(a.name);
    expect((await ts.api(`/api/admin/universes/${universe}`)).body.holdout_range).toBeNull();
    expect((await stop(a.id, { decision: "rollback" })).status).toBe(200);
    expect((await start(b.id)).status).toBe(200);
    expect((await stop(b.id, { decision: "rollback" })).status).toBe(200);
  });

  test("the holdout: create refuses an allocation over it; a draft whose segments a holdout later covers does not start", async () => {
    const scoped = { "x-project-id": ts.projectId };
    expect((await ts.api("/api/admin/universes", { body: { name: "held", holdout_range: [0, 500] }, headers: scoped })).status).toBe(201);
    const over = await create(draft({ universe: "held", allocation: [400, 600] }));
    expect(over.status).toBe(400);
    expect(over.body.detail).toContain("holdout");
    const d = (await create(draft({ universe: "held", allocation: [600, 900] }))).body;
    expect((await ts.api("/api/admin/universes/held", { method: "PATCH", body: { holdout_range: [0, 700] } })).status).toBe(200);
    const refused = await start(d.id);
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toContain("holdout [0, 700)");
    expect((await api(`/${d.id}`)).body.status).toBe("draft");
  });

  test("concurrent starts of overlapping drafts: exactly one runs", async () => {
    const drafts = await Promise.all(Array.from({ length: 6 }, () => create(draft({ allocation: [7000, 7100] }))));
    const results = await Promise.all(drafts.map((d) => start(d.body.id)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400, 400]);
    const running = (await api("?status=running")).body.filter((x: { allocation: number[] }) => x.allocation[0] === 7000);
    expect(running.length).toBe(1);
    expect((await stop(running[0].id, { decision: "rollback" })).status).toBe(200);
  });

  test("a metric measured by an experiment is not deleted", async () => {
    const m = await ts.api("/api/admin/metrics", { body: { name: "watched", kind: "count", event: "purchase" } });
    const e = (await create(draft({ guardrailMetrics: ["watched"] }))).body;
    const refused = await ts.api(`/api/admin/metrics/${m.body.id}`, { method: "DELETE" });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toContain(e.name);
    expect((await api(`/${e.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await ts.api(`/api/admin/metrics/${m.body.id}`, { method: "DELETE" })).status).toBe(204);
  });

  test("a gate or config an unfinished experiment targets or overrides is not deleted", async () => {
    expect((await ts.api("/api/admin/gates", { body: { name: "targeted" } })).status).toBe(201);
    expect((await ts.api("/api/admin/configs", { body: { name: "theme", schema: { type: "string" }, value: "blue" } })).status).toBe(201);
    const badValue = await create(draft({ variants: [twoVariants[0], { key: "b", weight: 1, override: { kind: "config", name: "theme", value: 7 } }] }));
    expect(badValue.status).toBe(400);
    expect(badValue.body.detail).toContain("variants[1].override.value");
    const e = (await create(draft({ gate: "targeted", variants: [twoVariants[0], { key: "b", weight: 1, override: { kind: "config", name: "theme", value: "green" } }] }))).body;
    for (const path of ["/api/admin/gates/targeted", "/api/admin/configs/theme"]) {
      const refused = await ts.api(path, { method: "DELETE" });
      expect(refused.status, path).toBe(400);
      expect(refused.body.detail).toContain(e.name);
    }
    expect((await api(`/${e.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await ts.api("/api/admin/gates/targeted", { method: "DELETE" })).status).toBe(204);
    expect((await ts.api("/api/admin/configs/theme", { method: "DELETE" })).status).toBe(204);
  });
});
