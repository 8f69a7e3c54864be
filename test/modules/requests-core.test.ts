import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, expectErrorShape, startTestServer } from "../helpers";

// Change requests (issue 30), the gaps closed after the first cut: rollouts start through a request
// (`rollout.start`), creating a killswitch, gate or config is checked against the policy (and goes through
// `killswitch.create`, `gate.create`, `config.create` when it would publish something), a schedule holds the
// approved request it needs (one schedule per request; cancelling releases it), and every decision is announced.

let ts: TestServer;
let ana: string; // editor, the usual author
let ben: string; // editor, the usual approver
let seq = 0;
const name = (p: string) => `crc-${p}-${++seq}`;
const req = (path: string, init: { method?: string; body?: unknown; key?: string } = {}) => ts.api(`/api/admin/requests${path}`, init);
const auditOf = (subjectId: string) => ts.store.all<{ action: string; actor_email: string; detail: string | null }>("SELECT action, actor_email, detail FROM audit_log WHERE subject_id = ? ORDER BY seq", subjectId);
const eventsOf = (id: string) => ts.store.all<{ type: string; payload: string }>("SELECT type, payload FROM outbox_events WHERE payload LIKE ? ORDER BY seq", `%${id}%`);
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();

async function approvedRequest(changes: unknown[], title = "a change"): Promise<string> {
  const opened = await req("", { key: ana, body: { title, changes } });
  expect(opened.status).toBe(201);
  expect((await req(`/${opened.body.id}/approve`, { method: "POST", key: ben })).status).toBe(200);
  return opened.body.id;
}
async function newGate(): Promise<string> {
  const gate = name("gate");
  expect((await ts.api("/api/admin/gates", { body: { name: gate } })).status).toBe(201);
  return gate;
}

beforeAll(async () => {
  ts = await startTestServer({ schedulesEveryMs: 0, rolloutsEveryMs: 0, alertsEveryMs: 0, experimentsEveryMs: 0 });
  await ts.addMember("ana@example.com", "editor");
  await ts.addMember("ben@example.com", "editor");
  ana = await ts.accessTokenFor("ana@example.com");
  ben = await ts.accessTokenFor("ben@example.com");
  expect((await ts.api("/api/admin/requests/policy", { method: "PUT", body: { envs: { prod: { required: true } } } })).status).toBe(200);
});
afterAll(() => ts.stop());

describe("rollouts through change requests", () => {
  test("a rollout on prod is refused directly, starts through an approved rollout.start request, and then advances and completes without approval", async () => {
    const gate = await newGate();
    const rules = [{ conditions: [], passPercentage: 100 }];
    const input = { gate, env: "prod", rules, stages: [{ percent: 50, minutes: 60 }, { percent: 100, minutes: 0 }] };
    const direct = await ts.api("/api/admin/rollouts", { body: input });
    expect(direct.status).toBe(409);
    expect(expectErrorShape(direct.body).code).toBe("APPROVAL_REQUIRED");
    expect((await ts.api(`/api/admin/rollouts?q=${gate}`)).body).toEqual([]);

    const opened = await req("", { key: ana, body: { title: "Roll out the new checkout", changes: [{ kind: "rollout.start", ...input }] } });
    expect(opened.status).toBe(201);
    expect(opened.body.changes[0]).toMatchObject({ kind: "rollout.start", target: { type: "gate", name: gate }, env: "prod", fingerprint: "version 1", summary: expect.stringContaining("50 %") });
    // A second one, approved against the same version: it goes stale once the first completes.
    const later = await approvedRequest([{ kind: "rollout.start", ...input }], "again");
    expect((await req(`/${opened.body.id}/approve`, { method: "POST", key: ben })).status).toBe(200);
    const applied = await req(`/${opened.body.id}/apply`, { method: "POST", key: ana });
    expect(applied.status).toBe(200);
    expect(applied.body.state).toBe("applied");
    const [rollout] = (await ts.api(`/api/admin/rollouts?q=${gate}`)).body;
    expect(rollout).toMatchObject({ status: "running", stage: 0, percent: 50, env: "prod", createdBy: "ana@example.com" });

    // The rollout was approved with its start: its moves (a person's advance, the completion) need no new request.
    const advanced = await ts.api(`/api/admin/rollouts/${rollout.id}/advance`, { method: "POST", key: ana });
    expect(advanced.status).toBe(200);
    expect(advanced.body).toMatchObject({ stage: 1, percent: 100 });
    const completed = await ts.api(`/api/admin/rollouts/${rollout.id}/advance`, { method: "POST", key: ana });
    expect(completed.status).toBe(200);
    expect(completed.body).toMatchObject({ status: "completed" });
    expect((await ts.api(`/api/admin/gates/${gate}`)).body.envs.prod).toMatchObject({ rules: [expect.objectContaining({ passPercentage: 100 })], version: 2 });

    const stale = await req(`/${later}/apply`, { method: "POST", key: ana });
    expect(stale.status).toBe(409);
    expect(stale.body.detail).toContain("version 1 when opened, version 2 now");
  });

  test("a rollout started through a request is rolled back by the monitor's path without approval", async () => {
    const gate = await newGate();
    const id = await approvedRequest([{ kind: "rollout.start", gate, env: "prod", rules: [{ conditions: [], passPercentage: 100 }] }]);
    expect((await req(`/${id}/apply`, { method: "POST", key: ben })).status).toBe(200);
    const [rollout] = (await ts.api(`/api/admin/rollouts?q=${gate}`)).body;
    const back = await ts.server.ctx.services.rollouts.rollback(ts.projectId, rollout.id, { email: "system", type: "system" }, "regression");
    expect(back.status).toBe("rolled_back");
  });
});

