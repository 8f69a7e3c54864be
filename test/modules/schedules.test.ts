import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { ApiError } from "../../src/lib/errors";
import { type TestServer, dropStore, expectErrorShape, freshStoreUrl, startTestServer, tempDir } from "../helpers";

// Scheduled changes (issue 30): the API, the runner's rounds by hand on an injected clock (schedulesEveryMs 0), a
// late run after downtime (a restart past runAt). Three processes with one SIGKILLed: schedules-kill.test.ts.

const HOUR = 3_600_000;
let ts: TestServer;
let now = Date.parse("2026-11-28T09:00:00.000Z");
const at = (ms: number) => new Date(ms).toISOString();
const api = (path: string, init: { method?: string; body?: unknown; key?: string } = {}) => ts.api(`/api/admin/schedules${path}`, init);
const runDue = () => ts.server.ctx.services.schedules.runDue(now);
const rules = (pct: number) => [{ conditions: [], passPercentage: pct }];
const gateStep = (gate: string, pct: number, runAt: number) => ({ change: { kind: "gate.rules", name: gate, env: "prod", rules: rules(pct) }, runAt: at(runAt) });
let seq = 0;

async function newGate(): Promise<string> {
  const name = `sched-gate-${++seq}`;
  expect((await ts.api("/api/admin/gates", { body: { name } })).status).toBe(201);
  return name;
}
async function newKillswitch(): Promise<string> {
  const name = `sched-ks-${++seq}`;
  expect((await ts.api("/api/admin/killswitches", { body: { name } })).status).toBe(201);
  return name;
}
const auditOf = (subjectId: string) => ts.store.all<{ action: string; actor_email: string; actor_type: string; env: string | null; detail: string | null }>("SELECT action, actor_email, actor_type, env, detail FROM audit_log WHERE subject_id = ? ORDER BY seq", subjectId);
// PostgreSQL answers a bigint as text: numbers compared as numbers.
const stepRows = async (id: string) =>
  (await ts.store.all<{ step: number; state: string; late_by_ms: number | string | null; late: number; error: string | null }>("SELECT step, state, late_by_ms, late, error FROM schedule_steps WHERE schedule_id = ? ORDER BY step", id)).map((r) => ({
    ...r,
    step: Number(r.step),
    late_by_ms: r.late_by_ms === null ? null : Number(r.late_by_ms),
    late: Number(r.late),
  }));
const gateRulesOn = async (gate: string) => (await ts.api(`/api/admin/gates/${gate}`)).body.envs.prod;

beforeAll(async () => {
  ts = await startTestServer({ schedulesEveryMs: 0, rolloutsEveryMs: 0, alertsEveryMs: 0, experimentsEveryMs: 0, clock: () => now });
});
afterAll(() => ts.stop());

