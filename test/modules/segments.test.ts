import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import { ENVS } from "../../src/lib/envs";
import { createClient } from "../../src/sdk/index";
import { type TestServer, expectErrorShape, startTestServer } from "../helpers";

// Segments (issue 29, first slice): CRUD, validation, audit rows, in_segment / not_in_segment in gates
// through OFREP and the snapshot (each segment once), DELETE refused while used, edits republishing.

let ts: TestServer;

beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.stop();
});

const create = (body: unknown) => ts.api("/api/admin/segments", { body });
const get = (ref: string) => ts.api(`/api/admin/segments/${encodeURIComponent(ref)}`);
const patch = (ref: string, body: unknown) => ts.api(`/api/admin/segments/${encodeURIComponent(ref)}`, { method: "PATCH", body });
const remove = (ref: string) => ts.api(`/api/admin/segments/${encodeURIComponent(ref)}`, { method: "DELETE" });
const audits = async (action: string) => (await auditOf(ts.store, ts.projectId, 1000)).filter((r) => r.action === action);
const stored = (name: string) => ts.store.one<{ ids: string; id_count: number; conditions: string }>("SELECT ids, id_count, conditions FROM segments WHERE name = ? AND project_id = ?", name, ts.projectId);
const revisions = async () => {
  const rows = await ts.store.all<{ env: string; revision: number }>("SELECT env, revision FROM env_revisions WHERE project_id = ?", ts.projectId);
  return Object.fromEntries(ENVS.map((env) => [env, Number(rows.find((r) => r.env === env)?.revision ?? 0)]));
};
const ofrep = async (key: string, context: Record<string, unknown>) => {
  const res = await fetch(`${ts.url}/ofrep/v1/evaluate/flags/${key}`, { method: "POST", headers: { "x-sdk-key": ts.serverKey, "content-type": "application/json" }, body: JSON.stringify({ context }) });
  return { status: res.status, body: (await res.json()) as any };
};
const snapshot = async (env = "prod") => (await ts.api(`/api/sdk/v1/snapshot?env=${env}`, { key: ts.serverKey })).body;
const setRules = (gate: string, env: string, rules: unknown) => ts.api(`/api/admin/gates/${gate}/rules`, { method: "PUT", body: { env, rules } });

