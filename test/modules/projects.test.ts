import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import { expectErrorShape, startTestServer, type TestServer } from "../helpers";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const PROJECT_FIELDS = [
  "id", "name", "domain", "ownerEmail", "plan", "status", "subscriptionStatus", "billingInterval",
  "currentPeriodEnd", "trialEndsAt", "cancelAtPeriodEnd", "moduleTranslations", "moduleConfigs",
  "moduleGates", "moduleExperiments", "moduleFeedback", "createdAt", "updatedAt",
];

describe("GET project", () => {
  test("current returns the full record of the key's project", async () => {
    const r = await s.api("/api/admin/projects/current");
    expect(r.status).toBe(200);
    for (const f of PROJECT_FIELDS) expect(r.body).toHaveProperty(f);
    expect(r.body.id).toBe(s.projectId);
    expect(r.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.body).toMatchObject({ plan: "pro", status: "active", subscriptionStatus: "active", billingInterval: "monthly", cancelAtPeriodEnd: 0, trialEndsAt: null, defaultEnv: "prod" });
    expect(new Date(r.body.currentPeriodEnd).getTime()).toBeGreaterThan(Date.now());
  });

  test("by id returns the same record; another project's id is FORBIDDEN", async () => {
    const r = await s.api(`/api/admin/projects/${s.projectId}`);
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(s.projectId);
    const other = await s.newProject("Other");
    const f = await s.api(`/api/admin/projects/${other.projectId}`);
    expect(f.status).toBe(403);
    expect(expectErrorShape(f.body).code).toBe("FORBIDDEN");
  });

  test("an id longer than 128 characters is VALIDATION", async () => {
    const r = await s.api(`/api/admin/projects/${"x".repeat(129)}`);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe("VALIDATION");
    expect(r.body.detail).toContain("id");
  });
});

