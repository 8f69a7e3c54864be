import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import { type TestServer, startTestServer } from "../helpers";

let ts: TestServer;

beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(() => ts.stop());

const ofrep = (key: string, context: Record<string, unknown>) =>
  fetch(`${ts.url}/ofrep/v1/evaluate/flags/${key}`, { method: "POST", headers: { "x-sdk-key": ts.serverKey, "content-type": "application/json" }, body: JSON.stringify({ context }) });

describe("attributes", () => {
  test("declare one (enum with its values); 409 twice; an enum needs values; get by name; q filters", async () => {
    const created = await ts.api("/api/admin/attributes", { body: { name: "plan", type: "enum", enumValues: ["free", "pro"], description: "Billing plan", sdkPath: "account.plan" } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(id).toMatch(/^attr_/);
    expect(created.body).toMatchObject({ name: "plan", type: "enum", enumValues: ["free", "pro"], required: 0, source: "manual", deprecated: 0, lastSeenAt: null });
    expect((await ts.api("/api/admin/attributes", { body: { name: "plan", type: "string" } })).status).toBe(409);
    const noValues = await ts.api("/api/admin/attributes", { body: { name: "tier", type: "enum" } });
    expect(noValues.status).toBe(400);
    expect(noValues.body.detail).toContain("enumValues");
    expect((await ts.api("/api/admin/attributes/plan")).body.id).toBe(id);
    expect((await ts.api("/api/admin/attributes?q=billing")).body.map((a: any) => a.name)).toEqual(["plan"]);
  });

  test("attributes seen in OFREP contexts are recorded as auto by the flush, not by each evaluation", async () => {
    expect((await ts.api("/api/admin/gates", { body: { name: "pro-only", rules: [{ conditions: [{ attr: "plan", op: "eq", value: "pro" }], passPercentage: 100 }] } })).status).toBe(201);
    for (let i = 0; i < 20; i++) expect((await ofrep("pro-only", { targetingKey: `u${i}`, plan: "pro", country: "de", app_version: "2.1.0", nested: { x: 1 } })).status).toBe(200);
    // Nothing written yet: evaluations only note names in memory.
    expect((await ts.api("/api/admin/attributes")).body.map((a: any) => a.name)).toEqual(["plan"]);
    await ts.server.ctx.services.attributes.flush();
    const list = (await ts.api("/api/admin/attributes")).body;
    expect(list.map((a: any) => [a.name, a.source, a.type])).toEqual([
      ["app_version", "auto", "string"],
      ["country", "auto", "string"],
      ["plan", "manual", "enum"],
    ]);
    const plan = list.find((a: any) => a.name === "plan");
    expect(plan.lastSeenAt).not.toBeNull();
    // An older stamp never moves lastSeenAt back.
    const before = plan.lastSeenAt;
    await ofrep("pro-only", { plan: "free" });
    await ts.server.ctx.services.attributes.flush();
    expect((await ts.api("/api/admin/attributes/plan")).body.lastSeenAt >= before).toBe(true);
  });

  test("declaring a seen attribute keeps its id; deprecating is audited; gate rules get warnings, never errors", async () => {
    const seen = (await ts.api("/api/admin/attributes/country")).body;
    const declared = await ts.api("/api/admin/attributes", { body: { name: "country", type: "string", description: "ISO country" } });
    expect(declared.status).toBe(201);
    expect(declared.body).toMatchObject({ id: seen.id, source: "manual", lastSeenAt: seen.lastSeenAt });
    const deprecated = await ts.api("/api/admin/attributes/country", { method: "PATCH", body: { deprecated: true } });
    expect(deprecated.body.deprecated).toBe(1);
    expect((await auditOf(ts.store, ts.projectId)).some((r) => r.action === "attribute.deprecate" && r.subjectName === "country")).toBe(true);

    const rules = [{ conditions: [{ attr: "country", op: "in", value: ["de"] }, { attr: "favourite_colour", op: "eq", value: "blue" }, { attr: "plan", op: "eq", value: "pro" }], passPercentage: 100 }];
    const put = await ts.api("/api/admin/gates/pro-only/rules", { method: "PUT", body: { env: "prod", rules } });
    expect(put.status).toBe(200);
    expect(put.body.version).toBe(2);
    expect(put.body.warnings).toEqual([
      "rules[0].conditions[0].attr: attribute country is deprecated",
      "rules[0].conditions[1].attr: attribute favourite_colour is unknown (not declared, not yet seen in an evaluation context)",
    ]);
    const created = await ts.api("/api/admin/gates", { body: { name: "colourful", rules } });
    expect(created.status).toBe(201);
    expect(created.body.warnings.length).toBe(2);
  });
});
