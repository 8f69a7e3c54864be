import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, expectErrorShape, startTestServer } from "../helpers";

// Change requests (issue 30, four eyes): the approval policy, opening, approving (people only, not the author, with
// the role to make the change), applying exactly as approved in one transaction, staleness, the direct-publish guard
// with its killswitch bypass, and the schedules' approval hook.

let ts: TestServer;
let ana: string; // editor, the usual author
let ben: string; // editor, the usual approver
let vic: string; // viewer
let apiToken: string;
let seq = 0;
const name = (p: string) => `cr-${p}-${++seq}`;
const req = (path: string, init: { method?: string; body?: unknown; key?: string } = {}) => ts.api(`/api/admin/requests${path}`, init);
const setPolicy = (body: unknown) => ts.api("/api/admin/requests/policy", { method: "PUT", body });
const auditOf = (subjectId: string) => ts.store.all<{ action: string; actor_email: string; detail: string | null }>("SELECT action, actor_email, detail FROM audit_log WHERE subject_id = ? ORDER BY seq", subjectId);
const configOn = async (cfg: string, env = "prod") => (await ts.api(`/api/admin/configs/${cfg}`)).body.envs[env];

async function newConfig(): Promise<string> {
  const cfg = name("cfg");
  // A new config's value is served at once: with prod requiring approval it is created through a request.
  const id = await approvedRequest([{ kind: "config.create", name: cfg, schema: true, value: { max: 10 } }], `create ${cfg}`);
  expect((await req(`/${id}/apply`, { method: "POST", key: ben })).status).toBe(200);
  return cfg;
}
async function approvedRequest(changes: unknown[], title = "a change"): Promise<string> {
  const opened = await req("", { key: ana, body: { title, changes } });
  expect(opened.status).toBe(201);
  expect((await req(`/${opened.body.id}/approve`, { method: "POST", key: ben })).status).toBe(200);
  return opened.body.id;
}

beforeAll(async () => {
  ts = await startTestServer({ schedulesEveryMs: 0, rolloutsEveryMs: 0, alertsEveryMs: 0, experimentsEveryMs: 0 });
  await ts.addMember("ana@example.com", "editor");
  await ts.addMember("ben@example.com", "editor");
  await ts.addMember("vic@example.com", "viewer");
  ana = await ts.accessTokenFor("ana@example.com");
  ben = await ts.accessTokenFor("ben@example.com");
  vic = await ts.accessTokenFor("vic@example.com");
  apiToken = (await ts.api("/api/admin/tokens", { body: { name: "ci", access: "read-write" } })).body.token;
  // Off until turned on.
  expect((await ts.api("/api/admin/requests/policy")).body).toEqual({ envs: {}, killswitchBypass: false });
  const policy = await setPolicy({ envs: { prod: { required: true } }, killswitchBypass: false });
  expect(policy.status).toBe(200);
  expect(policy.body).toEqual({ envs: { prod: { required: true, approvals: 1 } }, killswitchBypass: false });
});
afterAll(() => ts.stop());