describe("POST /api/admin/schedules", () => {
  test("a toggle scheduled for a time runs at that time once, as its author, audited in the step's transaction", async () => {
    const ks = await newKillswitch();
    const res = await api("", { body: { change: { kind: "killswitch.set", name: ks, env: "prod", value: true }, runAt: at(now + HOUR) } });
    expect(res.status).toBe(201);
    const s = res.body;
    expect(s.id).toMatch(/^sch_/);
    expect(s).toMatchObject({ state: "pending", nextRunAt: at(now + HOUR), summary: `${ks} → on (prod)` });
    expect(s.steps).toEqual([
      { step: 1, change: { kind: "killswitch.set", name: ks, env: "prod", value: true }, kind: "killswitch.set", target: { type: "killswitch", name: ks }, env: "prod", summary: `${ks} → on (prod)`, runAt: at(now + HOUR), state: "pending", ranAt: null, lateByMs: null, late: false, error: null },
    ]);
    // Scheduling checked the change in a rolled-back transaction: nothing was published.
    expect((await ts.api(`/api/admin/killswitches/${ks}`)).body.envs.prod).toMatchObject({ value: false, version: 1 });

    now += HOUR - 1000;
    expect(await runDue()).toEqual([]);
    now += 1500;
    const outcomes = await runDue();
    expect(outcomes).toEqual([{ scheduleId: s.id, step: 1, outcome: "done", lateByMs: 500 }]);
    expect(await runDue()).toEqual([]);
    const ksNow = (await ts.api(`/api/admin/killswitches/${ks}`)).body.envs.prod;
    expect(ksNow).toMatchObject({ value: true, version: 2 });
    const got = (await api(`/${s.id}`)).body;
    expect(got).toMatchObject({ state: "done", nextRunAt: null, steps: [{ state: "done", ranAt: at(now), lateByMs: 500, late: false }] });
    expect(await stepRows(s.id)).toEqual([{ step: 1, state: "done", late_by_ms: 500, late: 0, error: null }]);
    const rows = await auditOf(s.id);
    expect(rows.map((r) => r.action)).toEqual(["schedule.create", "schedule.run"]);
    expect(rows[1]!.actor_type).toBe("schedule");
    const run = JSON.parse(rows[1]!.detail!);
    expect(run).toMatchObject({ step: 1, of: 1, kind: "killswitch.set", lateByMs: 500, before: "version 1", after: "version 2" });
    expect(run.late).toBeUndefined();
    expect(rows[1]!.actor_email).toBe(rows[0]!.actor_email);
    // The publish itself is the killswitch's own, by the schedule's author as a schedule.
    const toggles = await ts.store.all<{ actor_type: string; env: string }>("SELECT a.actor_type, a.env FROM audit_log a JOIN killswitches k ON k.id = a.subject_id WHERE k.name = ? AND a.action = 'killswitch.toggle'", ks);
    expect(toggles).toEqual([{ actor_type: "schedule", env: "prod" }]);
  });

  test("a config value and a segment patch run through their modules' own publish", async () => {
    expect((await ts.api("/api/admin/configs", { body: { name: "sched-limits", schema: { type: "object", properties: { perMinute: { type: "integer" } }, required: ["perMinute"] }, value: { perMinute: 60 } } })).status).toBe(201);
    expect((await ts.api("/api/admin/segments", { body: { name: "sched-beta", attribute: "user_id", ids: ["u-1"] } })).status).toBe(201);
    const badValue = await api("", { body: { change: { kind: "config.publish", name: "sched-limits", env: "prod", value: { perMinute: "many" } }, runAt: at(now + HOUR) } });
    expect(badValue.status).toBe(400);
    expect(badValue.body.code).toBe("VALIDATION");
    const config = await api("", { body: { change: { kind: "config.publish", name: "sched-limits", env: "prod", value: { perMinute: 120 } }, runAt: at(now + HOUR) } });
    const segment = await api("", { body: { change: { kind: "segment.update", name: "sched-beta", patch: { ids: ["u-1", "u-2"] } }, runAt: at(now + HOUR) } });
    expect([config.status, segment.status]).toEqual([201, 201]);
    expect(segment.body.steps[0]).toMatchObject({ target: { type: "segment", name: "sched-beta" }, env: null });
    now += HOUR;
    const outcomes = await runDue();
    expect(outcomes.map((o) => o.outcome)).toEqual(["done", "done"]);
    const published = (await ts.api("/api/admin/configs/sched-limits")).body;
    expect(published.envs.prod).toMatchObject({ value: { perMinute: 120 }, version: 2 });
    expect((await ts.api("/api/admin/segments/sched-beta")).body.ids).toEqual(["u-1", "u-2"]);
  });

  test("a ramp's steps run in order at their times, several due at once included", async () => {
    const gate = await newGate();
    const res = await api("", { body: { steps: [gateStep(gate, 5, now + HOUR), gateStep(gate, 25, now + 2 * HOUR), gateStep(gate, 100, now + 3 * HOUR)] } });
    expect(res.status).toBe(201);
    const id = res.body.id as string;
    expect(res.body.steps.map((s: { step: number; state: string }) => [s.step, s.state])).toEqual([[1, "pending"], [2, "pending"], [3, "pending"]]);
    expect(res.body.summary).toContain(" → ");
    now += HOUR;
    expect((await runDue()).map((o) => [o.step, o.outcome])).toEqual([[1, "done"]]);
    expect((await gateRulesOn(gate)).rules[0].passPercentage).toBe(5);
    expect((await api(`/${id}`)).body).toMatchObject({ state: "pending", nextRunAt: at(now + HOUR) });
    // Steps 2 and 3 both due in one round: 2 first, then 3.
    now += 3 * HOUR;
    expect((await runDue()).map((o) => [o.step, o.outcome])).toEqual([[2, "done"], [3, "done"]]);
    const history = (await ts.api(`/api/admin/gates/${gate}/history?env=prod`)).body as { version: number; rules: { passPercentage: number }[] }[];
    expect(history.map((h): (number | null)[] => [h.version, h.rules[0]?.passPercentage ?? null])).toEqual([[4, 100], [3, 25], [2, 5], [1, null]]);
    expect((await stepRows(id)).map((r) => r.state)).toEqual(["done", "done", "done"]);
    expect((await auditOf(id)).map((r) => [r.action, r.detail ? JSON.parse(r.detail).step ?? null : null])).toEqual([["schedule.create", null], ["schedule.run", 1], ["schedule.run", 2], ["schedule.run", 3]]);
    expect((await api(`/${id}`)).body.state).toBe("done");
    expect((await api(`?state=done&q=${gate}`)).body.map((s: { id: string }) => s.id)).toEqual([id]);
    expect((await api(`?state=pending&q=${gate}`)).body).toEqual([]);
  });

  test("a step the module refuses at its time fails with the error and cancels the steps after it", async () => {
    const gate = await newGate();
    const id = (await api("", { body: { steps: [gateStep(gate, 10, now + HOUR), gateStep(gate, 50, now + 2 * HOUR)] } })).body.id as string;
    expect((await ts.api(`/api/admin/gates/${gate}`, { method: "DELETE" })).status).toBe(204);
    now += 2 * HOUR;
    const outcomes = await runDue();
    expect(outcomes).toMatchObject([{ step: 1, outcome: "failed", error: expect.stringContaining(gate) }]);
    const rows = await stepRows(id);
    expect(rows.map((r) => r.state)).toEqual(["failed", "cancelled"]);
    expect(rows[1]!.error).toBe("not run: step 1 failed");
    expect((await api(`/${id}`)).body.state).toBe("failed");
    expect((await auditOf(id)).map((r) => r.action)).toEqual(["schedule.create", "schedule.fail"]);
  });
});

