import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import { ENVS } from "../../src/lib/envs";
import { createClient } from "../../src/sdk/index";
import { type TestServer, expectErrorShape, startTestServer } from "../helpers";

// Segments named beyond gate rules (issue 29, segments part): guarded rollouts' rules, experiments
// filtered by a gate naming a segment, and gate templates. Each use is priced, carried in the
// snapshot, blocks the segment's DELETE (409 naming it) and is republished when the segment changes.

let ts: TestServer;

beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.stop();
});

const segments = (path = "", init?: { method?: string; body?: unknown }) => ts.api(`/api/admin/segments${path}`, init);
const revisions = async () => {
  const rows = await ts.store.all<{ env: string; revision: number }>("SELECT env, revision FROM env_revisions WHERE project_id = ?", ts.projectId);
  return Object.fromEntries(ENVS.map((env) => [env, Number(rows.find((r) => r.env === env)?.revision ?? 0)]));
};
const ofrep = async (key: string, context: Record<string, unknown>) => {
  const res = await fetch(`${ts.url}/ofrep/v1/evaluate/flags/${key}`, { method: "POST", headers: { "x-sdk-key": ts.serverKey, "content-type": "application/json" }, body: JSON.stringify({ context }) });
  return { status: res.status, body: (await res.json()) as any };
};
const snapshot = async (env = "prod") => (await ts.api(`/api/sdk/v1/snapshot?env=${env}`, { key: ts.serverKey })).body;
const inSegment = (segment: string, op = "in_segment") => [{ conditions: [{ attr: "user_id", op, value: segment }], passPercentage: 100 }];

