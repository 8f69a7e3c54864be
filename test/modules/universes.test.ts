import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import jStat from "jstat";
import { auditOf } from "../../src/lib/audit";
import { ENVS } from "../../src/lib/envs";
import { bucketOf } from "../../src/sdk/gates";
import { SEGMENTS, inRange, isHeldOut, segmentOf } from "../../src/sdk/universes";
import { checkRange } from "../../src/modules/universes/service";
import { holdoutFlag, holdoutText } from "../../src/modules/universes/cli";
import { type Sandbox, removeSandboxes, sandbox, svc, svcJson } from "../cli/client-helpers";
import { ROOT, SVC_SOURCE } from "../cli/process";
import { type TestServer, expectErrorShape, startTestServer } from "../helpers";

let ts: TestServer;

beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

/** Universe creation takes X-Project-Id as required (SPEC "Universes"). */
const scoped = (projectId = ts.projectId) => ({ "x-project-id": projectId });
const create = (body: unknown, init: { key?: string; projectId?: string } = {}) =>
  ts.api("/api/admin/universes", { body, key: init.key, headers: scoped(init.projectId ?? ts.projectId) });
const get = (ref: string, key?: string) => ts.api(`/api/admin/universes/${encodeURIComponent(ref)}`, { key });
const patch = (ref: string, body: unknown, key?: string) => ts.api(`/api/admin/universes/${encodeURIComponent(ref)}`, { method: "PATCH", body, key });
const remove = (ref: string) => ts.api(`/api/admin/universes/${encodeURIComponent(ref)}`, { method: "DELETE" });
const snapshot = async (env = "prod", key = ts.serverKey) => (await ts.api(`/api/sdk/v1/snapshot?env=${env}`, { key })).body;
const revisions = async (projectId = ts.projectId) => {
  const rows = await ts.store.all<{ env: string; revision: number }>("SELECT env, revision FROM env_revisions WHERE project_id = ?", projectId);
  return Object.fromEntries(ENVS.map((env) => [env, Number(rows.find((r) => r.env === env)?.revision ?? 0)]));
};
const audits = async (action: string, projectId = ts.projectId) => (await auditOf(ts.store, projectId, 1000)).filter((r) => r.action === action);