describe("change requests", () => {
  test("the policy is audited and takes a manage permission", async () => {
    const rows = await ts.store.all<{ action: string }>("SELECT action FROM audit_log WHERE action = 'request.policy'");
    expect(rows.length).toBe(1);
    const denied = await ts.api("/api/admin/requests/policy", { method: "PUT", key: ana, body: { killswitchBypass: true } });
    expect(denied.status).toBe(403);
    const unknown = await ts.api("/api/admin/requests/policy", { method: "PUT", body: { envs: { prod: { required: true } }, extra: 1 } });
    expect(unknown.status).toBe(400);
  });

  test("a prod config change with approval on cannot be applied by its author, is applied by an approver exactly as approved, goes stale when the config moves in between", async () => {
    const cfg = await newConfig();
    const change = { kind: "config.publish", name: cfg, env: "prod", value: { max: 50 } };
    const opened = await req("", { key: ana, body: { title: "Raise the limit", reason: "Black Friday", changes: [change] } });
    expect(opened.status).toBe(201);
    const id = opened.body.id;
    expect(id).toMatch(/^cr_/);
    expect(opened.body).toMatchObject({ state: "open", title: "Raise the limit", reason: "Black Friday", author: "ana@example.com", approvalsRequired: 1, approvals: [] });
    expect(opened.body.changes).toEqual([
      { position: 1, change, kind: "config.publish", target: { type: "config", name: cfg }, env: "prod", summary: expect.any(String), fingerprint: "version 1", current: { value: { max: 10 }, rules: [] }, proposed: { value: { max: 50 }, rules: [] } },
    ]);

    // The author cannot approve their own, nor apply it unapproved.
    const self = await req(`/${id}/approve`, { method: "POST", key: ana });
    expect(self.status).toBe(403);
    expect(expectErrorShape(self.body).code).toBe("FORBIDDEN");
    const early = await req(`/${id}/apply`, { method: "POST", key: ana });
    expect(early.status).toBe(400);
    expect((await configOn(cfg)).value).toEqual({ max: 10 });

    const approved = await req(`/${id}/approve`, { method: "POST", key: ben });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ state: "approved", approvals: [{ by: "ben@example.com" }] });
    const applied = await req(`/${id}/apply`, { method: "POST", key: ana });
    expect(applied.status).toBe(200);
    expect(applied.body).toMatchObject({ state: "applied", decidedBy: "ana@example.com" });
    expect(await configOn(cfg)).toMatchObject({ value: { max: 50 }, version: 2 });
    expect((await auditOf(id)).map((r) => r.action)).toEqual(["request.open", "request.approve", "request.apply"]);
    const events = await ts.store.all<{ type: string }>("SELECT type FROM outbox_events WHERE payload LIKE ? ORDER BY seq", `%${id}%`);
    expect(events.map((e) => e.type)).toEqual(["request.opened", "request.approved", "request.applied"]);

    // Stale: approved against version 2, but the config moved (another request) before it was applied.
    const second = await approvedRequest([{ ...change, value: { max: 70 } }], "to 70");
    await req(`/${await approvedRequest([{ ...change, value: { max: 60 } }], "to 60")}/apply`, { method: "POST", key: ben });
    expect((await configOn(cfg)).value).toEqual({ max: 60 });
    const stale = await req(`/${second}/apply`, { method: "POST", key: ana });
    expect(stale.status).toBe(409);
    expect(expectErrorShape(stale.body).code).toBe("CONFLICT");
    expect(stale.body.detail).toContain("version 2 when opened, version 3 now");
    expect(await configOn(cfg)).toMatchObject({ value: { max: 60 }, version: 3 });
    expect((await req(`/${second}`)).body).toMatchObject({ state: "stale" });
    expect((await auditOf(second)).map((r) => r.action)).toEqual(["request.open", "request.approve", "request.stale"]);
  });

  test("tokens and admin keys can open but not approve; a viewer cannot approve; only the author withdraws", async () => {
    const cfg = await newConfig();
    const opened = await req("", { key: apiToken, body: { title: "from CI", changes: [{ kind: "config.publish", name: cfg, env: "prod", value: { max: 1 } }] } });
    expect(opened.status).toBe(201);
    for (const key of [apiToken, ts.adminKey, vic]) {
      const res = await req(`/${opened.body.id}/approve`, { method: "POST", key });
      expect(res.status).toBe(403);
      expect(expectErrorShape(res.body).code).toBe("FORBIDDEN");
    }
    expect((await req(`/${opened.body.id}/reject`, { method: "POST", key: apiToken })).status).toBe(403);
    expect((await req(`/${opened.body.id}/withdraw`, { method: "POST", key: ben })).status).toBe(403);
    const withdrawn = await req(`/${opened.body.id}/withdraw`, { method: "POST", key: apiToken });
    expect(withdrawn.status).toBe(200);
    expect(withdrawn.body.state).toBe("withdrawn");
    const listed = await req("?state=withdrawn&q=from%20CI");
    expect(listed.body.map((r: { id: string }) => r.id)).toEqual([opened.body.id]);
    const rejected = await req("", { key: ana, body: { title: "no", changes: [{ kind: "config.publish", name: cfg, env: "prod", value: { max: 2 } }] } });
    const r = await req(`/${rejected.body.id}/reject`, { method: "POST", key: ben, body: { note: "not now" } });
    expect(r.body).toMatchObject({ state: "rejected", decidedBy: "ben@example.com", note: "not now" });
  });

  test("direct publishes are refused on an env that requires approval and allowed on the others", async () => {
    const cfg = await newConfig();
    const prod = await ts.api(`/api/admin/configs/${cfg}`, { method: "PATCH", body: { prod: { max: 99 } } });
    expect(prod.status).toBe(409);
    expect(expectErrorShape(prod.body)).toMatchObject({ code: "APPROVAL_REQUIRED" });
    expect(prod.body.detail).toContain("change request");
    expect((await configOn(cfg)).value).toEqual({ max: 10 });
    expect((await ts.api(`/api/admin/configs/${cfg}`, { method: "PATCH", body: { dev: { max: 99 } } })).status).toBe(200);
    expect((await configOn(cfg, "dev")).value).toEqual({ max: 99 });

    const gate = name("gate");
    expect((await ts.api("/api/admin/gates", { body: { name: gate } })).status).toBe(201);
    const rules = [{ conditions: [], passPercentage: 50 }];
    expect((await ts.api(`/api/admin/gates/${gate}/rules`, { method: "PUT", body: { env: "prod", rules } })).status).toBe(409);
    expect((await ts.api(`/api/admin/gates/${gate}/rules`, { method: "PUT", body: { env: "staging", rules } })).status).toBe(200);
    const rollout = await ts.api("/api/admin/rollouts", { body: { gate, env: "prod", rules: [{ conditions: [], passPercentage: 100 }] } });
    expect(rollout.status).toBe(409);
    expect(rollout.body.code).toBe("APPROVAL_REQUIRED");
    expect((await ts.api("/api/admin/rollouts", { body: { gate, env: "dev", rules: [{ conditions: [], passPercentage: 100 }] } })).status).toBe(201);

    const segment = name("seg");
    expect((await ts.api("/api/admin/segments", { body: { name: segment, attribute: "country", conditions: [] } })).status).toBeLessThan(300);
    const seg = await ts.api(`/api/admin/segments/${segment}`, { method: "PATCH", body: { description: "changed" } });
    expect(seg.status).toBe(409);
    expect(seg.body.code).toBe("APPROVAL_REQUIRED");
  });

  test("a config schema change (every env) is refused directly and goes through a request as config.schema", async () => {
    const cfg = await newConfig();
    const schema = { type: "object", properties: { max: { type: "integer" } } };
    const direct = await ts.api(`/api/admin/configs/${cfg}`, { method: "PATCH", body: { schema } });
    expect(direct.status).toBe(409);
    expect(direct.body.code).toBe("APPROVAL_REQUIRED");
    const id = await approvedRequest([{ kind: "config.schema", name: cfg, schema }], "typed limits");
    const r = await req(`/${id}`);
    expect(r.body.changes[0]).toMatchObject({ kind: "config.schema", env: null, summary: `${cfg}: new schema`, fingerprint: expect.stringMatching(/^schema /) });
    expect((await req(`/${id}/apply`, { method: "POST", key: ben })).status).toBe(200);
    expect((await ts.api(`/api/admin/configs/${cfg}`)).body.schema).toEqual(schema);
  });

  test("a killswitch toggle bypasses approval with a reason when the project allows it, recorded as a bypass", async () => {
    const ks = name("ks");
    expect((await ts.api("/api/admin/killswitches", { body: { name: ks } })).status).toBe(201);
    const toggle = (body: unknown) => ts.api(`/api/admin/killswitches/${ks}/toggle`, { body });
    expect((await toggle({ env: "prod", value: true, reason: "fire" })).status).toBe(409);
    await setPolicy({ envs: { prod: { required: true } }, killswitchBypass: true });
    try {
      const noReason = await toggle({ env: "prod", value: true });
      expect(noReason.status).toBe(409);
      expect(noReason.body.detail).toContain("reason");
      const ok = await toggle({ env: "prod", value: true, reason: "checkout is down" });
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ value: true, version: 2 });
      const bypass = await ts.store.all<{ env: string; detail: string; actor_email: string }>("SELECT env, detail, actor_email FROM audit_log WHERE action = 'request.bypass' AND subject_id = ?", ok.body.id);
      expect(bypass.length).toBe(1);
      expect(bypass[0]!.env).toBe("prod");
      expect(JSON.parse(bypass[0]!.detail)).toEqual({ resource: "killswitches", reason: "checkout is down" });
    } finally {
      await setPolicy({ envs: { prod: { required: true } }, killswitchBypass: false });
    }
  });

  test("a concurrent apply of the same request applies it once", async () => {
    const cfg = await newConfig();
    const id = await approvedRequest([{ kind: "config.publish", name: cfg, env: "prod", value: { max: 5 } }]);
    const results = await Promise.all([1, 2, 3].map(() => req(`/${id}/apply`, { method: "POST", key: ben })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400]);
    expect(await configOn(cfg)).toMatchObject({ value: { max: 5 }, version: 2 });
    expect((await auditOf(id)).filter((r) => r.action === "request.apply").length).toBe(1);
  });

  test("one request shows each change's current (published now) and proposed in the same shape; current follows a later publish; the list leaves both out", async () => {
    const gate = name("gate");
    expect((await ts.api("/api/admin/gates", { body: { name: gate } })).status).toBe(201);
    const proposed = [{ conditions: [], passPercentage: 50 }];
    const opened = await req("", { key: ana, body: { title: "half of prod", changes: [{ kind: "gate.rules", name: gate, env: "prod", rules: proposed }] } });
    expect(opened.status).toBe(201);
    const one = await req(`/${opened.body.id}`);
    expect(one.status).toBe(200);
    expect(one.body.changes[0]).toMatchObject({ kind: "gate.rules", current: [], proposed });
    // Another request publishes on the same gate and env: what the first one shows as published now follows.
    const other = [{ conditions: [], passPercentage: 10 }];
    const otherId = await approvedRequest([{ kind: "gate.rules", name: gate, env: "prod", rules: other }], "a tenth");
    expect((await req(`/${otherId}/apply`, { method: "POST", key: ben })).status).toBe(200);
    expect((await req(`/${opened.body.id}`)).body.changes[0]).toMatchObject({ current: other, proposed });
    // Applied: what it replaced is in the audit trail, not computed again.
    const applied = (await req(`/${otherId}`)).body.changes[0];
    expect(applied.current).toBeUndefined();
    expect(applied.proposed).toEqual(other);
    expect(applied.currentNote).toContain("audit");
    // The list stays cheap: neither is read there.
    const listed = (await req(`?q=${encodeURIComponent("half of prod")}`)).body;
    expect(listed.length).toBeGreaterThan(0);
    for (const r of listed) for (const c of r.changes) expect([c.current, c.proposed]).toEqual([undefined, undefined]);
  });

  test("current and proposed for configs (value and rules, schema), killswitches (flat and sub-switch) and segments (small lists in full, big ones as counts and bounded ids added and removed)", async () => {
    const cfg = await newConfig();
    const ks = name("ks");
    expect((await ts.api("/api/admin/killswitches", { body: { name: ks } })).status).toBe(201);
    const small = name("seg");
    expect((await ts.api("/api/admin/segments", { body: { name: small, ids: ["u-1", "u-2"] } })).status).toBe(201);
    const big = name("seg");
    const many = Array.from({ length: 300 }, (_, i) => `b-${i}`);
    expect((await ts.api("/api/admin/segments", { body: { name: big, ids: many } })).status).toBe(201);
    const schema = { type: "object", properties: { max: { type: "integer" } } };
    const opened = await req("", {
      key: ana,
      body: {
        title: "five kinds",
        changes: [
          { kind: "config.publish", name: cfg, env: "prod", value: { max: 20 } },
          { kind: "config.schema", name: cfg, schema },
          { kind: "killswitch.set", name: ks, env: "prod", value: true },
          { kind: "killswitch.set", name: ks, env: "prod", switchKey: "eu", value: true },
          { kind: "segment.update", name: small, patch: { description: "beta", addIds: ["u-3"] } },
          { kind: "segment.update", name: big, patch: { addIds: ["n-1"], removeIds: ["b-0"] } },
        ],
      },
    });
    expect(opened.status).toBe(201);
    const changes = (await req(`/${opened.body.id}`)).body.changes.map((c: { current: unknown; proposed: unknown }) => ({ current: c.current, proposed: c.proposed }));
    expect(changes).toEqual([
      { current: { value: { max: 10 }, rules: [] }, proposed: { value: { max: 20 }, rules: [] } },
      { current: true, proposed: schema },
      { current: { value: false }, proposed: { value: true } },
      { current: { switchKey: "eu", value: null }, proposed: { switchKey: "eu", value: true } },
      { current: { description: "", ids: ["u-1", "u-2"] }, proposed: { description: "beta", ids: ["u-1", "u-2", "u-3"] } },
      { current: { ids: { count: 300 } }, proposed: { ids: { count: 300, added: ["n-1"], removed: ["b-0"] } } },
    ]);
  });

  test("the kinds of change a request can hold, with a description and their fields", async () => {
    const kinds = await req("/kinds");
    expect(kinds.status).toBe(200);
    const byName = new Map(kinds.body.map((k: { kind: string }) => [k.kind, k]));
    for (const k of ["config.publish", "config.schema", "gate.rules", "killswitch.set", "segment.update"]) expect(byName.has(k)).toBe(true);
    expect(byName.get("gate.rules")).toEqual({ kind: "gate.rules", target: "gate", description: expect.any(String), fields: ["name", "env", "rules"], required: ["name", "env", "rules"], diff: true });
    expect(byName.get("config.schema")).toMatchObject({ target: "config", fields: ["name", "schema"] });
  });

  test("scheduling a change on an env that requires approval needs an approved request holding it; the scheduler then applies it", async () => {
    const gate = name("gate");
    expect((await ts.api("/api/admin/gates", { body: { name: gate } })).status).toBe(201);
    const change = { kind: "gate.rules", name: gate, env: "prod", rules: [{ conditions: [], passPercentage: 25 }] };
    const runAt = new Date(Date.now() + 3_600_000).toISOString();
    const refused = await ts.api("/api/admin/schedules", { body: { change, runAt } });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("APPROVAL_REQUIRED");
    await approvedRequest([change], "ramp to 25");
    const scheduled = await ts.api("/api/admin/schedules", { body: { change, runAt } });
    expect(scheduled.status).toBe(201);
    const outcomes = await ts.server.ctx.services.schedules.runDue(Date.now() + 2 * 3_600_000);
    expect(outcomes).toEqual([expect.objectContaining({ scheduleId: scheduled.body.id, outcome: "done" })]);
    expect((await ts.api(`/api/admin/gates/${gate}`)).body.envs.prod.rules).toEqual(change.rules);
  });
});