describe("PATCH project", () => {
  test("only the fields sent change", async () => {
    const before = (await s.api("/api/admin/projects/current")).body;
    const r = await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", body: { name: "Renamed", timezone: "Europe/Berlin" } });
    expect(r.status).toBe(200);
    expect(r.body.name).toBe("Renamed");
    expect(r.body.timezone).toBe("Europe/Berlin");
    for (const f of ["slug", "domain", "defaultEnv", "analysis", "moduleGates", "plan", "createdAt"]) expect(r.body[f]).toEqual(before[f]);
    expect(r.body.updatedAt >= before.updatedAt).toBe(true);
    const stored = (await s.api("/api/admin/projects/current")).body;
    expect(stored.name).toBe("Renamed");
  });

  test("every setting of DECISIONS.md can be set", async () => {
    const body = {
      slug: "renamed-shop",
      defaultEnv: "staging",
      analysis: { method: "bayesian", significanceThreshold: 0.1, autoRollback: true, minSampleDays: 3 },
      moduleTranslations: false,
      moduleConfigs: false,
      moduleGates: false,
      moduleExperiments: false,
      moduleFeedback: false,
      publicTicketCreation: false,
    };
    const r = await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", body });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject(body);
    const partial = await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", body: { analysis: { minSampleDays: 10 } } });
    expect(partial.body.analysis).toEqual({ method: "bayesian", significanceThreshold: 0.1, autoRollback: true, minSampleDays: 10 });
    // restore
    await s.api(`/api/admin/projects/${s.projectId}`, {
      method: "PATCH",
      body: { defaultEnv: "prod", moduleTranslations: true, moduleConfigs: true, moduleGates: true, moduleExperiments: true, moduleFeedback: true, publicTicketCreation: true },
    });
  });

  test("bad values are VALIDATION with the field named, and change nothing", async () => {
    const before = (await s.api("/api/admin/projects/current")).body;
    const cases: [unknown, string][] = [
      [{ timezone: "Mars/Olympus" }, "timezone"],
      [{ slug: "Not A Slug" }, "slug"],
      [{ defaultEnv: "qa" }, "defaultEnv"],
      [{ name: 42 }, "name"],
      [{ name: "" }, "name"],
      [{ domain: "exa mple.com" }, "domain"],
      [{ domain: "https://example.com/path" }, "domain"],
      [{ analysis: { method: "magic" } }, "analysis"],
      [{ analysis: { significanceThreshold: 2 } }, "analysis"],
      [{ analysis: null }, "analysis"],
      [{ analysis: 5 }, "analysis"],
      [{ analysis: { autoRollback: null } }, "analysis.autoRollback"],
      [{ moduleGates: "yes" }, "moduleGates"],
      [{ name: "ok", timezone: "Nowhere/Nope" }, "timezone"],
    ];
    for (const [body, field] of cases) {
      const r = await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe("VALIDATION");
      expect(r.body.detail).toContain(field);
    }
    const after = (await s.api("/api/admin/projects/current")).body;
    expect(after).toEqual(before);
  });

  test("malformed JSON is BAD_REQUEST and changes nothing", async () => {
    const before = (await s.api("/api/admin/projects/current")).body;
    const r = await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", rawBody: '{"name": "x",' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe("BAD_REQUEST");
    expect((await s.api("/api/admin/projects/current")).body).toEqual(before);
  });

  test("a body that is not a JSON object is refused, never applied as an empty patch", async () => {
    const before = (await s.api("/api/admin/projects/current")).body;
    const cases: [string, string, string][] = [
      ["[]", "application/json", "VALIDATION"],
      ["null", "application/json", "VALIDATION"],
      ['"name"', "application/json", "VALIDATION"],
      ["name=Renamed", "application/x-www-form-urlencoded", "BAD_REQUEST"],
    ];
    for (const [rawBody, type, code] of cases) {
      const r = await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", rawBody, headers: { "content-type": type } });
      expect(r.status, `${type} ${rawBody}`).toBe(400);
      expect(r.body.code, `${type} ${rawBody}`).toBe(code);
    }
    expect((await s.api("/api/admin/projects/current")).body).toEqual(before);
    // JSON sent with another content type is still read as JSON: the change it asks for is made.
    const text = await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", rawBody: '{"timezone":"Asia/Tokyo"}', headers: { "content-type": "text/plain" } });
    expect(text.status).toBe(200);
    expect((await s.api("/api/admin/projects/current")).body.timezone).toBe("Asia/Tokyo");
    await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", body: { timezone: before.timezone } });
  });

  test("another project's id is FORBIDDEN and changes nothing there", async () => {
    const other = await s.newProject("Victim");
    const r = await s.api(`/api/admin/projects/${other.projectId}`, { method: "PATCH", body: { name: "pwned" } });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe("FORBIDDEN");
    const theirs = await s.api(`/api/admin/projects/${other.projectId}`, { key: other.adminKey });
    expect(theirs.body.name).toBe("Victim");
  });

  test("a new domain is stamped into every live key, and CORS follows it", async () => {
    const r = await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", body: { domain: "Shop.Example.com" } });
    expect(r.status).toBe(200);
    expect(r.body.domain).toBe("shop.example.com");
    const keys = (await s.api("/api/admin/keys")).body as any[];
    expect(keys.length).toBeGreaterThanOrEqual(3);
    for (const k of keys) expect(k.allowedOrigin).toBe("https://shop.example.com");
    const sdk = (origin: string) => s.api("/api/sdk/v1/snapshot?env=prod", { key: null, headers: { "x-sdk-key": s.serverKey, origin } });
    const allowed = await sdk("https://shop.example.com");
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://shop.example.com");
    const refused = await sdk("https://elsewhere.example.com");
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("FORBIDDEN");
    // Keys minted afterwards carry it too.
    const minted = await s.api("/api/admin/keys", { body: { type: "server" } });
    const listed = ((await s.api("/api/admin/keys")).body as any[]).find((k) => k.id === minted.body.id);
    expect(listed.allowedOrigin).toBe("https://shop.example.com");

    const origin = await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", body: { domain: "http://localhost:5173" } });
    expect(origin.body.domain).toBe("http://localhost:5173");
    for (const k of (await s.api("/api/admin/keys")).body as any[]) expect(k.allowedOrigin).toBe("http://localhost:5173");

    const cleared = await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", body: { domain: "" } });
    expect(cleared.body.domain).toBe("");
    for (const k of (await s.api("/api/admin/keys")).body as any[]) expect(k.allowedOrigin).toBeNull();
  });

  test("the domain stamp does not touch another project's keys", async () => {
    const other = await s.newProject("Untouched");
    await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", body: { domain: "mine.example" } });
    const theirs = (await s.api("/api/admin/keys", { key: other.adminKey })).body as any[];
    for (const k of theirs) expect(k.allowedOrigin).toBeNull();
    await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", body: { domain: "" } });
  });
});