describe("segmentOf (src/sdk/universes.ts)", () => {
  test("is GrowthBook's hash v2 times 10,000: the NOTES.md vectors, the gates' bucket, 0 to 9,999", () => {
    expect(segmentOf("seed", "a")).toBe(505);
    expect(segmentOf("seed", "b")).toBe(2696);
    expect(segmentOf("seed", "123")).toBe(7884);
    expect(segmentOf("exp-1", "user-1")).toBe(5069);
    for (let i = 0; i < 20_000; i++) {
      const id = `unit-${i}`;
      const s = segmentOf("Qx3b9LmT0aZr7KpE", id);
      expect(Number.isInteger(s) && s >= 0 && s < SEGMENTS).toBe(true);
      expect(s).toBe(Math.round(bucketOf("Qx3b9LmT0aZr7KpE", id) * 10_000));
    }
  });

  test("is stable: the same salt and id always give the same segment; another salt reshuffles", () => {
    const ids = Array.from({ length: 1000 }, (_, i) => `user-${i * 7919}`);
    const first = ids.map((id) => segmentOf("salt-a", id));
    expect(ids.map((id) => segmentOf("salt-a", id))).toEqual(first);
    // Pinned values: a change to the hash would move every unit of every running experiment.
    expect(first.slice(0, 4)).toEqual([1652, 1105, 8506, 602]);
    const other = ids.map((id) => segmentOf("salt-b", id));
    expect(other.filter((s, i) => s === first[i]).length).toBeLessThan(5);
  });

  test("is uniform: χ² over 100,000 ids, per segment and per 1 % band; two salts are independent", () => {
    const N = 100_000;
    const counts = new Array<number>(SEGMENTS).fill(0);
    const bands = new Array<number>(100).fill(0);
    const joint = new Array<number>(100).fill(0);
    for (let i = 0; i < N; i++) {
      const id = `user-${i}`;
      const s = segmentOf("universe-salt", id);
      counts[s]!++;
      bands[Math.floor(s / 100)]!++;
      joint[Math.floor(s / 1000) * 10 + Math.floor(segmentOf("other-salt", id) / 1000)]!++;
    }
    const chi2 = (observed: number[], expected: number) => observed.reduce((sum, o) => sum + (o - expected) ** 2 / expected, 0);
    const p = (observed: number[]) => 1 - jStat.chisquare.cdf(chi2(observed, N / observed.length), observed.length - 1);
    // Deterministic ids: these p-values are fixed numbers (0.066, 0.53, 0.74), not a flaky draw. A biased hash gives p ≈ 0.
    const pSegments = p(counts);
    const pBands = p(bands);
    const pJoint = p(joint);
    expect(pSegments).toBeGreaterThan(0.01);
    expect(pBands).toBeGreaterThan(0.01);
    expect(pJoint).toBeGreaterThan(0.01);
    // The test itself can tell: a hash that favours low segments fails it.
    const skewed = counts.map((c, i) => (i < SEGMENTS / 2 ? c + 2 : Math.max(0, c - 2)));
    expect(1 - jStat.chisquare.cdf(chi2(skewed, N / SEGMENTS), SEGMENTS - 1)).toBeLessThan(1e-6);
  });

  test("inRange and isHeldOut read [start, end): end excluded; no range, nobody", () => {
    expect([inRange(0, [0, 500]), inRange(499, [0, 500]), inRange(500, [0, 500]), inRange(3, null)]).toEqual([true, true, false, false]);
    const universe = { salt: "seed", holdout_range: [500, 506] as [number, number] };
    expect(isHeldOut(universe, "a")).toBe(true); // segment 505
    expect(isHeldOut({ ...universe, holdout_range: [0, 505] }, "a")).toBe(false);
    expect(isHeldOut({ ...universe, holdout_range: null }, "a")).toBe(false);
  });
});

describe("holdout ranges", () => {
  test("checkRange: two integers, 0 <= start < end <= 10000, or null; each refusal names the field and why", () => {
    expect(checkRange([0, 500])).toEqual([0, 500]);
    expect(checkRange([0, 10_000])).toEqual([0, 10_000]);
    expect(checkRange([9999, 10_000])).toEqual([9999, 10_000]);
    expect(checkRange(null)).toBeNull();
    const cases: [unknown, string][] = [
      [[], "holdout_range: 0 items, not 2"],
      [[1], "holdout_range: 1 item, not 2"],
      [[1, 2, 3], "holdout_range: 3 items, not 2"],
      [[0.5, 2], "holdout_range: 0.5 is not an integer"],
      [[0, "5"], 'holdout_range: "5" is not an integer'],
      [[-1, 5], "holdout_range: -1 is outside 0 to 10000"],
      [[0, 10_001], "holdout_range: 10001 is outside 0 to 10000"],
      [[5, 5], "holdout_range: start 5 is not below end 5"],
      [[7, 3], "holdout_range: start 7 is not below end 3"],
      ["0-500", "holdout_range: not an array"],
    ];
    for (const [range, detail] of cases) {
      try {
        checkRange(range);
        throw new Error(`accepted ${JSON.stringify(range)}`);
      } catch (err: any) {
        expect(err.code, JSON.stringify(range)).toBe("VALIDATION");
        expect(err.detail).toStartWith(detail);
        expect(err.detail).toContain("0 <= start < end <= 10000");
      }
    }
  });

  test("the CLI's --holdout START-END and how ranges read", () => {
    expect(holdoutFlag("0-500")).toEqual([0, 500]);
    expect(holdoutFlag(" 9500 .. 10000 ")).toEqual([9500, 10_000]);
    expect(holdoutFlag("[0, 500)")).toEqual([0, 500]);
    expect(() => holdoutFlag("5%")).toThrow("--holdout must be START-END");
    expect(() => holdoutFlag("-5-10")).toThrow("--holdout must be START-END");
    expect(holdoutText([0, 500])).toBe("segments 0-499 (5 % of units)");
    expect(holdoutText([9990, 10_000])).toBe("segments 9990-9999 (0.1 % of units)");
    expect(holdoutText(null)).toBe("none");
  });
});