describe("creating on a project whose env requires approval", () => {
  test("a killswitch created inert (off, sub-switches off) is allowed; one created on is refused naming prod and nothing is created", async () => {
    const off = name("ks");
    expect((await ts.api("/api/admin/killswitches", { body: { name: off, switches: { eu: false } } })).status).toBe(201);
    for (const body of [{ value: true }, { switches: { eu: true } }]) {
      const ks = name("ks");
      const res = await ts.api("/api/admin/killswitches", { body: { name: ks, ...body } });
      expect(res.status).toBe(409);
      expect(expectErrorShape(res.body).code).toBe("APPROVAL_REQUIRED");
      expect(res.body.error).toContain("prod");
      expect(res.body.detail).toContain("killswitch.create");
      expect((await ts.api(`/api/admin/killswitches/${ks}`)).status).toBe(404);
    }
  });

  test("a gate created without rules is allowed; with rules or from a template it is refused", async () => {
    await newGate();
    const gate = name("gate");
    const res = await ts.api("/api/admin/gates", { body: { name: gate, rules: [{ conditions: [], passPercentage: 10 }] } });
    expect(res.status).toBe(409);
    expect(expectErrorShape(res.body).code).toBe("APPROVAL_REQUIRED");
    expect(res.body.error).toContain("prod");
    expect(res.body.detail).toContain("gate.create");
    expect((await ts.api(`/api/admin/gates/${gate}`)).status).toBe(404);
  });

  test("a config (its value is served at once on every env) is refused while any env requires approval", async () => {
    const cfg = name("cfg");
    const res = await ts.api("/api/admin/configs", { body: { name: cfg, schema: true, value: { max: 1 } } });
    expect(res.status).toBe(409);
    expect(expectErrorShape(res.body).code).toBe("APPROVAL_REQUIRED");
    expect(res.body.error).toContain("prod");
    expect(res.body.detail).toContain("config.create");
    expect((await ts.api(`/api/admin/configs/${cfg}`)).status).toBe(404);
  });

  test("a segment nobody uses changes nothing served: created directly", async () => {
    expect((await ts.api("/api/admin/segments", { body: { name: name("seg"), attribute: "country", conditions: [] } })).status).toBe(201);
  });

  test("killswitch.create, gate.create and config.create go through a request; absent while no such resource exists, stale once one does", async () => {
    const ks = name("ks");
    const gate = name("gate");
    const cfg = name("cfg");
    const rules = [{ conditions: [], passPercentage: 10 }];
    const changes = [
      { kind: "killswitch.create", name: ks, value: true },
      { kind: "gate.create", name: gate, rules },
      { kind: "config.create", name: cfg, schema: true, value: { max: 3 } },
    ];
    const opened = await req("", { key: ana, body: { title: "new things", changes } });
    expect(opened.status).toBe(201);
    expect(opened.body.changes.map((c: { fingerprint: string; env: unknown; target: unknown }) => [c.fingerprint, c.env, c.target])).toEqual([
      ["absent", null, { type: "killswitch", name: ks }],
      ["absent", null, { type: "gate", name: gate }],
      ["absent", null, { type: "config", name: cfg }],
    ]);
    const twin = await approvedRequest([changes[2]], "the same config");
    expect((await req(`/${opened.body.id}/approve`, { method: "POST", key: ben })).status).toBe(200);
    expect((await req(`/${opened.body.id}/apply`, { method: "POST", key: ben })).status).toBe(200);
    expect((await ts.api(`/api/admin/killswitches/${ks}`)).body.envs.prod).toMatchObject({ value: true, version: 1 });
    expect((await ts.api(`/api/admin/gates/${gate}`)).body.envs.prod.rules).toEqual([expect.objectContaining({ passPercentage: 10 })]);
    expect((await ts.api(`/api/admin/configs/${cfg}`)).body.envs.prod).toMatchObject({ value: { max: 3 }, version: 1 });
    const stale = await req(`/${twin}/apply`, { method: "POST", key: ben });
    expect(stale.status).toBe(409);
    expect(stale.body.detail).toContain("absent when opened");
    // Opening one for a name that exists is refused at once.
    const exists = await req("", { key: ana, body: { title: "dup", changes: [changes[0]] } });
    expect(exists.status).toBe(409);
    expect(exists.body.code).toBe("ALREADY_EXISTS");
  });
});