describe("segments in guarded rollouts' rules", () => {
  test("a rollout's rules name a segment: units in the stage are evaluated with it, the snapshot carries it, DELETE is 409 naming the rollout, an edit republishes the env", async () => {
    expect((await segments("", { body: { name: "rollout-pilots", ids: ["p-1", "p-2"] } })).status).toBe(201);
    expect((await ts.api("/api/admin/gates", { body: { name: "new-checkout", rules: [] } })).status).toBe(201);
    // No published rule names the segment: the snapshot has no segments section yet.
    expect((await snapshot("staging")).segments).toBeUndefined();

    const created = await ts.api("/api/admin/rollouts", { body: { gate: "new-checkout", env: "staging", rules: inSegment("rollout-pilots"), stages: [{ percent: 100, minutes: 600 }] } });
    expect(created.status).toBe(201);
    const rolloutId = created.body.id as string;

    // Every unit is in the 100 % stage: the rollout's rules decide, segment included.
    expect((await ofrep("new-checkout", { user_id: "p-1", env: "staging" })).body).toMatchObject({ value: true, reason: "SPLIT" });
    expect((await ofrep("new-checkout", { user_id: "stranger", env: "staging" })).body.value).toBe(false);
    const snap = await snapshot("staging");
    expect(snap.segments).toEqual({ "rollout-pilots": { attribute: "user_id", ids: ["p-1", "p-2"] } });
    expect(snap.rollouts[rolloutId].rules).toEqual(inSegment("rollout-pilots"));
    // Other envs keep their bytes: no segments section.
    expect((await snapshot("prod")).segments).toBeUndefined();

    const refused = await segments("/rollout-pilots", { method: "DELETE" });
    expect(refused.status).toBe(409);
    expect(expectErrorShape(refused.body)).toMatchObject({ code: "ALREADY_EXISTS", error: expect.stringContaining(`rollout ${rolloutId}`) });
    expect((await segments("/rollout-pilots")).status).toBe(200);
    // A rename would orphan the rollout's rules.
    expect((await segments("/rollout-pilots", { method: "PATCH", body: { name: "renamed" } })).status).toBe(400);

    const before = await revisions();
    expect((await segments("/rollout-pilots", { method: "PATCH", body: { ids: ["p-1", "p-2", "p-3"] } })).status).toBe(200);
    expect(await revisions()).toEqual({ ...before, staging: before.staging! + 1 });
    expect((await ofrep("new-checkout", { user_id: "p-3", env: "staging" })).body.value).toBe(true);
    const audit = (await auditOf(ts.store, ts.projectId, 1000)).find((r) => r.action === "segment.update" && r.subjectName === "rollout-pilots");
    expect(audit!.detail).toMatchObject({ fields: ["ids"], envs: ["staging"] });

    // Rolled back: the segment is free again, and the snapshot stops carrying it.
    expect((await ts.api(`/api/admin/rollouts/${rolloutId}/rollback`, { body: {} })).status).toBe(200);
    expect((await snapshot("staging")).segments).toBeUndefined();
    expect((await segments("/rollout-pilots", { method: "DELETE" })).status).toBe(204);
  });

  test("a rollout naming a segment that does not exist is refused naming the field; its cost counts the segment's conditions", async () => {
    expect((await ts.api("/api/admin/gates", { body: { name: "cost-gate", rules: [] } })).status).toBe(201);
    const missing = await ts.api("/api/admin/rollouts", { body: { gate: "cost-gate", env: "prod", rules: inSegment("no-such"), stages: [{ percent: 100, minutes: 600 }] } });
    expect(missing.status).toBe(400);
    expect(expectErrorShape(missing.body)).toMatchObject({ code: "VALIDATION", detail: expect.stringContaining("rules[0].conditions[0].value: no segment named no-such") });

    const lists = (n: number) => Array.from({ length: n }, (_, i) => ({ attr: `a${i}`, op: "in", value: Array.from({ length: 1000 }, (_, j) => `v${j}`) }));
    // 40 lists of 1,000: 5,040 units per evaluation of the segment; 4 conditions naming it: 20,164, over the 20,000 bound.
    expect((await segments("", { body: { name: "heavy-rollout", conditions: lists(40) } })).status).toBe(201);
    const naming = (n: number) => [{ conditions: Array.from({ length: n }, () => ({ attr: "user_id", op: "in_segment", value: "heavy-rollout" })), passPercentage: 100 }];
    const costly = await ts.api("/api/admin/rollouts", { body: { gate: "cost-gate", env: "prod", rules: naming(4), stages: [{ percent: 100, minutes: 600 }] } });
    expect(costly.status).toBe(400);
    expect(expectErrorShape(costly.body)).toMatchObject({ code: "VALIDATION", detail: expect.stringContaining("over the limit of 20000") });
    // 3 × 5,041 + 30 lists of 1,000 (3,780): 18,903, within it.
    const fine = await ts.api("/api/admin/rollouts", { body: { gate: "cost-gate", env: "prod", rules: [...naming(3), { conditions: lists(30), passPercentage: 100 }], stages: [{ percent: 100, minutes: 600 }] } });
    expect(fine.status).toBe(201);
    // 50 lists: 3 × 6,301 + 3,780 = 22,683: a costlier segment would take the running rollout's rules over the bound, refused naming it.
    const refused = await segments("/heavy-rollout", { method: "PATCH", body: { conditions: lists(50) } });
    expect(refused.status).toBe(400);
    expect(expectErrorShape(refused.body)).toMatchObject({ code: "VALIDATION", detail: expect.stringContaining(`conditions: rollout ${fine.body.id}`) });
    expect((await ts.api(`/api/admin/rollouts/${fine.body.id}/rollback`, { body: {} })).status).toBe(200);
  });
});