describe("POST /api/admin/universes", () => {
  test("201 {id, name} only; defaults user_id and no holdout; audited; published in every env's snapshot with a new revision", async () => {
    const before = await revisions();
    const created = await create({ name: "web-users" });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(["id", "name"]);
    expect(created.body.id).toMatch(/^uni_[A-Za-z0-9]{20}$/);
    expect(created.body.name).toBe("web-users");
    const record = (await get(created.body.id)).body;
    expect(Object.keys(record).sort()).toEqual(["createdAt", "holdout_range", "id", "name", "salt", "unit_type", "updatedAt"]);
    expect(record).toMatchObject({ id: created.body.id, name: "web-users", unit_type: "user_id", holdout_range: null });
    expect(record.salt).toMatch(/^[A-Za-z0-9]{16}$/);
    expect(record.createdAt).toBe(record.updatedAt);

    const after = await revisions();
    for (const env of ENVS) expect(after[env]).toBe(before[env]! + 1);
    for (const env of ENVS) {
      const snap = await snapshot(env);
      expect(snap.universes["web-users"]).toEqual({ id: created.body.id, unit_type: "user_id", holdout_range: null, salt: record.salt });
    }
    const [row] = await audits("universe.create");
    expect(row).toMatchObject({ subjectId: created.body.id, subjectName: "web-users", actorType: "key", detail: { unit_type: "user_id", holdout_range: null } });

    const accounts = await create({ name: "accounts", unit_type: "account_id", holdout_range: [0, 500] });
    expect(accounts.status).toBe(201);
    expect((await get("accounts")).body).toMatchObject({ unit_type: "account_id", holdout_range: [0, 500] });
    expect((await snapshot()).universes.accounts).toMatchObject({ unit_type: "account_id", holdout_range: [0, 500] });
    const explicitNull = await create({ name: "no-holdout", holdout_range: null });
    expect(explicitNull.status).toBe(201);
    expect((await get("no-holdout")).body.holdout_range).toBeNull();
  });

  test("X-Project-Id is required: missing is 400 BAD_REQUEST with detail; another project's is 403; nothing is created", async () => {
    const missing = await ts.api("/api/admin/universes", { body: { name: "unscoped" } });
    expect([missing.status, expectErrorShape(missing.body).code]).toEqual([400, "BAD_REQUEST"]);
    expect(missing.body.detail).toContain("X-Project-Id");
    const empty = await ts.api("/api/admin/universes", { body: { name: "unscoped" }, headers: { "x-project-id": "" } });
    expect([empty.status, empty.body.code]).toEqual([400, "BAD_REQUEST"]);
    const other = await ts.newProject("Other");
    const foreign = await create({ name: "unscoped" }, { projectId: other.projectId });
    expect([foreign.status, foreign.body.code]).toEqual([403, "FORBIDDEN"]);
    expect((await get("unscoped")).status).toBe(404);
    // The other operations default to the key's project, as everywhere.
    expect((await ts.api("/api/admin/universes")).status).toBe(200);
  });

  test("409 ALREADY_EXISTS on a taken name (with detail); the same name in another project is fine", async () => {
    const again = await create({ name: "web-users", unit_type: "account_id" });
    expect([again.status, expectErrorShape(again.body).code]).toEqual([409, "ALREADY_EXISTS"]);
    expect(again.body.detail).toContain("name");
    const other = await ts.newProject("Elsewhere");
    expect((await create({ name: "web-users" }, { key: other.adminKey, projectId: other.projectId })).status).toBe(201);
  });

  test("bodies that do not fit: VALIDATION with a detail naming the field", async () => {
    const cases: [unknown, string][] = [
      [{}, "name"],
      [{ name: "" }, "name"],
      [{ name: "x".repeat(129) }, "name"],
      [{ name: "uni_abc" }, "name: the uni_ prefix is reserved"],
      [{ name: "a/b" }, "name: '/'"],
      [{ name: " padded" }, "name"],
      [{ name: "tab\there" }, "name"],
      [{ name: "u", unit_type: "device_id" }, "unit_type: must be one of: user_id, account_id"],
      [{ name: "u", holdout_range: "0-500" }, "holdout_range"],
      [{ name: "u", holdout_range: [0, 500, 1000] }, "holdout_range: 3 items, not 2"],
      [{ name: "u", holdout_range: [0.5, 500] }, "holdout_range: 0.5 is not an integer"],
      [{ name: "u", holdout_range: [600, 500] }, "holdout_range: start 600 is not below end 500"],
      [{ name: "u", holdout_range: [0, 10_001] }, "holdout_range: 10001 is outside 0 to 10000"],
      [{ name: "u", holdout_range: { start: 0, end: 500 } }, "holdout_range"],
      [{ name: "u", holdoutRange: [0, 500] }, "holdoutRange: is not a field of this body"],
      [{ name: "u", salt: "mine" }, "salt: is not a field of this body"],
    ];
    for (const [body, detail] of cases) {
      const r = await create(body);
      expect([r.status, expectErrorShape(r.body).code], JSON.stringify(body)).toEqual([400, "VALIDATION"]);
      expect(r.body.detail, JSON.stringify(body)).toContain(detail);
      // One field, one part: clients split details on "; " (the dashboard puts each part on its field).
      expect(r.body.detail, JSON.stringify(body)).not.toContain("; ");
    }
    const malformed = await ts.api("/api/admin/universes", { rawBody: "{", headers: scoped() });
    expect([malformed.status, malformed.body.code]).toEqual([400, "BAD_REQUEST"]);
    expect((await ts.api("/api/admin/universes")).body.map((u: any) => u.name).sort()).toEqual(["accounts", "no-holdout", "web-users"]);
  });

  test("a holdout needs plan pro or above: 403 FORBIDDEN below it (free, starter, unknown), fine on pro, business, enterprise", async () => {
    for (const plan of ["free", "starter", "hobby"]) {
      const p = await ts.newProject(`On ${plan}`, { plan });
      const refused = await create({ name: "held", holdout_range: [0, 500] }, { key: p.adminKey, projectId: p.projectId });
      expect([refused.status, expectErrorShape(refused.body).code], plan).toEqual([403, "FORBIDDEN"]);
      expect(refused.body.error).toContain(`plan ${plan}`);
      expect(refused.body.detail).toStartWith("holdout_range: needs plan pro, business, enterprise");
      // Without a holdout (absent or null) any plan may create one.
      expect((await create({ name: "plain" }, { key: p.adminKey, projectId: p.projectId })).status).toBe(201);
      expect((await create({ name: "null-holdout", holdout_range: null }, { key: p.adminKey, projectId: p.projectId })).status).toBe(201);
      // A malformed range is still a VALIDATION first.
      expect((await create({ name: "bad", holdout_range: [5, 1] }, { key: p.adminKey, projectId: p.projectId })).status).toBe(400);
      // PATCH: setting one is refused the same way, removing one is allowed.
      const set = await ts.api("/api/admin/universes/plain", { method: "PATCH", body: { holdout_range: [0, 100] }, key: p.adminKey });
      expect([set.status, set.body.code]).toEqual([403, "FORBIDDEN"]);
      const cleared = await ts.api("/api/admin/universes/plain", { method: "PATCH", body: { holdout_range: null }, key: p.adminKey });
      expect(cleared.status).toBe(200);
      expect(await audits("universe.create", p.projectId)).toHaveLength(2);
    }
    for (const plan of ["pro", "business", "enterprise"]) {
      const p = await ts.newProject(`On ${plan}`, { plan });
      expect((await create({ name: "held", holdout_range: [9500, 10_000] }, { key: p.adminKey, projectId: p.projectId })).status, plan).toBe(201);
    }
  });
});