describe("a schedule holds the approved request it needs", () => {
  test("one approval covers one schedule; the held request cannot be applied, withdrawn or rejected by hand; cancelling releases it; the step applies it", async () => {
    const gate = await newGate();
    const change = { kind: "gate.rules", name: gate, env: "prod", rules: [{ conditions: [], passPercentage: 25 }] };
    const id = await approvedRequest([change], "to 25");
    const first = await ts.api("/api/admin/schedules", { body: { change, runAt: inAnHour() } });
    expect(first.status).toBe(201);
    expect((await req(`/${id}`)).body).toMatchObject({ state: "approved", heldBy: first.body.id });
    expect((await req(`?state=approved&q=to%2025`)).body.find((r: { id: string }) => r.id === id)).toMatchObject({ heldBy: first.body.id });

    const second = await ts.api("/api/admin/schedules", { body: { change, runAt: inAnHour() } });
    expect(second.status).toBe(409);
    expect(second.body.code).toBe("APPROVAL_REQUIRED");
    for (const [action, key] of [["apply", ben], ["withdraw", ana], ["reject", ben]] as const) {
      const res = await req(`/${id}/${action}`, { method: "POST", key });
      expect(res.status).toBe(409);
      expect(expectErrorShape(res.body).code).toBe("CONFLICT");
      expect(res.body.detail).toContain(first.body.id);
    }
    expect((await ts.api(`/api/admin/gates/${gate}`)).body.envs.prod.rules).toEqual([]);

    expect((await ts.api(`/api/admin/schedules/${first.body.id}`, { method: "DELETE" })).status).toBe(200);
    expect((await req(`/${id}`)).body).toMatchObject({ state: "approved", heldBy: null });
    const third = await ts.api("/api/admin/schedules", { body: { change, runAt: inAnHour() } });
    expect(third.status).toBe(201);
    expect((await req(`/${id}`)).body.heldBy).toBe(third.body.id);

    const outcomes = await ts.server.ctx.services.schedules.runDue(Date.now() + 2 * 3_600_000);
    expect(outcomes).toEqual([expect.objectContaining({ scheduleId: third.body.id, outcome: "done" })]);
    expect((await req(`/${id}`)).body).toMatchObject({ state: "applied", heldBy: third.body.id });
    expect((await ts.api(`/api/admin/gates/${gate}`)).body.envs.prod.rules).toEqual(change.rules);
    const audit = await auditOf(id);
    expect(audit.map((r) => r.action)).toEqual(["request.open", "request.approve", "request.hold", "request.release", "request.hold", "request.apply"]);
    expect(JSON.parse(audit[5]!.detail!)).toMatchObject({ holder: { type: "schedule", id: third.body.id } });
    expect(audit[5]!.actor_email).toBe(audit[4]!.actor_email);
    const events = await eventsOf(id);
    expect(events.map((e) => e.type)).toEqual(["request.opened", "request.approved", "request.applied"]);
    expect(JSON.parse(events[2]!.payload)).toMatchObject({ requestId: id, state: "applied", scheduleId: third.body.id });
  });

  test("a ramp needs one approved request per step; each becomes applied when its step runs", async () => {
    const gate = await newGate();
    const step = (p: number) => ({ kind: "gate.rules", name: gate, env: "prod", rules: [{ conditions: [], passPercentage: p }] });
    const at = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();
    const r25 = await approvedRequest([step(25)], "ramp 25");
    const steps = [{ change: step(25), runAt: at(1) }, { change: step(50), runAt: at(2) }];
    const missing = await ts.api("/api/admin/schedules", { body: { steps } });
    expect(missing.status).toBe(409);
    expect(missing.body.code).toBe("APPROVAL_REQUIRED");
    expect((await req(`/${r25}`)).body.heldBy).toBeNull();
    const r50 = await approvedRequest([step(50)], "ramp 50");
    const ramp = await ts.api("/api/admin/schedules", { body: { steps } });
    expect(ramp.status).toBe(201);
    await ts.server.ctx.services.schedules.runDue(Date.now() + 1.5 * 3_600_000);
    expect((await req(`/${r25}`)).body).toMatchObject({ state: "applied", heldBy: ramp.body.id });
    expect((await req(`/${r50}`)).body).toMatchObject({ state: "approved", heldBy: ramp.body.id });
    await ts.server.ctx.services.schedules.runDue(Date.now() + 2.5 * 3_600_000);
    expect((await req(`/${r50}`)).body.state).toBe("applied");
  });

  test("a step that fails gives its request back (plain approved)", async () => {
    const gate = await newGate();
    const change = { kind: "gate.rules", name: gate, env: "prod", rules: [{ conditions: [], passPercentage: 15 }] };
    const id = await approvedRequest([change], "fails later");
    const scheduled = await ts.api("/api/admin/schedules", { body: { change, runAt: inAnHour() } });
    expect(scheduled.status).toBe(201);
    expect((await ts.api(`/api/admin/gates/${gate}`, { method: "DELETE" })).status).toBe(204);
    const outcomes = await ts.server.ctx.services.schedules.runDue(Date.now() + 2 * 3_600_000);
    expect(outcomes).toEqual([expect.objectContaining({ scheduleId: scheduled.body.id, outcome: "failed" })]);
    expect((await req(`/${id}`)).body).toMatchObject({ state: "approved", heldBy: null });
    expect((await auditOf(id)).map((r) => r.action)).toEqual(["request.open", "request.approve", "request.hold", "request.release"]);
  });

  test("two schedules racing for the same approved request: exactly one gets it", async () => {
    const gate = await newGate();
    const change = { kind: "gate.rules", name: gate, env: "prod", rules: [{ conditions: [], passPercentage: 5 }] };
    const id = await approvedRequest([change], "race");
    const results = await Promise.all([1, 2, 3].map(() => ts.api("/api/admin/schedules", { body: { change, runAt: inAnHour() } })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    const winner = results.find((r) => r.status === 201)!.body.id;
    expect((await req(`/${id}`)).body.heldBy).toBe(winner);
    const schedules = (await ts.api(`/api/admin/schedules?q=${gate}`)).body;
    expect(schedules.map((s: { id: string }) => s.id)).toEqual([winner]);
  });
});

describe("connector events for every decision", () => {
  test("request.withdrawn and request.stale are written to the outbox with the state change", async () => {
    const gate = await newGate();
    const change = { kind: "gate.rules", name: gate, env: "prod", rules: [{ conditions: [], passPercentage: 1 }] };
    const opened = await req("", { key: ana, body: { title: "withdrawn one", changes: [change] } });
    expect((await req(`/${opened.body.id}/withdraw`, { method: "POST", key: ana })).status).toBe(200);
    const withdrawn = (await eventsOf(opened.body.id)).find((e) => e.type === "request.withdrawn");
    expect(withdrawn).toBeDefined();
    expect(JSON.parse(withdrawn!.payload)).toMatchObject({ requestId: opened.body.id, title: "withdrawn one", state: "withdrawn", actor: "ana@example.com" });

    const stale = await approvedRequest([change], "stale one");
    const mover = await approvedRequest([{ ...change, rules: [{ conditions: [], passPercentage: 2 }] }], "mover");
    expect((await req(`/${mover}/apply`, { method: "POST", key: ben })).status).toBe(200);
    expect((await req(`/${stale}/apply`, { method: "POST", key: ben })).status).toBe(409);
    const event = (await eventsOf(stale)).find((e) => e.type === "request.stale");
    expect(event).toBeDefined();
    expect(JSON.parse(event!.payload)).toMatchObject({ requestId: stale, title: "stale one", state: "stale", actor: "ben@example.com", note: expect.stringContaining("version 1 when opened") });
  });
});

describe("what the later kinds show beside their change", () => {
  test("rollout.start shows the gate's rules published now; a creation shows nothing published; the kinds list names them all", async () => {
    const gate = await newGate();
    const rules = [{ conditions: [], passPercentage: 100 }];
    const rollout = await req("", { key: ana, body: { title: "roll out", changes: [{ kind: "rollout.start", gate, env: "prod", rules }] } });
    expect(rollout.status, JSON.stringify(rollout.body)).toBe(201);
    const one = await req(`/${rollout.body.id}`, { key: ana });
    expect(one.body.changes[0].current).toEqual({ rules: [] });
    expect(one.body.changes[0].proposed).toMatchObject({ gate, env: "prod", rules });

    const config = name("config");
    const created = await req("", { key: ana, body: { title: "new config", changes: [{ kind: "config.create", name: config, schema: { type: "object" }, value: { max: 5 } }] } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const got = await req(`/${created.body.id}`, { key: ana });
    expect(got.body.changes[0]).toMatchObject({ current: null, proposed: { name: config, value: { max: 5 } } });

    const kinds = (await req("/kinds", { key: ana })).body as { kind: string; description: string; diff: boolean }[];
    for (const kind of ["rollout.start", "killswitch.create", "gate.create", "config.create", "definitions.apply"]) {
      expect(kinds.find((k) => k.kind === kind), kind).toMatchObject({ description: expect.stringMatching(/\w/), diff: true });
    }
  });
});

describe("rebasing a stale request", () => {
  test("its author rebases it onto what is published now: the same changes, new fingerprints, approvals cleared, open again; then approved and applied", async () => {
    const gate = await newGate();
    const mine = await approvedRequest([{ kind: "gate.rules", name: gate, env: "prod", rules: [{ conditions: [], passPercentage: 10 }] }], "ten percent");
    const other = await approvedRequest([{ kind: "gate.rules", name: gate, env: "prod", rules: [{ conditions: [], passPercentage: 5 }] }], "five percent");
    expect((await req(`/${other}/apply`, { method: "POST", key: ben })).status).toBe(200);
    expect((await req(`/${mine}/apply`, { method: "POST", key: ana })).status).toBe(409);
    expect((await req(`/${mine}`, { key: ana })).body).toMatchObject({ state: "stale", approvals: [{ by: "ben@example.com" }] });

    // Not its author: refused; not stale: refused; neither changes it.
    const notAuthor = await req(`/${mine}/rebase`, { method: "POST", key: ben });
    expect(notAuthor.status).toBe(403);
    expect(expectErrorShape(notAuthor.body).code).toBe("FORBIDDEN");
    expect((await req(`/${other}/rebase`, { method: "POST", key: ben })).status).toBe(400);

    const rebased = await req(`/${mine}/rebase`, { method: "POST", key: ana });
    expect(rebased.status).toBe(200);
    expect(rebased.body).toMatchObject({ state: "open", approvals: [], note: null, changes: [{ kind: "gate.rules", fingerprint: "version 2" }] });
    expect(rebased.body.changes[0].change.rules).toEqual([{ conditions: [], passPercentage: 10 }]);
    expect((await auditOf(mine)).map((a) => a.action)).toContain("request.rebase");
    expect((await eventsOf(mine)).map((e) => e.type)).toContain("request.rebased");
    // The old approval does not count: the author still cannot approve; another person does, and it applies.
    expect((await req(`/${mine}/apply`, { method: "POST", key: ana })).status).toBe(400);
    expect((await req(`/${mine}/approve`, { method: "POST", key: ben })).status).toBe(200);
    expect((await req(`/${mine}/apply`, { method: "POST", key: ana })).body).toMatchObject({ state: "applied" });
    expect((await ts.api(`/api/admin/gates/${gate}`)).body.envs.prod).toMatchObject({ rules: [expect.objectContaining({ passPercentage: 10 })], version: 3 });
  });
});