describe("segments: create, list with q, get, patch, delete, each audited", () => {
  test("the round trip: ids deduplicated, list counts ids, q over name and description, one audit row per write", async () => {
    const created = await create({ name: "beta-testers", description: "Beta programme", ids: ["u-1", "u-2", "u-1", "u-3"] });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.stringMatching(/^seg_/), name: "beta-testers" });
    const got = (await get("beta-testers")).body;
    expect(got).toMatchObject({ id: created.body.id, name: "beta-testers", description: "Beta programme", attribute: "user_id", conditions: [], ids: ["u-1", "u-2", "u-3"], idCount: 3 });
    expect((await get(created.body.id)).body.name).toBe("beta-testers");
    expect(await stored("beta-testers")).toMatchObject({ ids: JSON.stringify(["u-1", "u-2", "u-3"]), id_count: 3 });

    expect((await create({ name: "staff", conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }] })).status).toBe(201);
    const listed = (await ts.api("/api/admin/segments?q=PROGRAMME")).body;
    expect(listed.map((s: any) => s.name)).toEqual(["beta-testers"]);
    expect(listed[0].idCount).toBe(3);
    expect(listed[0].ids).toBeUndefined();
    expect((await ts.api("/api/admin/segments")).body.map((s: any) => s.name)).toEqual(["beta-testers", "staff"]);

    const changed = await patch("beta-testers", { description: "Beta, wave 2", ids: ["u-9"] });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ description: "Beta, wave 2", ids: ["u-9"], idCount: 1 });
    expect((await patch("beta-testers", { description: "Beta, wave 2" })).status).toBe(200);

    expect((await remove("staff")).status).toBe(204);
    expect((await get("staff")).status).toBe(404);
    expect(await stored("staff")).toBeUndefined();

    expect((await audits("segment.create")).map((r) => r.subjectName).sort()).toEqual(["beta-testers", "staff"]);
    // The no-op PATCH wrote nothing.
    const updates = await audits("segment.update");
    expect(updates).toHaveLength(1);
    expect(updates[0]!.detail).toMatchObject({ fields: ["description", "ids"], ids: { before: 3, after: 1 }, envs: [] });
    expect((await audits("segment.delete")).map((r) => r.subjectName)).toEqual(["staff"]);
  });

  test("refusals: duplicate name 409, unknown 404, unknown body field, bad ids, conditions naming gates or segments; nothing changes", async () => {
    await create({ name: "vip", ids: ["a"] });
    const before = await auditOf(ts.store, ts.projectId, 1000);
    const dup = await create({ name: "vip" });
    expect(dup.status).toBe(409);
    expect(expectErrorShape(dup.body).code).toBe("ALREADY_EXISTS");
    const missing = await get("nope");
    expect(missing.status).toBe(404);
    expect(expectErrorShape(missing.body).code).toBe("NOT_FOUND");
    expect((await patch("nope", { description: "x" })).status).toBe(404);
    expect((await remove("nope")).status).toBe(404);

    const cases: [string, unknown, RegExp][] = [
      ["unknown field", { name: "x1", members: ["a"] }, /members/],
      ["id too long", { name: "x2", ids: ["ok", "a".repeat(257)] }, /ids/],
      ["id not text", { name: "x3", ids: ["ok", 7] }, /ids/],
      ["control characters", { name: "x4", ids: ["ok", "a\u0001b"] }, /ids\[1\]: control characters/],
      ["too many ids", { name: "x5", ids: Array.from({ length: 100_001 }, (_, i) => String(i)) }, /ids/],
      ["bad operator", { name: "x6", conditions: [{ attr: "country", op: "equals", value: "de" }] }, /conditions\[0\]\.op: unknown operator/],
      ["gate reference", { name: "x7", conditions: [{ attr: "x", op: "passes_gate", value: "g" }] }, /conditions\[0\]\.op: a segment's conditions cannot name gates or other segments/],
      ["segment reference", { name: "x8", conditions: [{ attr: "x", op: "in_segment", value: "vip" }] }, /conditions\[0\]\.op/],
      ["bad attribute", { name: "x9", attribute: "a b" }, /attribute/],
      ["name with prefix", { name: "seg_x" }, /name/],
    ];
    for (const [what, body, detail] of cases) {
      const res = await create(body);
      expect({ what, status: res.status }).toEqual({ what, status: 400 });
      const error = expectErrorShape(res.body);
      expect({ what, code: error.code }).toEqual({ what, code: "VALIDATION" });
      expect(error.detail ?? "").toMatch(detail);
    }
    expect((await patch("vip", { ids: ["ok", 7] })).status).toBe(400);
    expect((await get("vip")).body.ids).toEqual(["a"]);
    expect(await auditOf(ts.store, ts.projectId, 1000)).toHaveLength(before.length);
  });
});