describe("segments in experiments' targeting (through the experiment's gate)", () => {
  const HOUR = 3600;
  const exposures = async (experimentId: string) => {
    const from = Math.floor(Date.now() / 1000) - HOUR;
    const r = await ts.server.ctx.services.analytics.series({ projectId: ts.projectId, from, to: from + 2 * HOUR, bucket: 2 * HOUR, measure: { kind: "unique", event: `$exposure:${experimentId}`, filters: [] } });
    return r.rows.reduce((sum, row) => sum + row.v, 0);
  };
  const settles = async (read: () => Promise<number>, expected: number) => {
    const deadline = Date.now() + 10_000;
    let n = await read();
    while (n < expected && Date.now() < deadline) {
      await Bun.sleep(50);
      n = await read();
    }
    await Bun.sleep(100);
    return read();
  };

  test("an experiment whose gate's rule is in_segment: members are assigned and exposed (SDK and OFREP), non-members get the control and log nothing", async () => {
    const members = Array.from({ length: 40 }, (_, i) => `member-${i}`);
    const strangers = Array.from({ length: 40 }, (_, i) => `stranger-${i}`);
    expect((await segments("", { body: { name: "exp-members", ids: members } })).status).toBe(201);
    expect((await ts.api("/api/admin/gates", { body: { name: "exp-target", rules: inSegment("exp-members") } })).status).toBe(201);
    expect((await ts.api("/api/admin/universes", { body: { name: "seg-web" }, headers: { "x-project-id": ts.projectId } })).status).toBe(201);
    const created = await ts.api("/api/admin/experiments", {
      body: { name: "seg-exp", universe: "seg-web", gate: "exp-target", allocation: [0, 10_000], variants: [{ key: "control", weight: 50, value: "old" }, { key: "treat", weight: 50, value: "new" }] },
    });
    expect(created.status).toBe(201);
    const experimentId = created.body.id as string;
    expect((await ts.api(`/api/admin/experiments/${experimentId}/start`, { method: "POST" })).status).toBe(200);

    for (const id of members) {
      const remote = await ofrep("seg-exp", { targetingKey: id });
      expect({ id, reason: remote.body.reason }).toEqual({ id, reason: "SPLIT" });
    }
    for (const id of strangers) expect((await ofrep("seg-exp", { targetingKey: id })).body).toMatchObject({ value: "old", reason: "DEFAULT", variant: "control" });
    // The server logged one exposure per member, none for the others.
    expect(await settles(() => exposures(experimentId), members.length)).toBe(members.length);

    const svc = createClient({ baseUrl: ts.url, sdkKey: ts.serverKey, env: "prod", stream: false, flushIntervalMs: 60_000 });
    try {
      await svc.ready();
      // The snapshot carries the segment for the experiment's gate.
      expect(Object.keys(svc.snapshot()!.segments ?? {})).toContain("exp-members");
      for (const id of members) {
        const got = svc.getVariant("seg-exp", { user_id: id });
        expect({ id, reason: got.reason }).toEqual({ id, reason: "assigned" });
        expect(got.variant).toBe((await ofrep("seg-exp", { user_id: id })).body.variant);
      }
      for (const id of strangers) expect(svc.getVariant("seg-exp", { user_id: id })).toEqual({ variant: null, value: "old", reason: "targeting" });
    } finally {
      await svc.close();
    }

    // The segment stays while the gate names it; a new member is in the experiment as soon as the segment changes.
    expect((await segments("/exp-members", { method: "DELETE" })).status).toBe(409);
    expect((await segments("/exp-members", { method: "PATCH", body: { ids: [...members, "late-member"] } })).status).toBe(200);
    expect((await ofrep("seg-exp", { targetingKey: "late-member" })).body.reason).toBe("SPLIT");
  });
});