describe("audit and concurrency", () => {
  test("a PATCH records one audit row with the caller and what changed; a refused one records none", async () => {
    const before = (await auditOf(s.store, s.projectId, 1000)).length;
    const r = await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", body: { name: "Audited", domain: "Audit.Example" } });
    expect(r.status).toBe(200);
    const rows = await auditOf(s.store, s.projectId, 1000);
    expect(rows.length).toBe(before + 1);
    expect(rows[0]).toMatchObject({ action: "project.update", subjectId: s.projectId, subjectName: "Audited", actorType: "key" });
    expect(rows[0]!.actorEmail).toMatch(/^admin-key:.+@keys\.local$/);
    expect(rows[0]!.detail).toEqual({ changed: { name: "Audited", domain: "audit.example" } });
    expect((await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", body: { timezone: "Mars/Olympus" } })).status).toBe(400);
    expect((await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", body: {} })).status).toBe(200);
    expect((await auditOf(s.store, s.projectId, 1000)).length).toBe(before + 1);
    await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", body: { domain: "" } });
  });

  test("creating a project records project.create, in a new or an existing organisation", async () => {
    const { projects } = s.server.ctx.services;
    const other = await s.newProject("Created");
    const created = (await auditOf(s.store, other.projectId)).find((a) => a.action === "project.create");
    expect(created).toMatchObject({ subjectId: other.projectId, subjectName: "Created" });
    expect(created!.detail).toMatchObject({ newOrganisation: true });
    const actor = { email: "person@example.com", type: "user" };
    const second = await projects.createProject(other.organisationId, { name: "  Second  ", ownerEmail: "Owner@Example.com", actor });
    expect(second).toMatchObject({ name: "Second", organisationId: other.organisationId, ownerEmail: "owner@example.com" });
    const rows = await auditOf(s.store, second.id);
    expect(rows.map((a) => a.action)).toEqual(["project.create"]);
    expect(rows[0]).toMatchObject({ actorEmail: "person@example.com", actorType: "user", detail: { newOrganisation: false } });
    await expect(projects.createProject("org_missing", { name: "x", ownerEmail: "a@example.com" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  test("concurrent partial analysis patches all land (each read-then-write holds the project's lock)", async () => {
    const { projects } = s.server.ctx.services;
    const start = { method: "frequentist" as const, significanceThreshold: 0.05, autoRollback: false, minSampleDays: 7 };
    await projects.update(s.projectId, { analysis: start });
    await Promise.all([
      projects.update(s.projectId, { analysis: { method: "bayesian" } }),
      projects.update(s.projectId, { analysis: { significanceThreshold: 0.2 } }),
      projects.update(s.projectId, { analysis: { autoRollback: true } }),
      projects.update(s.projectId, { analysis: { minSampleDays: 30 } }),
    ]);
    expect((await projects.get(s.projectId)).analysis).toEqual({ method: "bayesian", significanceThreshold: 0.2, autoRollback: true, minSampleDays: 30 });
    await projects.update(s.projectId, { analysis: start });
  });

  test("users are found case-insensitively, and made once under concurrency", async () => {
    const { projects } = s.server.ctx.services;
    const owner = await projects.findOrCreateUser("owner@example.com");
    expect((await projects.findOrCreateUser("  OWNER@Example.COM ")).id).toBe(owner.id);
    const email = `new-${Date.now()}@example.com`;
    const made = await Promise.all(Array.from({ length: 5 }, (_, i) => projects.findOrCreateUser(i % 2 ? email.toUpperCase() : email)));
    expect(new Set(made.map((u) => u.id)).size).toBe(1);
    expect(made[0]!.email).toBe(email);
    expect(Number((await s.store.one<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM users WHERE lower(email) = ?", email))!.n)).toBe(1);
  });

  test("countProjects is a number on both engines", async () => {
    const n = await s.server.ctx.services.projects.countProjects();
    expect(typeof n).toBe("number");
    expect(n).toBeGreaterThanOrEqual(2);
  });
});