describe("validation", () => {
  test("a change that would fail is refused when scheduled, naming the field, and nothing is stored", async () => {
    const gate = await newGate();
    const count = async () => Number((await ts.store.one<{ n: number }>("SELECT COUNT(*) AS n FROM schedules"))!.n);
    const before = await count();
    const cases: [unknown, number, string, string][] = [
      [{ change: { kind: "gate.nope", name: gate }, runAt: at(now + HOUR) }, 400, "VALIDATION", "change.kind"],
      [{ change: { kind: "__proto__", name: gate }, runAt: at(now + HOUR) }, 400, "VALIDATION", "change.kind"],
      [{ change: { kind: "toString", name: gate }, runAt: at(now + HOUR) }, 400, "VALIDATION", "change.kind"],
      [{ change: [], runAt: at(now + HOUR) }, 400, "VALIDATION", "change"],
      [{ change: { kind: "gate.rules", name: gate, env: "prod", rules: [{ conditions: [], passPercentage: 150 }] }, runAt: at(now + HOUR) }, 400, "VALIDATION", "change.rules[0].passPercentage"],
      [{ change: { kind: "gate.rules", name: gate, env: "prod", rules: rules(5), extra: 1 }, runAt: at(now + HOUR) }, 400, "VALIDATION", "change"],
      [{ change: { kind: "gate.rules", name: "no-such-gate", env: "prod", rules: rules(5) }, runAt: at(now + HOUR) }, 404, "NOT_FOUND", ""],
      [{ change: { kind: "gate.rules", name: gate, env: "prod", rules: rules(5) }, runAt: at(now - 2 * HOUR) }, 400, "VALIDATION", "runAt"],
      [{ change: { kind: "gate.rules", name: gate, env: "prod", rules: rules(5) }, runAt: "2026-12-01T09:00:00" }, 400, "VALIDATION", "runAt"],
      [{ change: { kind: "gate.rules", name: gate, env: "prod", rules: rules(5) } }, 400, "VALIDATION", "runAt"],
      [{ change: { kind: "gate.rules", name: gate, env: "prod", rules: rules(5) }, runAt: at(now + HOUR), steps: [gateStep(gate, 5, now + HOUR)] }, 400, "VALIDATION", "steps"],
      [{ steps: [gateStep(gate, 5, now + 2 * HOUR), gateStep(gate, 25, now + HOUR)] }, 400, "VALIDATION", "steps[1].runAt"],
      [{ steps: [gateStep(gate, 5, now + HOUR), gateStep("no-such-gate", 25, now + 2 * HOUR)] }, 404, "NOT_FOUND", "steps[1].change"],
      [{ steps: [] }, 400, "VALIDATION", "steps"],
      [{ change: { kind: "gate.rules", name: gate, env: "prod", rules: rules(5) }, runAt: at(now + HOUR), when: "later" }, 400, "VALIDATION", "when"],
    ];
    for (const [body, status, code, field] of cases) {
      const res = await api("", { body });
      expect([JSON.stringify(body), res.status, res.body.code]).toEqual([JSON.stringify(body), status, code]);
      const err = expectErrorShape(res.body);
      if (field) expect(`${err.detail}`).toContain(field);
    }
    expect(await count()).toBe(before);
    // The gate was never published by the checks.
    expect((await gateRulesOn(gate)).version).toBe(1);
  });
});