describe("gate templates built from segments", () => {
  const templates = (path = "", init?: { method?: string; body?: unknown }) => ts.api(`/api/admin/gates/templates${path}`, init);

  test("a template holds in_segment conditions of existing segments; POST {segment} builds the one-condition template; a gate starts from it", async () => {
    expect((await segments("", { body: { name: "tpl-vips", attribute: "account_id", ids: ["acc-1", "acc-2"] } })).status).toBe(201);
    expect((await segments("", { body: { name: "tpl-staff", conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }] } })).status).toBe(201);

    // Conditions naming a segment: checked against the project's segments.
    const missing = await templates("", { body: { name: "Ghost members", rules: [{ attr: "user_id", op: "in_segment", value: "no-such" }] } });
    expect(missing.status).toBe(400);
    expect(expectErrorShape(missing.body)).toMatchObject({ code: "VALIDATION", detail: expect.stringContaining("rules[0].value: no segment named no-such") });
    expect((await templates("/Ghost%20members")).status).toBe(404);
    const mixed = await templates("", { body: { name: "Staff not VIP", rules: [{ attr: "email", op: "in_segment", value: "tpl-staff" }, { attr: "account_id", op: "not_in_segment", value: "tpl-vips" }] } });
    expect(mixed.status).toBe(201);

    // The convenience: {name, segment} is one in_segment condition on the segment's attribute.
    const built = await templates("", { body: { name: "VIP accounts", segment: "tpl-vips" } });
    expect(built.status).toBe(201);
    expect((await templates("/VIP%20accounts")).body).toMatchObject({ name: "VIP accounts", category: "segment", builtIn: false, rules: [{ attr: "account_id", op: "in_segment", value: "tpl-vips" }] });
    const audit = (await auditOf(ts.store, ts.projectId, 1000)).find((r) => r.action === "gate.template.create" && r.subjectName === "VIP accounts");
    expect(audit!.detail).toMatchObject({ conditions: 1, segment: "tpl-vips" });
    // By the segment's id too; the condition names it by name.
    const byId = (await segments("/tpl-staff")).body.id as string;
    expect((await templates("", { body: { name: "Staff", segment: byId, description: "Acme people" } })).status).toBe(201);
    expect((await templates("/Staff")).body).toMatchObject({ description: "Acme people", rules: [{ attr: "user_id", op: "in_segment", value: "tpl-staff" }] });
    for (const [body, detail] of [
      [{ name: "Nope", segment: "no-such" }, "segment: no segment named no-such"],
      [{ name: "Both", segment: "tpl-vips", rules: [] }, "segment: a template is built from rules or from a segment"],
      [{ name: "Neither" }, "rules:"],
    ] as const) {
      const res = await templates("", { body });
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(expectErrorShape(res.body)).toMatchObject({ code: "VALIDATION", detail: expect.stringContaining(detail) });
    }

    // A gate from it: evaluated by membership.
    expect((await ts.api("/api/admin/gates", { body: { name: "vip-lounge", template: "VIP accounts" } })).status).toBe(201);
    expect((await ts.api("/api/admin/gates/vip-lounge")).body.envs.prod.rules).toEqual([{ name: "VIP accounts", conditions: [{ attr: "account_id", op: "in_segment", value: "tpl-vips" }], passPercentage: 100 }]);
    expect((await ofrep("vip-lounge", { user_id: "x", account_id: "acc-2", env: "prod" })).body.value).toBe(true);
    expect((await ofrep("vip-lounge", { user_id: "x", account_id: "acc-3", env: "prod" })).body.value).toBe(false);
    expect((await ts.api("/api/admin/gates/vip-lounge", { method: "DELETE" })).status).toBe(204);
  });

  test("a segment a template names is not deleted (409 naming the template) nor renamed; a PATCH of the template is checked too", async () => {
    expect((await segments("", { body: { name: "tpl-only", ids: ["t-1"] } })).status).toBe(201);
    expect((await templates("", { body: { name: "Only template", segment: "tpl-only" } })).status).toBe(201);
    const refused = await segments("/tpl-only", { method: "DELETE" });
    expect(refused.status).toBe(409);
    expect(expectErrorShape(refused.body)).toMatchObject({ code: "ALREADY_EXISTS", error: expect.stringContaining("template Only template") });
    expect((await segments("/tpl-only", { method: "PATCH", body: { name: "tpl-renamed" } })).status).toBe(400);
    // A template's use changes no snapshot: editing the segment publishes nothing.
    const before = await revisions();
    expect((await segments("/tpl-only", { method: "PATCH", body: { ids: ["t-1", "t-2"] } })).status).toBe(200);
    expect(await revisions()).toEqual(before);

    const badPatch = await templates("/Only%20template", { method: "PATCH", body: { rules: [{ attr: "user_id", op: "in_segment", value: "no-such" }] } });
    expect(badPatch.status).toBe(400);
    expect(expectErrorShape(badPatch.body).detail).toContain("rules[0].value: no segment named no-such");
    expect((await templates("/Only%20template", { method: "PATCH", body: { rules: [{ attr: "country", op: "eq", value: "de" }] } })).status).toBe(200);
    expect((await segments("/tpl-only", { method: "DELETE" })).status).toBe(204);
  });
});