describe("list, get, PATCH, DELETE", () => {
  test("list: by name, q over the name (case-insensitive), only the project's own; get by id or name, 404 otherwise", async () => {
    const listed = (await ts.api("/api/admin/universes")).body;
    expect(listed.map((u: any) => u.name)).toEqual(["accounts", "no-holdout", "web-users"]);
    expect((await ts.api("/api/admin/universes?q=USERS")).body.map((u: any) => u.name)).toEqual(["web-users"]);
    expect((await ts.api("/api/admin/universes?q=nothing")).body).toEqual([]);
    expect((await ts.api(`/api/admin/universes?q=${"x".repeat(101)}`)).status).toBe(400);
    const byName = (await get("web-users")).body;
    expect((await get(byName.id)).body).toEqual(byName);
    expect(listed.find((u: any) => u.name === "web-users")).toEqual(byName);
    const missing = await get("never");
    expect([missing.status, expectErrorShape(missing.body).code]).toEqual([404, "NOT_FOUND"]);
    // Another project's universe is not visible by its id.
    const other = await ts.newProject("Hidden");
    const theirs = await create({ name: "theirs" }, { key: other.adminKey, projectId: other.projectId });
    expect((await get(theirs.body.id)).status).toBe(404);
    expect((await patch(theirs.body.id, { name: "mine" })).status).toBe(404);
    expect((await remove(theirs.body.id)).status).toBe(404);
    expect((await get(theirs.body.id, other.adminKey)).body.name).toBe("theirs");
  });

  test("PATCH moves the holdout, removes it, renames; audited with before and after; the salt stays; every env's revision moves", async () => {
    const start = (await get("web-users")).body;
    const before = await revisions();
    const moved = await patch("web-users", { holdout_range: [9500, 10_000] });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ id: start.id, name: "web-users", unit_type: "user_id", holdout_range: [9500, 10_000], salt: start.salt, createdAt: start.createdAt });
    expect(moved.body.updatedAt >= start.updatedAt).toBe(true);
    const after = await revisions();
    for (const env of ENVS) expect(after[env]).toBe(before[env]! + 1);
    expect((await snapshot("dev")).universes["web-users"]).toEqual({ id: start.id, unit_type: "user_id", holdout_range: [9500, 10_000], salt: start.salt });
    const [row] = (await audits("universe.update")).filter((r) => r.subjectId === start.id);
    expect(row!.detail).toEqual({ fields: ["holdout_range"], before: { holdout_range: null }, after: { holdout_range: [9500, 10_000] } });

    const renamed = await patch(start.id, { name: "web-visitors", holdout_range: null });
    expect(renamed.body).toMatchObject({ id: start.id, name: "web-visitors", holdout_range: null, salt: start.salt });
    const snap = await snapshot();
    expect(snap.universes["web-users"]).toBeUndefined();
    expect(snap.universes["web-visitors"]).toMatchObject({ id: start.id, holdout_range: null });
    const latest = (await audits("universe.update")).find((r) => r.subjectId === start.id && r.subjectName === "web-visitors");
    expect(latest!.detail).toEqual({ fields: ["name", "holdout_range"], before: { name: "web-users", holdout_range: [9500, 10_000] }, after: { name: "web-visitors", holdout_range: null } });
    expect((await patch("web-visitors", { name: "web-users" })).status).toBe(200);
  });

  test("PATCH: unit_type cannot change (VALIDATION saying why), the same value is accepted; a taken name is 409; nothing sent changes nothing", async () => {
    const changed = await patch("web-users", { unit_type: "account_id" });
    expect([changed.status, expectErrorShape(changed.body).code]).toEqual([400, "VALIDATION"]);
    expect(changed.body.detail).toStartWith("unit_type: ");
    expect(changed.body.detail).toContain("every experiment's assignments");
    expect((await get("web-users")).body.unit_type).toBe("user_id");
    const same = await patch("web-users", { unit_type: "user_id" });
    expect(same.status).toBe(200);

    const taken = await patch("web-users", { name: "accounts" });
    expect([taken.status, taken.body.code]).toEqual([409, "ALREADY_EXISTS"]);
    const audited = (await auditOf(ts.store, ts.projectId, 1000)).length;
    const revision = await revisions();
    const current = (await get("web-users")).body;
    expect((await patch("web-users", {})).body).toEqual(current);
    expect((await patch("web-users", { name: "web-users", holdout_range: null })).body).toEqual(current);
    expect((await auditOf(ts.store, ts.projectId, 1000)).length).toBe(audited);
    expect(await revisions()).toEqual(revision);

    for (const [body, detail] of [
      [{ salt: "x" }, "salt: is not a field of this body"],
      [{ id: "uni_x" }, "id: is not a field of this body"],
      [{ holdout_range: [3, 3] }, "holdout_range: start 3 is not below end 3"],
      [{ name: "uni_x" }, "name: the uni_ prefix is reserved"],
    ] as const) {
      const r = await patch("web-users", body);
      expect([r.status, r.body.code, r.body.detail?.startsWith(detail)], JSON.stringify(body)).toEqual([400, "VALIDATION", true]);
    }
    expect((await patch("never", { name: "x" })).status).toBe(404);
  });

  test("DELETE: 204, audited, gone from the snapshot; 404 after", async () => {
    const doomed = await create({ name: "doomed", holdout_range: [0, 10] });
    const before = await revisions();
    const gone = await remove("doomed");
    expect(gone.status).toBe(204);
    expect(gone.text).toBe("");
    expect((await get(doomed.body.id)).status).toBe(404);
    expect((await remove("doomed")).status).toBe(404);
    const after = await revisions();
    for (const env of ENVS) expect(after[env]).toBe(before[env]! + 1);
    expect((await snapshot("staging")).universes.doomed).toBeUndefined();
    expect(await audits("universe.delete")).toEqual([expect.objectContaining({ subjectId: doomed.body.id, subjectName: "doomed", detail: { unit_type: "user_id" } })]);
  });

  test("the in-use hook: deletion is refused while an experiment runs in it, and the holdout may not cover a running allocation", async () => {
    const { universes } = ts.server.ctx.services;
    const target = (await create({ name: "busy" })).body.id as string;
    const calls: string[] = [];
    universes.setInUseCheck(async (q, projectId, universeId) => {
      calls.push(universeId);
      // The check runs in the writing transaction: it can read through it.
      expect(await q.one("SELECT id FROM universes WHERE id = ? AND project_id = ?", universeId, projectId)).toBeTruthy();
      return universeId === target ? [{ name: "checkout-test", allocation: [1000, 3000] }, { name: "pricing", allocation: [5000, 6000] }] : [];
    });
    try {
      const refused = await remove("busy");
      expect([refused.status, expectErrorShape(refused.body).code]).toEqual([400, "VALIDATION"]);
      expect(refused.body.error).toContain("checkout-test, pricing");
      expect(refused.body.detail).toBe("id: experiments checkout-test, pricing running in universe busy");
      expect((await get("busy")).status).toBe(200);

      const covering = await patch("busy", { holdout_range: [2500, 5500] });
      expect([covering.status, covering.body.code]).toEqual([400, "VALIDATION"]);
      expect(covering.body.detail).toBe("holdout_range: overlaps running experiments checkout-test [1000, 3000), pricing [5000, 6000): stop them first or choose other segments");
      const touching = await patch("busy", { holdout_range: [3000, 5000] });
      expect(touching.status).toBe(200);
      expect(touching.body.holdout_range).toEqual([3000, 5000]);
      // Removing the holdout and renaming never clash.
      expect((await patch("busy", { holdout_range: null, name: "busy-2" })).status).toBe(200);
      expect(calls).toContain(target);
    } finally {
      universes.setInUseCheck(async () => []);
    }
    expect((await remove("busy-2")).status).toBe(204);
  });

  test("a read-only token reads universes but cannot write them", async () => {
    const token = await ts.api("/api/admin/tokens", { body: { name: "universes-ro", access: "read-only" } });
    expect(token.status).toBe(201);
    const secret = token.body.token as string;
    expect((await ts.api("/api/admin/universes", { key: secret })).status).toBe(200);
    expect((await get("web-users", secret)).status).toBe(200);
    expect((await create({ name: "ro" }, { key: secret })).status).toBe(403);
    expect((await patch("web-users", { holdout_range: null }, secret)).status).toBe(403);
  });
});