describe("the approval hook", () => {
  test("an env that requires approval refuses the change when scheduled, and a step whose approval is missing at its time fails", async () => {
    const gate = await newGate();
    const { changes } = ts.server.ctx;
    const asked: { phase: string; env: string | null; holder: string }[] = [];
    // What change requests will install: here prod requires an approval nobody gave.
    changes!.setApprovalCheck(async ({ description, phase, holder }) => {
      asked.push({ phase, env: description.env, holder: holder.type });
      if (description.env === "prod") throw new ApiError("FORBIDDEN", "prod requires an approved change request", "change.env: prod");
    });
    try {
      const refused = await api("", { body: { change: { kind: "gate.rules", name: gate, env: "prod", rules: rules(5) }, runAt: at(now + HOUR) } });
      expect([refused.status, refused.body.code]).toEqual([403, "FORBIDDEN"]);
      const staging = await api("", { body: { change: { kind: "gate.rules", name: gate, env: "staging", rules: rules(5) }, runAt: at(now + HOUR) } });
      expect(staging.status).toBe(201);
      expect(asked).toEqual([
        { phase: "schedule", env: "prod", holder: "schedule" },
        { phase: "schedule", env: "staging", holder: "schedule" },
        // Then, in the schedule's own transaction, the approval is taken for it (one approval, one schedule).
        { phase: "hold", env: "staging", holder: "schedule" },
      ]);
      // Approval turned on for staging after it was scheduled: at its time the step fails, and nothing is published.
      changes!.setApprovalCheck(async ({ phase }) => {
        if (phase === "apply") throw new ApiError("FORBIDDEN", "staging now requires an approved change request");
      });
      now += HOUR;
      expect(await runDue()).toMatchObject([{ scheduleId: staging.body.id, outcome: "failed", error: "staging now requires an approved change request" }]);
      expect((await ts.api(`/api/admin/gates/${gate}`)).body.envs.staging.version).toBe(1);
    } finally {
      changes!.setApprovalCheck(async () => {});
    }
  });

  test("a read-only API token cannot schedule or cancel", async () => {
    const token = (await ts.api("/api/admin/tokens", { body: { name: "sched-ro", access: "read-only" } })).body.token as string;
    const gate = await newGate();
    const res = await api("", { body: { change: { kind: "gate.rules", name: gate, env: "prod", rules: rules(5) }, runAt: at(now + HOUR) }, key: token });
    expect([res.status, res.body.code]).toEqual([403, "FORBIDDEN"]);
    expect((await api("", { key: token })).status).toBe(200);
  });
});