describe("in_segment / not_in_segment in gates", () => {
  const IDS = Array.from({ length: 100_000 }, (_, i) => `u${i}`);

  test("a 100,000-id segment: OFREP answers by membership; the snapshot carries it once for two gates; unknown segment refused", async () => {
    const created = await create({ name: "early-access", ids: IDS });
    expect(created.status).toBe(201);
    expect((await stored("early-access"))!.id_count).toBe(100_000);

    const unknown = await ts.api("/api/admin/gates", { body: { name: "ghost", rules: [{ conditions: [{ attr: "user_id", op: "in_segment", value: "no-such" }], passPercentage: 100 }] } });
    expect(unknown.status).toBe(400);
    expect(expectErrorShape(unknown.body)).toMatchObject({ code: "VALIDATION", detail: expect.stringContaining("rules[0].conditions[0].value: no segment named no-such") });
    expect((await ts.api("/api/admin/gates/ghost")).status).toBe(404);

    const inRule = [{ conditions: [{ attr: "user_id", op: "in_segment", value: "early-access" }], passPercentage: 100 }];
    const outRule = [{ conditions: [{ attr: "user_id", op: "not_in_segment", value: "early-access" }], passPercentage: 100 }];
    expect((await ts.api("/api/admin/gates", { body: { name: "early-feature", rules: inRule } })).status).toBe(201);
    expect((await ts.api("/api/admin/gates", { body: { name: "legacy-banner", rules: outRule } })).status).toBe(201);

    for (const [user, inIt] of [["u0", true], ["u99999", true], ["u54321", true], ["u100000", false], ["stranger", false]] as const) {
      const on = await ofrep("early-feature", { targetingKey: user, env: "prod" });
      expect({ user, status: on.status, value: on.body.value }).toEqual({ user, status: 200, value: inIt });
      const off = await ofrep("legacy-banner", { user_id: user, env: "prod" });
      expect({ user, value: off.body.value }).toEqual({ user, value: !inIt });
    }
    // No user at all: not in the segment.
    expect((await ofrep("early-feature", { env: "prod" })).body.value).toBe(false);

    const snap = await snapshot("prod");
    expect(Object.keys(snap.segments)).toEqual(["early-access"]);
    expect(snap.segments["early-access"].attribute).toBe("user_id");
    expect(snap.segments["early-access"].ids).toHaveLength(100_000);
    // The rules name the segment; the ids are not copied into them.
    expect(JSON.stringify(snap.gates["early-feature"]).length).toBeLessThan(1000);
    expect(snap.gates["legacy-banner"].rules[0].conditions[0]).toEqual({ attr: "user_id", op: "not_in_segment", value: "early-access" });

    // Explain agrees with OFREP.
    const explained = await ts.api("/api/admin/gates/early-feature/explain", { body: { env: "prod", context: { user_id: "u7" } } });
    expect(explained.status).toBe(200);
    expect(explained.body).toMatchObject({ value: true, rules: [{ holds: true, conditions: [{ op: "in_segment", holds: true, why: "in segment early-access" }] }] });
  });

  test("the SDK evaluates in_segment locally from the snapshot's segments, as OFREP does", async () => {
    const svc = createClient({ baseUrl: ts.url, sdkKey: ts.serverKey, env: "prod", stream: false });
    try {
      await svc.ready();
      expect(svc.isEnabled("early-feature", { user_id: "u4242" })).toBe(true);
      expect(svc.isEnabled("early-feature", { user_id: "u99999" })).toBe(true);
      expect(svc.isEnabled("early-feature", { user_id: "x-1" })).toBe(false);
      expect(svc.isEnabled("legacy-banner", { user_id: "x-1" })).toBe(true);
      expect(svc.isEnabled("legacy-banner", { user_id: "u1" })).toBe(false);
    } finally {
      await svc.close();
    }
  });

  test("a segment of conditions: a unit whose context meets them is in it", async () => {
    expect((await create({ name: "acme-staff", conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }] })).status).toBe(201);
    expect((await ts.api("/api/admin/gates", { body: { name: "staff-tools", rules: [{ conditions: [{ attr: "email", op: "in_segment", value: "acme-staff" }], passPercentage: 100 }] } })).status).toBe(201);
    expect((await ofrep("staff-tools", { user_id: "x", email: "ann@acme.com", env: "prod" })).body.value).toBe(true);
    expect((await ofrep("staff-tools", { user_id: "x", email: "ann@other.com", env: "prod" })).body.value).toBe(false);
    expect((await snapshot("prod")).segments["acme-staff"]).toEqual({ attribute: "user_id", conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }] });
  });

  test("DELETE of a used segment is 409 naming the gates; editing it republishes each env that uses it once, audited", async () => {
    await create({ name: "pilot", ids: ["p-1"] });
    expect((await ts.api("/api/admin/gates", { body: { name: "pilot-gate", rules: [] } })).status).toBe(201);
    expect((await setRules("pilot-gate", "prod", [{ conditions: [{ attr: "user_id", op: "in_segment", value: "pilot" }], passPercentage: 100 }])).status).toBe(200);

    const refused = await remove("pilot");
    expect(refused.status).toBe(409);
    expect(expectErrorShape(refused.body).error).toContain("pilot-gate (prod)");
    expect((await get("pilot")).status).toBe(200);
    // A rename would orphan the rules that name it.
    expect((await patch("pilot", { name: "pilot-2" })).status).toBe(400);

    expect((await ofrep("pilot-gate", { user_id: "p-2", env: "prod" })).body.value).toBe(false);
    const before = await revisions();
    expect((await patch("pilot", { ids: ["p-1", "p-2"] })).status).toBe(200);
    const after = await revisions();
    expect(after).toEqual({ ...before, prod: before.prod! + 1 });
    expect((await ofrep("pilot-gate", { user_id: "p-2", env: "prod" })).body.value).toBe(true);
    const audit = (await audits("segment.update")).find((r) => r.subjectName === "pilot");
    expect(audit!.detail).toMatchObject({ fields: ["ids"], envs: ["prod"] });

    expect((await setRules("pilot-gate", "prod", [])).status).toBe(200);
    expect((await remove("pilot")).status).toBe(204);
  });

  test("the evaluation bound counts a segment's conditions at each condition naming it, on gate saves and on segment edits", async () => {
    const lists = (n: number) => Array.from({ length: n }, (_, i) => ({ attr: `a${i}`, op: "in", value: Array.from({ length: 1000 }, (_, j) => `v${j}`) }));
    // 30 lists of 1,000: 30 × (1 + 125) = 3,780 units per evaluation of the segment.
    expect((await create({ name: "heavy", conditions: lists(30) })).status).toBe(201);
    const naming = (n: number) => [{ conditions: Array.from({ length: n }, () => ({ attr: "user_id", op: "in_segment", value: "heavy" })), passPercentage: 100 }];
    expect((await ts.api("/api/admin/gates", { body: { name: "heavy-gate", rules: naming(4) } })).status).toBe(201);
    // 50 lists: 6,300 units, × 4 conditions naming it: over the 20,000 bound.
    const before = await revisions();
    const refused = await patch("heavy", { conditions: lists(50) });
    expect(refused.status).toBe(400);
    expect(expectErrorShape(refused.body)).toMatchObject({ code: "VALIDATION", detail: expect.stringContaining("conditions: gate heavy-gate") });
    expect((await get("heavy")).body.conditions).toHaveLength(30);
    expect(await revisions()).toEqual(before);
    // 35 lists: 4,410 units, × 4: 17,644, within it.
    expect((await patch("heavy", { conditions: lists(35) })).status).toBe(200);
    // 5 conditions naming it cost 22,055: a new gate is refused.
    const gate = await ts.api("/api/admin/gates", { body: { name: "heavier-gate", rules: naming(5) } });
    expect(gate.status).toBe(400);
    expect(expectErrorShape(gate.body).code).toBe("VALIDATION");
  });

  // A rollout's rules naming a segment: test/modules/segment-refs.test.ts (refused before issue 29's follow-up).
  test("GrowthBook: the server key's payload carries the id list once as a saved group; the browser key's remote evaluation never returns it", async () => {
    const res = await fetch(`${ts.url}/api/features/${ts.serverKey}?env=prod`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.features["early-feature"]).toEqual({ defaultValue: false, rules: [{ condition: { user_id: { $inGroup: "early-access", $not: { $type: "array" } } }, force: true }] });
    expect(body.features["legacy-banner"].rules[0].condition).toEqual({ $not: { user_id: { $inGroup: "early-access", $not: { $type: "array" } } } });
    expect(body.savedGroups["early-access"]).toHaveLength(100_000);
    // Once, not copied into the rules.
    expect(JSON.stringify(body.features)).not.toContain("u54321");
    // The 304 fast path holds.
    const again = await fetch(`${ts.url}/api/features/${ts.serverKey}?env=prod`, { headers: { "if-none-match": res.headers.get("etag")! } });
    expect(again.status).toBe(304);

    const browser = await ts.api("/api/admin/keys", { body: { type: "browser", name: "segments web" } });
    expect(browser.status).toBe(201);
    const evaluated = await fetch(`${ts.url}/api/eval/${browser.body.key}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ attributes: { user_id: "u54321" } }) });
    expect(evaluated.status).toBe(200);
    const text = await evaluated.text();
    expect(JSON.parse(text).features["early-feature"]).toEqual({ defaultValue: true });
    expect(text).not.toContain("savedGroups");
    expect(text).not.toContain("u54320");
    // Nor the payload, which a browser key is refused.
    expect((await fetch(`${ts.url}/api/features/${browser.body.key}`)).status).toBe(403);
  });
});

describe("PATCH addIds / removeIds: a big list in several requests", () => {
  test("addIds appends (deduplicated), removeIds drops; audited with counts; an unchanged list changes nothing", async () => {
    expect((await create({ name: "import-target", ids: ["a-1", "a-2"] })).status).toBe(201);
    const added = await patch("import-target", { addIds: ["a-2", "a-3", "a-4", "a-3"] });
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({ ids: ["a-1", "a-2", "a-3", "a-4"], idCount: 4 });
    expect(await stored("import-target")).toMatchObject({ ids: JSON.stringify(["a-1", "a-2", "a-3", "a-4"]), id_count: 4 });

    const removed = await patch("import-target", { removeIds: ["a-1", "not-there"], addIds: ["a-5"] });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ ids: ["a-2", "a-3", "a-4", "a-5"], idCount: 4 });

    const updates = (await audits("segment.update")).filter((r) => r.subjectName === "import-target");
    expect(updates.map((r) => r.detail)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ fields: ["ids"], ids: { before: 2, after: 4 } }),
        expect.objectContaining({ fields: ["ids"], ids: { before: 4, after: 4 } }),
      ]),
    );

    // Adding ids already there, or removing ids that are not: nothing written, no revision, no audit row.
    const before = { audit: (await auditOf(ts.store, ts.projectId, 1000)).length, revisions: await revisions(), row: await stored("import-target") };
    for (const body of [{ addIds: ["a-2", "a-5"] }, { removeIds: ["zzz"] }, { addIds: [] }]) {
      const res = await patch("import-target", body);
      expect(res.status).toBe(200);
      expect(res.body.ids).toEqual(["a-2", "a-3", "a-4", "a-5"]);
    }
    expect((await auditOf(ts.store, ts.projectId, 1000)).length).toBe(before.audit);
    expect(await revisions()).toEqual(before.revisions);
    expect(await stored("import-target")).toEqual(before.row);
  });

  test("a used segment: addIds republishes each env that uses it once, and OFREP sees the new member", async () => {
    expect((await create({ name: "waves", ids: ["w-1"] })).status).toBe(201);
    expect((await ts.api("/api/admin/gates", { body: { name: "waves-gate", rules: [{ conditions: [{ attr: "user_id", op: "in_segment", value: "waves" }], passPercentage: 100 }] } })).status).toBe(201);
    expect((await ofrep("waves-gate", { user_id: "w-2", env: "prod" })).body.value).toBe(false);
    const before = await revisions();
    expect((await patch("waves", { addIds: ["w-2"] })).status).toBe(200);
    expect(await revisions()).toEqual({ dev: before.dev! + 1, staging: before.staging! + 1, prod: before.prod! + 1 });
    expect((await ofrep("waves-gate", { user_id: "w-2", env: "prod" })).body.value).toBe(true);
  });

  test("refusals: with ids, bad ids named by field, over 100,000 in all naming how many; nothing changes", async () => {
    expect((await create({ name: "capped", ids: Array.from({ length: 99_990 }, (_, i) => `c${i}`) })).status).toBe(201);
    const before = { audit: (await auditOf(ts.store, ts.projectId, 1000)).length, row: await stored("capped") };
    const cases: [string, unknown, RegExp][] = [
      ["with ids", { ids: ["x"], addIds: ["y"] }, /addIds.*ids|ids.*addIds/],
      ["removeIds with ids", { ids: ["x"], removeIds: ["y"] }, /removeIds.*ids|ids.*removeIds/],
      ["id too long", { addIds: ["ok", "a".repeat(257)] }, /addIds/],
      ["id not text", { removeIds: ["ok", 7] }, /removeIds/],
      ["control characters", { addIds: ["ok", "a\u0001b"] }, /addIds\[1\]: control characters/],
      ["over the cap", { addIds: Array.from({ length: 11 }, (_, i) => `new${i}`) }, /100001 ids.*100000|100,001.*100,000/],
      ["unknown field", { appendIds: ["x"] }, /appendIds/],
    ];
    for (const [what, body, detail] of cases) {
      const res = await patch("capped", body);
      expect({ what, status: res.status }).toEqual({ what, status: 400 });
      const error = expectErrorShape(res.body);
      expect({ what, code: error.code }).toEqual({ what, code: "VALIDATION" });
      expect({ what, detail: error.detail ?? "" }).toEqual({ what, detail: expect.stringMatching(detail) });
    }
    expect(await stored("capped")).toEqual(before.row);
    expect((await auditOf(ts.store, ts.projectId, 1000)).length).toBe(before.audit);
    // Removing some makes room for as many.
    const swapped = await patch("capped", { removeIds: ["c0", "c1"], addIds: Array.from({ length: 12 }, (_, i) => `new${i}`) });
    expect(swapped.status).toBe(200);
    expect(swapped.body.idCount).toBe(100_000);
    expect((await auditOf(ts.store, ts.projectId, 1000)).length).toBe(before.audit + 1);
  });

  test("two PATCHes with addIds at once both land (read-then-write atomic)", async () => {
    expect((await create({ name: "racing", ids: [] })).status).toBe(201);
    const chunks = Array.from({ length: 6 }, (_, c) => Array.from({ length: 500 }, (_, i) => `r${c}-${i}`));
    const answers = await Promise.all(chunks.map((addIds) => patch("racing", { addIds })));
    expect(answers.map((a) => a.status)).toEqual(chunks.map(() => 200));
    const got = (await get("racing")).body;
    expect(got.idCount).toBe(3000);
    expect(new Set(got.ids)).toEqual(new Set(chunks.flat()));
    expect((await stored("racing"))!.id_count).toBe(3000);
    const updates = (await audits("segment.update")).filter((r) => r.subjectName === "racing");
    expect(updates.map((r) => (r.detail as any).ids.after).sort((a: number, b: number) => a - b)).toEqual([500, 1000, 1500, 2000, 2500, 3000]);
  });
});