describe("concurrency", () => {
  test("10 parallel creates of one name: exactly one 201, nine 409, one row, one audit row", async () => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => create({ name: "race", holdout_range: i % 2 ? [0, 100] : null })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    for (const r of results.filter((r) => r.status === 409)) expect(r.body.code).toBe("ALREADY_EXISTS");
    const row = await ts.store.one<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM universes WHERE project_id = ? AND name = ?", ts.projectId, "race");
    expect(Number(row?.n)).toBe(1);
    expect((await audits("universe.create")).filter((r) => r.subjectName === "race")).toHaveLength(1);
  });

  test("parallel renames to one name and holdout moves: one rename wins, every move is a whole write", async () => {
    await create({ name: "left" });
    await create({ name: "right" });
    const renames = await Promise.all([patch("left", { name: "taken" }), patch("right", { name: "taken" })]);
    expect(renames.map((r) => r.status).sort()).toEqual([200, 409]);
    const moves = await Promise.all(Array.from({ length: 8 }, (_, i) => patch("taken", { holdout_range: [i * 100, i * 100 + 50] })));
    expect(moves.every((r) => r.status === 200)).toBe(true);
    const stored = (await get("taken")).body.holdout_range as number[];
    expect(stored[1]! - stored[0]!).toBe(50);
    const row = await ts.store.one<{ s: number; e: number }>("SELECT holdout_start AS s, holdout_end AS e FROM universes WHERE project_id = ? AND name = ?", ts.projectId, "taken");
    expect([Number(row!.s), Number(row!.e)]).toEqual(stored);
  });
});

