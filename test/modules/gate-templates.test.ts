import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import { type TestServer, expectErrorShape, startTestServer } from "../helpers";

let ts: TestServer;

beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(() => ts.stop());

describe("gate templates", () => {
  test("the built-ins are listed first and refuse every write", async () => {
    const list = (await ts.api("/api/admin/gates/templates")).body;
    expect(list.filter((t: any) => t.builtIn).map((t: any) => t.name)).toEqual(["Internal users", "Percentage rollout", "Country list", "App version at least", "Beta opt-in"]);
    const beta = (await ts.api("/api/admin/gates/templates/gtpl_beta_opt_in")).body;
    expect(beta).toMatchObject({ name: "Beta opt-in", builtIn: true, rules: [{ attr: "beta_opt_in", op: "eq", value: true }] });
    expect((await ts.api("/api/admin/gates/templates/Beta opt-in".replace(" ", "%20"))).body.id).toBe("gtpl_beta_opt_in");
    const patch = await ts.api("/api/admin/gates/templates/gtpl_beta_opt_in", { method: "PATCH", body: { description: "mine now" } });
    expect(patch.status).toBe(403);
    expect(expectErrorShape(patch.body).code).toBe("FORBIDDEN");
    expect((await ts.api("/api/admin/gates/templates/gtpl_beta_opt_in", { method: "DELETE" })).status).toBe(403);
    const copy = await ts.api("/api/admin/gates/templates", { body: { name: "Beta opt-in", rules: [] } });
    expect(copy.status).toBe(409);
  });

  test("POST creates a project template ({id, name}); 409 on a duplicate name; conditions are checked like rules", async () => {
    const created = await ts.api("/api/admin/gates/templates", { body: { name: "Acme staff", description: "People at acme.com", category: "condition", rules: [{ attr: "email", op: "eq", value: "x@acme.com" }] } });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(["id", "name"]);
    expect(created.body.id).toMatch(/^gtpl_/);
    expect((await ts.api("/api/admin/gates/templates", { body: { name: "Acme staff", rules: [] } })).status).toBe(409);
    const bad = await ts.api("/api/admin/gates/templates", { body: { name: "Broken", rules: [{ attr: "email", op: "like", value: "%acme%" }] } });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toContain("rules[0].op");
    // Another project's template list does not show it; the same name is free there.
    const other = await ts.newProject("Other");
    expect((await ts.api("/api/admin/gates/templates", { key: other.adminKey })).body.some((t: any) => t.name === "Acme staff")).toBe(false);
    expect((await ts.api("/api/admin/gates/templates", { key: other.adminKey, body: { name: "Acme staff", rules: [] } })).status).toBe(201);
  });

  test("update and delete a project template; q filters; every write is audited", async () => {
    const updated = await ts.api("/api/admin/gates/templates/Acme staff".replace(" ", "%20"), { method: "PATCH", body: { rules: [{ attr: "email", op: "ends_with", value: "@acme.com" }] } });
    expect(updated.status).toBe(200);
    expect(updated.body.rules).toEqual([{ attr: "email", op: "ends_with", value: "@acme.com" }]);
    expect((await ts.api("/api/admin/gates/templates?q=acme")).body.map((t: any) => t.name)).toEqual(["Acme staff"]);
    expect((await ts.api("/api/admin/gates/templates", { body: { name: "Temp", rules: [] } })).status).toBe(201);
    expect((await ts.api("/api/admin/gates/templates/Temp", { method: "DELETE" })).status).toBe(204);
    expect((await ts.api("/api/admin/gates/templates/Temp")).status).toBe(404);
    const actions = (await auditOf(ts.store, ts.projectId)).filter((r) => r.action.startsWith("gate.template.")).map((r) => r.action);
    expect(actions).toEqual(["gate.template.delete", "gate.template.create", "gate.template.update", "gate.template.create"]);
  });

  test("a gate starts from a template: one rule of its conditions at the given percentage", async () => {
    const gate = await ts.api("/api/admin/gates", { body: { name: "staff-preview", template: "Acme staff", passPercentage: 25 } });
    expect(gate.status).toBe(201);
    const got = (await ts.api("/api/admin/gates/staff-preview")).body;
    expect(got.envs.prod.rules).toEqual([{ name: "Acme staff", conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }], passPercentage: 25 }]);
    const fromBuiltIn = await ts.api("/api/admin/gates", { body: { name: "beta-search", template: "gtpl_beta_opt_in" } });
    expect(fromBuiltIn.status).toBe(201);
    expect((await ts.api("/api/admin/gates/beta-search")).body.envs.dev.rules[0].passPercentage).toBe(100);
    expect((await ts.api("/api/admin/gates", { body: { name: "x", template: "nope" } })).status).toBe(404);
    expect((await ts.api("/api/admin/gates", { body: { name: "x", template: "gtpl_beta_opt_in", rules: [] } })).status).toBe(400);
    expect((await ts.api("/api/admin/gates", { body: { name: "templates" } })).status).toBe(400);
  });
});

describe("concurrent writers", () => {
  test("20 concurrent rule publishes on one gate and env give versions 2..21, gapless; 10 creates of one template name give one 201", async () => {
    expect((await ts.api("/api/admin/gates", { body: { name: "busy" } })).status).toBe(201);
    const puts = await Promise.all(
      Array.from({ length: 20 }, (_, i) => ts.api("/api/admin/gates/busy/rules", { method: "PUT", body: { env: "prod", rules: [{ conditions: [], passPercentage: i } ] } })),
    );
    expect(puts.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(puts.map((r) => r.body.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
    const history = (await ts.api("/api/admin/gates/busy/history?env=prod")).body;
    expect(history.map((h: any) => h.version)).toEqual(Array.from({ length: 21 }, (_, i) => 21 - i));

    const creates = await Promise.all(Array.from({ length: 10 }, () => ts.api("/api/admin/gates/templates", { body: { name: "Racy", rules: [] } })));
    expect(creates.filter((r) => r.status === 201).length).toBe(1);
    expect(creates.filter((r) => r.status === 409).length).toBe(9);
  });
});
