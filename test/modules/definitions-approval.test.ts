import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, expectErrorShape, startTestServer } from "../helpers";

// Flags as code meets four eyes (issues 31 and 30): with change requests on for an env, `POST /api/admin/apply`
// opens ONE change request holding a `definitions.apply` change instead of publishing; another person approves
// it, and applying the request publishes exactly the document. It goes stale when what the document touches
// moved; a document touching only envs that need no approval applies directly, as before.

let ts: TestServer;
let ana: string; // editor: applies documents
let ben: string; // editor: approves

const exported = async (query = "") => {
  const res = await ts.api(`/api/admin/export${query}`, { key: ana });
  expect(res.status).toBe(200);
  return res.body;
};
const apply = (doc: unknown, query = "") => ts.api(`/api/admin/apply${query}`, { key: ana, body: doc });
const req = (path: string, key: string) => ts.api(`/api/admin/requests${path}`, { method: "POST", key });
const prodLimit = async () => (await exported()).configs.find((c: any) => c.name === "limits").envs.prod.value;
const requestCount = async () => (await ts.api("/api/admin/requests")).body.length as number;

beforeAll(async () => {
  ts = await startTestServer({ schedulesEveryMs: 0, rolloutsEveryMs: 0, alertsEveryMs: 0, experimentsEveryMs: 0 });
  await ts.addMember("ana@example.com", "editor");
  await ts.addMember("ben@example.com", "editor");
  ana = await ts.accessTokenFor("ana@example.com");
  ben = await ts.accessTokenFor("ben@example.com");
  expect((await ts.api("/api/admin/configs", { body: { name: "limits", schema: { type: "integer", minimum: 1 }, value: 60 } })).status).toBe(201);
  expect((await ts.api("/api/admin/segments", { body: { name: "beta", description: "Beta testers", ids: ["u-1"] } })).status).toBe(201);
  expect((await ts.api("/api/admin/requests/policy", { method: "PUT", body: { envs: { prod: { required: true } } } })).status).toBe(200);
});
afterAll(() => ts.stop());

