import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import { ENVS } from "../../src/lib/envs";
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