describe("svc universes (the CLI, as a user runs it)", () => {
  let box: Sandbox;
  let env: Record<string, string>;
  const run = (args: string[], extra: Record<string, string> = {}) => svc(box, ["universes", ...args], { env: { ...env, ...extra } });
  const runJson = (args: string[]) => svcJson(box, ["universes", ...args], { env });

  beforeAll(async () => {
    const minted = await ts.api("/api/admin/tokens", { body: { name: "universes-cli", access: "read-write" } });
    expect(minted.status).toBe(201);
    box = sandbox();
    env = { SERVICE_CLI_TOKEN: minted.body.token, SERVICE_URL: ts.url };
  });

  test("create (X-Project-Id sent for the token's project): --json is the full record; the human line says unit type and holdout", async () => {
    const created = await runJson(["create", "cli-users", "--holdout", "0-500"]);
    expect(created).toEqual((await get("cli-users")).body);
    expect(created).toMatchObject({ name: "cli-users", unit_type: "user_id", holdout_range: [0, 500] });
    const human = await run(["create", "cli-accounts", "--unit-type", "account_id"]);
    expect([human.code, human.stderr]).toEqual([0, ""]);
    expect(human.stdout).toMatch(/^Created universe cli-accounts \(uni_\w+\): unit type account_id, holdout none\.$/m);

    const twice = await run(["create", "cli-users", "--json"]);
    expect(twice.code).toBe(1);
    expect(JSON.parse(twice.stderr)).toMatchObject({ code: "ALREADY_EXISTS", status: 409 });
    const backwards = await run(["create", "cli-bad", "--holdout", "600-500", "--json"]);
    expect(backwards.code).toBe(1);
    expect(JSON.parse(backwards.stderr)).toMatchObject({ code: "VALIDATION", detail: expect.stringContaining("start 600 is not below end 500") });
    for (const args of [["--holdout", "5%"], ["--unit-type", "device_id"], ["--holdout", "0-5", "--clear-holdout"]]) {
      const usage = await run(["create", "cli-usage", ...args]);
      expect(usage.code, args.join(" ")).toBe(2);
    }
    expect((await get("cli-usage")).status).toBe(404);
  }, 60_000);

  test("a holdout on a plan below pro: the server's 403, exit 1", async () => {
    const free = await ts.newProject("Free CLI", { plan: "free" });
    const token = await ts.api("/api/admin/tokens", { body: { name: "free-cli", access: "read-write" }, key: free.adminKey });
    const refused = await svc(box, ["universes", "create", "held", "--holdout", "0-500", "--json"], { env: { SERVICE_CLI_TOKEN: token.body.token, SERVICE_URL: ts.url } });
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr)).toMatchObject({ code: "FORBIDDEN", status: 403, detail: expect.stringContaining("holdout_range") });
  }, 60_000);

  test("list and get: --json is the API's answer; the human forms read the holdout in segments and percent", async () => {
    expect(await runJson(["list"])).toEqual((await ts.api("/api/admin/universes")).body);
    expect((await runJson(["list", "--query", "CLI-"])).map((u: any) => u.name)).toEqual(["cli-accounts", "cli-users"]);
    const table = await run(["list", "--query", "cli-"]);
    expect(table.stdout).toMatch(/^NAME\s+UNIT TYPE\s+HOLDOUT\s+UPDATED$/m);
    expect(table.stdout).toMatch(/^cli-users\s+user_id\s+segments 0-499 \(5 % of units\)\s+\d{4}-/m);
    expect(table.stdout).toMatch(/^cli-accounts\s+account_id\s+none\s+/m);
    const one = await run(["get", "cli-users"]);
    const record = (await get("cli-users")).body;
    expect(one.stdout).toContain(`cli-users (${record.id})`);
    expect(one.stdout).toContain("holdout:   segments 0-499 (5 % of units)");
    expect(one.stdout).toContain(`salt:      ${record.salt}`);
    expect(await runJson(["get", record.id])).toEqual(record);
    const missing = await run(["get", "never", "--json"]);
    expect([missing.code, JSON.parse(missing.stderr).code]).toEqual([1, "NOT_FOUND"]);
  }, 60_000);

  test("update moves, clears and renames; nothing to change is a usage error; delete --yes", async () => {
    expect(await runJson(["update", "cli-users", "--holdout", "9500-10000"])).toMatchObject({ holdout_range: [9500, 10_000] });
    expect(await runJson(["update", "cli-users", "--clear-holdout"])).toMatchObject({ holdout_range: null });
    const renamed = await run(["update", "cli-users", "--rename", "cli-people"]);
    expect(renamed.code).toBe(0);
    expect(renamed.stdout).toContain("Updated universe cli-people:");
    expect((await run(["update", "cli-people"])).code).toBe(2);
    const gone = await runJson(["delete", "cli-people", "--yes"]);
    expect(gone).toEqual({ name: "cli-people", deleted: true });
    expect((await get("cli-people")).status).toBe(404);
    expect((await audits("universe.delete")).some((r) => r.subjectName === "cli-people" && r.actorType === "token")).toBe(true);
  }, 60_000);

  test("svc mcp: list_universes and get_universe answer as the API does", async () => {
    const transport = new StdioClientTransport({
      command: SVC_SOURCE[0]!,
      args: [...SVC_SOURCE.slice(1), "mcp"],
      env: { PATH: process.env.PATH ?? "", HOME: box.home, SERVICE_CONFIG_DIR: box.configDir, ...env },
      cwd: ROOT,
      stderr: "pipe",
    });
    const client = new Client({ name: "universes-test", version: "1.0.0" });
    await client.connect(transport);
    const text = (result: unknown) => {
      const first = (result as CallToolResult).content[0]!;
      return first.type === "text" ? first.text : "";
    };
    try {
      const { tools } = await client.listTools();
      for (const name of ["list_universes", "get_universe"]) expect(tools.find((t) => t.name === name)?.annotations).toMatchObject({ readOnlyHint: true });
      const all = await client.callTool({ name: "list_universes", arguments: {} });
      expect(JSON.parse(text(all))).toEqual((await ts.api("/api/admin/universes")).body);
      const some = await client.callTool({ name: "list_universes", arguments: { q: "ACCOUNTS" } });
      expect(JSON.parse(text(some)).map((u: any) => u.name)).toEqual(["accounts", "cli-accounts"]);
      const one = await client.callTool({ name: "get_universe", arguments: { name: "accounts" } });
      expect(JSON.parse(text(one))).toEqual((await get("accounts")).body);
      const missing = await client.callTool({ name: "get_universe", arguments: { name: "never" } });
      expect((missing as CallToolResult).isError).toBe(true);
      expect(text(missing)).toContain("NOT_FOUND");
    } finally {
      await client.close();
    }
  }, 60_000);
});
