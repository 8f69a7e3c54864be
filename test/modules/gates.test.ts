import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { OFREPProvider } from "@openfeature/ofrep-provider";
import { OpenFeature } from "@openfeature/server-sdk";
import { auditOf } from "../../src/lib/audit";
import { type TestServer, expectErrorShape, startTestServer } from "../helpers";
import { GATE_CASES } from "../support/gate-cases";

let ts: TestServer;
const RULES = [
  { name: "staff", conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }], passPercentage: 100 },
  { name: "half of DE", conditions: [{ attr: "country", op: "in", value: ["de"] }], passPercentage: 50 },
];

beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await OpenFeature.close();
  await ts.stop();
});

const ofrep = async (key: string, context: Record<string, unknown>) => {
  const res = await fetch(`${ts.url}/ofrep/v1/evaluate/flags/${key}`, { method: "POST", headers: { "x-sdk-key": ts.serverKey, "content-type": "application/json" }, body: JSON.stringify({ context }) });
  return { status: res.status, body: (await res.json()) as any };
};

describe("gates: create, read, publish, history, rollback, delete", () => {
  test("create publishes version 1 on every env with a fixed salt; list with q; get by id or name", async () => {
    const created = await ts.api("/api/admin/gates", { body: { name: "new-checkout", description: "Redesign", rules: RULES } });
    expect(created.status).toBe(201);
    expect(created.body.id).toMatch(/^gate_/);
    const got = (await ts.api("/api/admin/gates/new-checkout")).body;
    expect(got).toMatchObject({ id: created.body.id, name: "new-checkout", description: "Redesign", salt: expect.stringMatching(/^[A-Za-z0-9]{16}$/) });
    for (const env of ["dev", "staging", "prod"]) expect(got.envs[env]).toMatchObject({ rules: RULES, version: 1 });
    expect((await ts.api(`/api/admin/gates/${created.body.id}`)).body.name).toBe("new-checkout");
    expect((await ts.api("/api/admin/gates?q=REDES")).body.map((g: any) => g.name)).toEqual(["new-checkout"]);
    expect((await ts.api("/api/admin/gates?q=nothing")).body).toEqual([]);
    const dup = await ts.api("/api/admin/gates", { body: { name: "new-checkout" } });
    expect(dup.status).toBe(409);
  });

  test("rules publish per env; history and rollback; every change is audited; the snapshot carries it", async () => {
    const next = [{ conditions: [], passPercentage: 100 }];
    const put = await ts.api("/api/admin/gates/new-checkout/rules", { method: "PUT", body: { env: "prod", rules: next } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ env: "prod", version: 2, rules: next });
    const gate = (await ts.api("/api/admin/gates/new-checkout")).body;
    expect(gate.envs.staging.version).toBe(1);
    const history = (await ts.api("/api/admin/gates/new-checkout/history?env=prod")).body;
    expect(history.map((h: any) => [h.version, h.action])).toEqual([[2, "gate.rules.set"], [1, "gate.create"]]);
    const rolled = await ts.api("/api/admin/gates/new-checkout/rollback", { body: { env: "prod", version: 1 } });
    expect(rolled.body).toMatchObject({ version: 3, rules: RULES });
    expect((await ts.api("/api/admin/gates/new-checkout/rollback", { body: { env: "prod", version: 9 } })).status).toBe(404);
    const snapshot = await (await fetch(`${ts.url}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": ts.serverKey } })).json();
    expect(snapshot.gates["new-checkout"]).toEqual({ salt: gate.salt, rules: RULES, version: 3 });
    const audit = (await auditOf(ts.store, ts.projectId)).filter((r) => r.action.startsWith("gate."));
    expect(audit.map((r) => [r.action, r.env])).toEqual([["gate.rollback", "prod"], ["gate.rules.set", "prod"], ["gate.create", null]]);
  });

  test("description updates; delete removes it from the snapshot and OFREP", async () => {
    expect((await ts.api("/api/admin/gates", { body: { name: "short-lived" } })).status).toBe(201);
    expect((await ts.api("/api/admin/gates/short-lived", { method: "PATCH", body: { description: "gone soon" } })).body.description).toBe("gone soon");
    expect((await ts.api("/api/admin/gates/short-lived", { method: "DELETE" })).status).toBe(204);
    expect((await ts.api("/api/admin/gates/short-lived")).status).toBe(404);
    expect((await ofrep("short-lived", {})).status).toBe(404);
  });
});

describe("rule validation names the rule and the field, and changes nothing", () => {
  const cases: [string, unknown, RegExp][] = [
    ["unknown op", [{ conditions: [{ attr: "x", op: "equals", value: 1 }], passPercentage: 100 }], /rules\[0\]\.conditions\[0\]\.op: unknown operator "equals"/],
    ["wrong value type", [{ conditions: [], passPercentage: 100 }, { conditions: [{ attr: "age", op: "gt", value: "ten" }], passPercentage: 100 }], /rules\[1\]\.conditions\[0\]\.value: gt compares with a number/],
    ["list op without a list", [{ conditions: [{ attr: "c", op: "in", value: "de" }], passPercentage: 100 }], /rules\[0\]\.conditions\[0\]\.value: in takes a non-empty list/],
    ["bad RE2 pattern", [{ conditions: [{ attr: "e", op: "regex", value: "(?=x)" }], passPercentage: 100 }], /rules\[0\]\.conditions\[0\]\.value: not a valid RE2 pattern/],
    ["bad version", [{ conditions: [{ attr: "v", op: "semver_gte", value: "two" }], passPercentage: 100 }], /semver_gte compares with a version/],
    ["bad date", [{ conditions: [{ attr: "d", op: "before", value: "soon" }], passPercentage: 100 }], /before compares with an ISO date/],
    ["itself as prerequisite", [{ conditions: [{ attr: "x", op: "fails_gate", value: "new-checkout" }], passPercentage: 100 }], /cannot depend on itself/],
  ];
  for (const [label, rules, detail] of cases) {
    test(label, async () => {
      const before = (await ts.api("/api/admin/gates/new-checkout")).body;
      const res = await ts.api("/api/admin/gates/new-checkout/rules", { method: "PUT", body: { env: "prod", rules } });
      expect(res.status).toBe(400);
      expect(expectErrorShape(res.body).code).toBe("VALIDATION");
      expect(res.body.detail).toMatch(detail);
      expect((await ts.api("/api/admin/gates/new-checkout")).body).toEqual(before);
    });
  }

  test("a prerequisite names a gate of the caller's project: none, or another project's, is NOT_FOUND naming the value; a gate another gate names is not deleted", async () => {
    const o = await ts.newProject("Other gates project");
    expect((await ts.api("/api/admin/gates", { key: o.adminKey, body: { name: "their-gate" } })).status).toBe(201);
    const theirId = (await ts.api("/api/admin/gates/their-gate", { key: o.adminKey })).body.id as string;
    const before = (await ts.api("/api/admin/gates/new-checkout")).body;
    for (const value of ["nope", "their-gate", theirId]) {
      const rules = [{ conditions: [], passPercentage: 0 }, { conditions: [{ attr: "x", op: "passes_gate", value }], passPercentage: 100 }];
      const res = await ts.api("/api/admin/gates/new-checkout/rules", { method: "PUT", body: { env: "prod", rules } });
      expect([res.status, expectErrorShape(res.body).code], value).toEqual([404, "NOT_FOUND"]);
      expect(res.body.detail).toContain("rules[1].conditions[0].value");
      const created = await ts.api("/api/admin/gates", { body: { name: "refers-elsewhere", rules } });
      expect([created.status, created.body.code], value).toEqual([404, "NOT_FOUND"]);
    }
    expect((await ts.api("/api/admin/gates/new-checkout")).body).toEqual(before);
    expect((await ts.api("/api/admin/gates/refers-elsewhere")).status).toBe(404);

    // A gate another gate's rules name stays until no rule names it.
    const needs = (name: string) => [{ conditions: [{ attr: "x", op: "passes_gate", value: name }], passPercentage: 100 }];
    expect((await ts.api("/api/admin/gates", { body: { name: "prerequisite" } })).status).toBe(201);
    expect((await ts.api("/api/admin/gates", { body: { name: "dependent" } })).status).toBe(201);
    expect((await ts.api("/api/admin/gates/dependent/rules", { method: "PUT", body: { env: "staging", rules: needs("prerequisite") } })).status).toBe(200);
    const refused = await ts.api("/api/admin/gates/prerequisite", { method: "DELETE" });
    expect([refused.status, refused.body.code]).toEqual([400, "VALIDATION"]);
    expect(refused.body.detail).toContain("dependent");
    expect((await ts.api("/api/admin/gates/dependent/rules", { method: "PUT", body: { env: "staging", rules: [] } })).status).toBe(200);
    expect((await ts.api("/api/admin/gates/prerequisite", { method: "DELETE" })).status).toBe(204);

    // Racing a publish that names it, a delete never leaves a rule naming a gate that is gone.
    for (let i = 0; i < 4; i++) {
      expect((await ts.api("/api/admin/gates", { body: { name: `racing-prerequisite-${i}` } })).status).toBe(201);
      const [published, deleted] = await Promise.all([
        ts.api("/api/admin/gates/dependent/rules", { method: "PUT", body: { env: "prod", rules: needs(`racing-prerequisite-${i}`) } }),
        ts.api(`/api/admin/gates/racing-prerequisite-${i}`, { method: "DELETE" }),
      ]);
      const exists = (await ts.api(`/api/admin/gates/racing-prerequisite-${i}`)).status === 200;
      if (published.status === 200) expect([i, exists, deleted.status]).toEqual([i, true, 400]);
      else expect([i, published.status, exists, deleted.status]).toEqual([i, 404, false, 204]);
      expect((await ts.api("/api/admin/gates/dependent/rules", { method: "PUT", body: { env: "prod", rules: [] } })).status).toBe(200);
    }
  });

  test("a percentage out of 0-100 and an unknown rule field are refused by name", async () => {
    const pct = await ts.api("/api/admin/gates/new-checkout/rules", { method: "PUT", body: { env: "prod", rules: [{ conditions: [], passPercentage: 101 }] } });
    expect(pct.status).toBe(400);
    expect(JSON.stringify(pct.body)).toContain("passPercentage");
    const extra = await ts.api("/api/admin/gates/new-checkout/rules", { method: "PUT", body: { env: "prod", rules: [{ conditions: [], passPercentage: 1, when: "now" }] } });
    expect(extra.status).toBe(400);
    expect(JSON.stringify(extra.body)).toContain("when");
  });

  test("a cycle of prerequisites is refused when saved, whichever gate closes it", async () => {
    expect((await ts.api("/api/admin/gates", { body: { name: "a" } })).status).toBe(201);
    expect((await ts.api("/api/admin/gates", { body: { name: "b", rules: [{ conditions: [{ attr: "x", op: "passes_gate", value: "a" }], passPercentage: 100 }] } })).status).toBe(201);
    const closing = await ts.api("/api/admin/gates/a/rules", { method: "PUT", body: { env: "prod", rules: [{ conditions: [{ attr: "x", op: "passes_gate", value: "b" }], passPercentage: 100 }] } });
    expect(closing.status).toBe(400);
    expect(closing.body.detail).toContain("cycle: a → b → a");
    // On another env the same rule is fine only if b does not point back there either: b points to a on every env.
    expect((await ts.api("/api/admin/gates/a/rules", { method: "PUT", body: { env: "dev", rules: [{ conditions: [{ attr: "x", op: "passes_gate", value: "b" }], passPercentage: 100 }] } })).status).toBe(400);
  });
});

describe("one evaluator: explain, OFREP and a real OpenFeature provider agree with the table", () => {
  test("every case of the table gives its expected answer through explain and through OFREP", async () => {
    for (const [i, c] of GATE_CASES.entries()) {
      const name = `case-${i}`;
      const created = await ts.api("/api/admin/gates", { body: { name, rules: c.gate.rules } });
      expect(created.status, c.name).toBe(201);
    }
    for (const [i, c] of GATE_CASES.entries()) {
      const name = `case-${i}`;
      const explained = await ts.api(`/api/admin/gates/${name}/explain`, { body: { env: "prod", context: c.context } });
      expect([c.name, explained.status, explained.body.value]).toEqual([c.name, 200, c.expected]);
      const evaluated = await ofrep(name, { ...c.context, env: "prod" });
      expect([c.name, evaluated.status, evaluated.body.value]).toEqual([c.name, 200, c.expected]);
    }
  });

  test("explain says which rule decided and why earlier rules did not; the bucket when a percentage decided", async () => {
    const out = await ts.api("/api/admin/gates/new-checkout/explain", { body: { env: "prod", context: { email: "bo@example.com", country: "de", user_id: "user-7" } } });
    expect(out.status).toBe(200);
    expect(out.body).toMatchObject({ gate: "new-checkout", env: "prod", version: 3, ruleIndex: 1, reason: "SPLIT", bucket: expect.any(Number) });
    expect(out.body.rules[0]).toMatchObject({ name: "staff", holds: false, conditions: [{ attr: "email", holds: false, why: 'email is "bo@example.com"' }] });
    const viaOfrep = await ofrep("new-checkout", { email: "bo@example.com", country: "de", user_id: "user-7" });
    expect(viaOfrep.body).toMatchObject({ value: out.body.value, reason: "SPLIT", variant: out.body.value ? "on" : "off", metadata: { version: 3 } });
    // OpenFeature's targetingKey stands for a user_id that is absent or null, in OFREP as in the SDK.
    for (const context of [{ targetingKey: "user-7" }, { targetingKey: "user-7", user_id: null }]) {
      const viaKey = await ofrep("new-checkout", { email: "bo@example.com", country: "de", ...context });
      expect(viaKey.body, JSON.stringify(context)).toMatchObject({ value: out.body.value, reason: "SPLIT" });
    }
  });

  test("@openfeature/server-sdk reads a gate, with targetingKey as the unit", async () => {
    await OpenFeature.setProviderAndWait("gates", new OFREPProvider({ baseUrl: ts.url, headers: [["X-SDK-Key", ts.serverKey]] }));
    const client = OpenFeature.getClient("gates");
    const staff = await client.getBooleanDetails("new-checkout", false, { targetingKey: "user-1", email: "ana@acme.com" });
    expect(staff).toMatchObject({ value: true, reason: "TARGETING_MATCH", variant: "on" });
    const nobody = await client.getBooleanDetails("new-checkout", true, { targetingKey: "user-1", country: "us" });
    expect(nobody).toMatchObject({ value: false, reason: "DEFAULT", variant: "off" });
    // The same unit in DE gets the same answer as explain gives for user_id.
    const explained = (await ts.api("/api/admin/gates/new-checkout/explain", { body: { context: { user_id: "user-3", country: "de" } } })).body;
    expect(await client.getBooleanValue("new-checkout", !explained.value, { targetingKey: "user-3", country: "de" })).toBe(explained.value);
  });

  test("bulk OFREP evaluates gates per context, with a tag per context", async () => {
    const bulk = async (context: Record<string, unknown>, etag?: string) =>
      fetch(`${ts.url}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { "x-sdk-key": ts.serverKey, "content-type": "application/json", ...(etag ? { "if-none-match": etag } : {}) }, body: JSON.stringify({ context }) });
    const staff = await bulk({ email: "ana@acme.com" });
    const other = await bulk({ email: "bo@example.com", country: "us" });
    const flag = async (res: Response) => ((await res.json()) as any).flags.find((f: any) => f.key === "new-checkout").value;
    const staffTag = staff.headers.get("etag")!;
    expect(staffTag).not.toBe(other.headers.get("etag"));
    expect(await flag(staff)).toBe(true);
    expect(await flag(other)).toBe(false);
    expect((await bulk({ email: "ana@acme.com" }, staffTag)).status).toBe(304);
    expect((await bulk({ email: "bo@example.com" }, staffTag)).status).toBe(200);
  });
});