describe("apply on a project whose prod requires approval", () => {
  test("opens one change request instead of publishing; another person approves; applying it publishes exactly the document; a second apply is a no-op", async () => {
    const doc = await exported("?only=configs");
    doc.configs[0].envs.prod.value = 75;

    // The plan still works, and says that applying opens a request.
    const plan = await apply(doc, "?dryRun=true");
    expect(plan.status).toBe(200);
    expect(plan.body).toMatchObject({ summary: { create: 0, update: 1, delete: 0 }, applied: false, approvalRequired: true });

    const opened = await apply(doc, `?reason=${encodeURIComponent("Black Friday")}`);
    expect(opened.status).toBe(202);
    const request = opened.body.request;
    expect(request.id).toMatch(/^cr_/);
    expect(request).toMatchObject({ state: "open", approvalsRequired: 1, author: "ana@example.com", title: "svc apply: 0 created, 1 changed, 0 deleted", reason: "Black Friday" });
    expect(request.changes).toHaveLength(1);
    expect(request.changes[0]).toMatchObject({
      kind: "definitions.apply",
      target: { type: "project", name: "definitions" },
      env: null,
      summary: "apply definitions: 0 created, 1 changed, 0 deleted",
      fingerprint: expect.stringMatching(/^definitions [0-9a-f]{12}$/),
    });
    expect(request.changes[0].change).toMatchObject({ kind: "definitions.apply", document: doc });
    expect(opened.body.plan).toEqual({ changes: [{ section: "configs", name: "limits", action: "update", changes: [{ field: "envs.prod.value", before: 60, after: 75 }] }], summary: { create: 0, update: 1, delete: 0 } });
    // Nothing published yet.
    expect(await prodLimit()).toBe(60);

    const self = await req(`/${request.id}/approve`, ana);
    expect(self.status).toBe(403);
    expect(expectErrorShape(self.body).code).toBe("FORBIDDEN");
    expect((await req(`/${request.id}/approve`, ben)).status).toBe(200);
    const applied = await req(`/${request.id}/apply`, ana);
    expect(applied.status).toBe(200);
    expect(applied.body.state).toBe("applied");
    expect(await exported("?only=configs")).toEqual(doc);

    // Audited as apply, naming the request, in the request's transaction.
    const rows = await ts.store.all<{ action: string; detail: string | null; actor_email: string }>("SELECT action, detail, actor_email FROM audit_log WHERE action IN ('definitions.apply', 'request.apply') ORDER BY seq");
    expect(rows.map((r) => r.action)).toEqual(["definitions.apply", "request.apply"]);
    expect(JSON.parse(rows[0]!.detail!)).toMatchObject({ update: 1, request: request.id });
    expect(rows[0]!.actor_email).toBe("ana@example.com");

    const again = await apply(doc);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ changes: [], summary: { create: 0, update: 0, delete: 0 }, applied: false });
  });

  test("the request goes stale when what the document touches moved between open and apply", async () => {
    const doc = await exported("?only=configs");
    doc.configs[0].envs.prod.value = 80;
    const opened = await apply(doc, "?title=Raise%20prod%20to%2080");
    expect(opened.status).toBe(202);
    expect(opened.body.request.title).toBe("Raise prod to 80");
    // The config moves in between (dev needs no approval).
    expect((await ts.api("/api/admin/configs/limits", { method: "PATCH", body: { dev: 5 } })).status).toBe(200);
    expect((await req(`/${opened.body.request.id}/approve`, ben)).status).toBe(200);
    const stale = await req(`/${opened.body.request.id}/apply`, ana);
    expect(stale.status).toBe(409);
    expect(expectErrorShape(stale.body).code).toBe("CONFLICT");
    expect((await ts.api(`/api/admin/requests/${opened.body.request.id}`)).body.state).toBe("stale");
    expect(await prodLimit()).toBe(75);
  });

  test("a segment change counts for every env: it opens a request too", async () => {
    const doc = await exported("?only=segments");
    doc.segments[0].description = "Beta testers, wave 2";
    const opened = await apply(doc);
    expect(opened.status).toBe(202);
    expect(opened.body.request.changes[0].summary).toBe("apply definitions: 0 created, 1 changed, 0 deleted");
    expect((await exported("?only=segments")).segments[0].description).toBe("Beta testers");
  });

  test("a document touching only dev (no approval there) applies directly, as before", async () => {
    const before = await requestCount();
    const doc = await exported("?only=configs");
    doc.configs[0].envs.dev.value = 9;
    const res = await apply(doc);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ applied: true, summary: { create: 0, update: 1, delete: 0 } });
    expect((await exported("?only=configs")).configs[0].envs.dev.value).toBe(9);
    expect(await requestCount()).toBe(before);
    // --env dev keeps a whole document to dev: applied directly too.
    const full = await exported("?only=configs");
    full.configs[0].envs.dev.value = 10;
    full.configs[0].envs.prod.value = 99;
    const onlyDev = await apply(full, "?env=dev");
    expect(onlyDev.status).toBe(200);
    expect(onlyDev.body.applied).toBe(true);
    expect(await prodLimit()).toBe(75);
  });

  test("a document that would change nothing opens nothing; a bad document is refused before any request", async () => {
    const before = await requestCount();
    const same = await apply(await exported());
    expect(same.status).toBe(200);
    expect(same.body.applied).toBe(false);
    const bad = await exported("?only=configs");
    bad.configs[0].envs.prod.value = 0; // breaks minimum: 1
    const refused = await apply(bad);
    expect(refused.status).toBe(400);
    expect(expectErrorShape(refused.body).code).toBe("VALIDATION");
    expect(await requestCount()).toBe(before);
  });

  test("a definitions.apply change opened directly is checked, and its summary must be the plan's", async () => {
    const doc = await exported("?only=configs");
    doc.configs[0].envs.prod.value = 70;
    const wrong = await ts.api("/api/admin/requests", { key: ana, body: { title: "t", changes: [{ kind: "definitions.apply", document: doc, summary: { create: 5, update: 0, delete: 0 } }] } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.detail).toContain("changes[0]");
    const nothing = await ts.api("/api/admin/requests", { key: ana, body: { title: "t", changes: [{ kind: "definitions.apply", document: await exported() }] } });
    expect(nothing.status).toBe(400);
    const ok = await ts.api("/api/admin/requests", { key: ana, body: { title: "by hand", changes: [{ kind: "definitions.apply", document: doc, env: "prod" }] } });
    expect(ok.status).toBe(201);
    expect(ok.body.changes[0]).toMatchObject({ env: "prod", summary: expect.stringContaining("apply definitions") });
  });
});