describe("DELETE /api/admin/schedules/{id}", () => {
  test("cancels the pending steps; done steps stay; nothing is left to run", async () => {
    const gate = await newGate();
    const id = (await api("", { body: { steps: [gateStep(gate, 5, now + HOUR), gateStep(gate, 25, now + 2 * HOUR), gateStep(gate, 100, now + 3 * HOUR)] } })).body.id as string;
    now += HOUR;
    await runDue();
    const res = await api(`/${id.slice(0, 12)}`, { method: "DELETE" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, state: "cancelled", nextRunAt: null });
    expect(res.body.steps.map((s: { state: string }) => s.state)).toEqual(["done", "cancelled", "cancelled"]);
    now += 5 * HOUR;
    expect(await runDue()).toEqual([]);
    expect((await gateRulesOn(gate)).rules[0].passPercentage).toBe(5);
    const again = await api(`/${id}`, { method: "DELETE" });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe("VALIDATION");
    const rows = await auditOf(id);
    expect(rows.map((r) => r.action)).toEqual(["schedule.create", "schedule.run", "schedule.cancel"]);
    expect(JSON.parse(rows[2]!.detail!)).toEqual({ steps: [2, 3] });
    expect((await api("/sch_doesnotexist", { method: "DELETE" })).status).toBe(404);
    // Another project's schedule is not found.
    const other = await ts.newProject("Other");
    expect((await ts.api(`/api/admin/schedules/${id}`, { key: other.adminKey })).status).toBe(404);
  });
});

describe("downtime", () => {
  test("a step whose time passed while no server ran runs late on the next start, and says so", async () => {
    const dataDir = tempDir();
    const storeUrl = await freshStoreUrl();
    let clock = now;
    const options = { rolloutsEveryMs: 0, alertsEveryMs: 0, experimentsEveryMs: 0, clock: () => clock, dataDir, store: storeUrl };
    const first = await startTestServer({ ...options, schedulesEveryMs: 0 });
    let second: TestServer | undefined;
    try {
      expect((await first.api("/api/admin/killswitches", { body: { name: "late-switch" } })).status).toBe(201);
      const id = (await first.api("/api/admin/schedules", { body: { change: { kind: "killswitch.set", name: "late-switch", env: "prod", value: true }, runAt: at(clock + 60_000) } })).body.id as string;
      await first.server.stop();
      // Down for three hours past runAt; the next server's own runner (every 50 ms) finds it at once.
      clock += 3 * HOUR;
      second = await startTestServer({ ...options, schedulesEveryMs: 50 });
      const deadline = Date.now() + 20_000;
      let step: any;
      for (;;) {
        step = (await second.api(`/api/admin/schedules/${id}`, { key: first.adminKey })).body.steps?.[0];
        if (step?.state !== "pending" || Date.now() > deadline) break;
        await Bun.sleep(50);
      }
      expect(step).toMatchObject({ state: "done", late: true, lateByMs: 3 * HOUR - 60_000 });
      expect((await second.api("/api/admin/killswitches/late-switch", { key: first.adminKey })).body.envs.prod.value).toBe(true);
      const run = await second.store.one<{ detail: string }>("SELECT detail FROM audit_log WHERE subject_id = ? AND action = 'schedule.run'", id);
      expect(JSON.parse(run!.detail)).toMatchObject({ late: true, lateByMs: 3 * HOUR - 60_000, note: "ran 2 h 59 min late: no server was running at its time" });
    } finally {
      await second?.server.stop();
      rmSync(dataDir, { recursive: true, force: true });
      await dropStore(storeUrl);
    }
  });
});
