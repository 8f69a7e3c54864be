import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import { currentRevision } from "../../src/lib/revisions";
import { startTestServer, type ProjectKeys, type TestServer } from "../helpers";

const ENVS = ["dev", "staging", "prod"] as const;
const RETRIES_SCHEMA = {
  type: "object",
  properties: { retries: { type: "integer", minimum: 0 }, url: { type: "string" } },
  required: ["retries"],
  additionalProperties: false,
};

let s: TestServer;
let foreign: ProjectKeys;
let seq = 0;

beforeAll(async () => {
  s = await startTestServer();
  foreign = await s.newProject("Foreign project");
});
afterAll(() => s.stop());

const uniqueName = (base: string) => `${base}-${++seq}`;
const withProject = (projectId = s.projectId) => ({ "x-project-id": projectId });

async function createConfig(body: Record<string, unknown>) {
  const r = await s.api("/api/admin/configs", { body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { id: string; name: string };
}

async function getConfig(idOrName: string) {
  const r = await s.api(`/api/admin/configs/${encodeURIComponent(idOrName)}`);
  expect(r.status).toBe(200);
  return r.body;
}

async function revisions(projectId = s.projectId): Promise<Record<string, number>> {
  return Object.fromEntries(await Promise.all(ENVS.map(async (env) => [env, await currentRevision(s.store, projectId, env)])));
}

async function configRows(id: string) {
  const db = s.store;
  return {
    config: await db.one("SELECT * FROM configs WHERE id = ?", id),
    values: await db.all("SELECT * FROM config_values WHERE config_id = ? ORDER BY env", id),
    drafts: await db.all("SELECT * FROM config_drafts WHERE config_id = ? ORDER BY env", id),
    versions: await db.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM config_versions WHERE config_id = ?", id),
    activity: await db.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM config_activity WHERE config_id = ?", id),
    audit: await db.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM audit_log WHERE subject_id = ?", id),
  };
}

async function activity(id: string, query = "") {
  const r = await s.api(`/api/admin/configs/${id}/activity${query}`, { headers: withProject() });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as { id: string; action: string; actorEmail: string; actorType: string; payload: any; createdAt: string }[];
}

describe("create, list, get, delete", () => {
  test("create publishes the value on every env at version 1 and bumps every revision", async () => {
    const before = await revisions();
    const name = uniqueName("checkout");
    const created = await createConfig({ name, schema: RETRIES_SCHEMA, value: { retries: 3 }, description: "Checkout tuning" });
    expect(created.id).toMatch(/^cfg_[A-Za-z0-9]+$/);
    expect(created.name).toBe(name);

    const byId = await getConfig(created.id);
    expect(byId).toMatchObject({ id: created.id, name, description: "Checkout tuning", schema: RETRIES_SCHEMA, drafts: {} });
    for (const env of ENVS) {
      expect(byId.envs[env]).toMatchObject({ value: { retries: 3 }, version: 1 });
      expect(typeof byId.envs[env].updatedAt).toBe("string");
    }
    expect(await getConfig(name)).toEqual(byId);

    const after = await revisions();
    for (const env of ENVS) expect(after[env]).toBe(before[env]! + 1);
    expect((await s.server.ctx.services.configs.publishedForEnv(s.projectId, "prod"))[name]).toEqual({ value: { retries: 3 }, version: 1 });

    const acts = await activity(created.id);
    expect(acts.map((a) => a.action)).toEqual(["config.create"]);
    expect(acts[0]!.id).toMatch(/^act_/);
    expect(acts[0]).toMatchObject({ actorType: "key" });
    expect(acts[0]!.actorEmail).toContain("@");
  });

  test("a duplicate name is 409 ALREADY_EXISTS and stores nothing", async () => {
    const name = uniqueName("dup");
    await createConfig({ name, schema: true, value: 1 });
    const count = async () => (await s.store.one<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM configs"))!.n;
    const n = await count();
    const r = await s.api("/api/admin/configs", { body: { name, schema: true, value: 2 } });
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("ALREADY_EXISTS");
    expect(await count()).toBe(n);
    expect((await getConfig(name)).envs.prod.value).toBe(1);
  });

  test("the schema's root default stands in for a missing value; without either it is VALIDATION", async () => {
    const name = uniqueName("defaulted");
    await createConfig({ name, schema: { type: "integer", default: 4 } });
    expect((await getConfig(name)).envs.dev).toMatchObject({ value: 4, version: 1 });

    const none = await s.api("/api/admin/configs", { body: { name: uniqueName("none"), schema: { type: "integer" } } });
    expect(none.status).toBe(400);
    expect(none.body.code).toBe("VALIDATION");
    expect(none.body.detail).toContain("value");

    const badDefault = await s.api("/api/admin/configs", { body: { name: uniqueName("bad-default"), schema: { type: "integer", default: "x" } } });
    expect(badDefault.status).toBe(400);
    expect(badDefault.body.code).toBe("VALIDATION");
  });

  test("any JSON value is kept as sent, null included", async () => {
    for (const value of [null, false, 0, "text", [1, "a", null], { nested: { list: [] } }]) {
      const name = uniqueName("any");
      await createConfig({ name, schema: true, value });
      expect((await getConfig(name)).envs.staging.value).toEqual(value);
    }
  });

  test("a value that fails its schema is VALIDATION naming the JSON path, and nothing is stored", async () => {
    const name = uniqueName("invalid");
    const r = await s.api("/api/admin/configs", { body: { name, schema: RETRIES_SCHEMA, value: { retries: -1, extra: 1 } } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe("VALIDATION");
    expect(r.body.detail).toContain("value /retries: must be >= 0");
    expect(r.body.detail).toContain("extra");
    expect(await s.store.one("SELECT id FROM configs WHERE name = ?", name)).toBeUndefined();
  });

  test("list is a bare array filtered by q over name and description, case-insensitively", async () => {
    const tag = `zq${Date.now()}`;
    const a = await createConfig({ name: uniqueName(`${tag}-alpha`), schema: true, value: 1 });
    const b = await createConfig({ name: uniqueName("beta"), schema: true, value: 2, description: `About ${tag.toUpperCase()}` });
    await createConfig({ name: uniqueName("gamma"), schema: true, value: 3 });
    const r = await s.api(`/api/admin/configs?q=${tag}`);
    expect(r.status).toBe(200);
    expect(Array.isArray(r.body)).toBe(true);
    expect((r.body as any[]).map((c) => c.id).sort()).toEqual([a.id, b.id].sort());
    expect((r.body as any[])[0].envs.prod.version).toBe(1);
    const all = await s.api("/api/admin/configs");
    expect((all.body as any[]).length).toBeGreaterThanOrEqual(3);
    const tooLong = await s.api(`/api/admin/configs?q=${"x".repeat(101)}`);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.code).toBe("VALIDATION");
  });

  test("delete is 204, bumps every env, removes it from get and the SDK view, and keeps its activity", async () => {
    const name = uniqueName("doomed");
    const { id } = await createConfig({ name, schema: true, value: "x" });
    const before = await revisions();
    const del = await s.api(`/api/admin/configs/${name}`, { method: "DELETE" });
    expect(del.status).toBe(204);
    const after = await revisions();
    for (const env of ENVS) expect(after[env]).toBe(before[env]! + 1);
    expect((await s.api(`/api/admin/configs/${id}`)).status).toBe(404);
    expect((await s.server.ctx.services.configs.publishedForEnv(s.projectId, "dev"))[name]).toBeUndefined();
    expect((await configRows(id)).values).toEqual([]);

    const acts = await activity(id);
    expect(acts.map((a) => a.action)).toEqual(["config.delete", "config.create"]);
    expect(acts[0]!.payload).toEqual({ name });

    const again = await s.api(`/api/admin/configs/${id}`, { method: "DELETE" });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe("NOT_FOUND");
    const unknown = await s.api("/api/admin/configs/cfg_nope/activity", { headers: withProject() });
    expect(unknown.status).toBe(404);
  });

  test("the SDK snapshot carries the published configs by name", async () => {
    const name = uniqueName("sdk");
    await createConfig({ name, schema: true, value: { on: true } });
    const r = await s.api("/api/sdk/v1/snapshot?env=staging", { key: null, headers: { "x-sdk-key": s.serverKey } });
    expect(r.status).toBe(200);
    expect(r.body.configs[name]).toEqual({ value: { on: true }, version: 1 });
  });
});

describe("PATCH", () => {
  test("value publishes one new version on every env", async () => {
    const { id } = await createConfig({ name: uniqueName("all"), schema: RETRIES_SCHEMA, value: { retries: 1 } });
    const before = await revisions();
    const r = await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { value: { retries: 2 } } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id });
    const c = await getConfig(id);
    for (const env of ENVS) expect(c.envs[env]).toMatchObject({ value: { retries: 2 }, version: 2 });
    const after = await revisions();
    for (const env of ENVS) expect(after[env]).toBe(before[env]! + 1);
    const [update] = await activity(id);
    expect(update).toMatchObject({ action: "config.update", payload: { versions: { dev: 2, staging: 2, prod: 2 } } });
  });

  test("a per-env key publishes on that env only", async () => {
    const name = uniqueName("one-env");
    const { id } = await createConfig({ name, schema: RETRIES_SCHEMA, value: { retries: 1 } });
    const before = await revisions();
    const r = await s.api(`/api/admin/configs/${name}`, { method: "PATCH", body: { staging: { retries: 7 } } });
    expect(r.status).toBe(200);
    const c = await getConfig(id);
    expect(c.envs.staging).toMatchObject({ value: { retries: 7 }, version: 2 });
    expect(c.envs.dev).toMatchObject({ value: { retries: 1 }, version: 1 });
    expect(c.envs.prod).toMatchObject({ value: { retries: 1 }, version: 1 });
    expect(await revisions()).toEqual({ ...before, staging: before.staging! + 1 });
  });

  test("a per-env key wins over value on its env; null is a value, not an absence", async () => {
    const { id } = await createConfig({ name: uniqueName("both"), schema: { type: ["integer", "null"] }, value: 1 });
    const r = await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { value: 5, prod: null } });
    expect(r.status).toBe(200);
    const c = await getConfig(id);
    expect(c.envs.dev).toMatchObject({ value: 5, version: 2 });
    expect(c.envs.staging).toMatchObject({ value: 5, version: 2 });
    expect(c.envs.prod).toMatchObject({ value: null, version: 2 });
  });

  test("new values that fail the schema are VALIDATION per field and change nothing", async () => {
    const { id } = await createConfig({ name: uniqueName("guarded"), schema: RETRIES_SCHEMA, value: { retries: 1 } });
    const before = await configRows(id);
    const revs = await revisions();
    const r = await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { value: { retries: "many" }, dev: { retries: 2 }, prod: {} } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe("VALIDATION");
    expect(r.body.detail).toContain("value /retries: must be integer");
    expect(r.body.detail).toContain("prod /: must have required property 'retries'");
    expect(await configRows(id)).toEqual(before);
    expect(await revisions()).toEqual(revs);
  });

  test("an empty body, unknown-only fields, wrong types and malformed JSON are refused and change nothing", async () => {
    const { id } = await createConfig({ name: uniqueName("untouched"), schema: true, value: 1 });
    const before = await configRows(id);
    for (const body of [{}, { nmae: "x" }]) {
      const r = await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe("VALIDATION");
    }
    const wrongType = await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { description: 5 } });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.code).toBe("VALIDATION");
    expect(wrongType.body.detail).toContain("description");
    const notObject = await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: [1] });
    expect(notObject.status).toBe(400);
    expect(notObject.body.code).toBe("VALIDATION");
    const malformed = await s.api(`/api/admin/configs/${id}`, { method: "PATCH", rawBody: '{"value": ' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe("BAD_REQUEST");
    // A body that is not a JSON object is refused as such on every config write, never read as {}.
    const writes: [string, string, Record<string, string>?][] = [
      ["POST", "/api/admin/configs"],
      ["PATCH", `/api/admin/configs/${id}`],
      ["PUT", `/api/admin/configs/${id}/drafts`, withProject()],
      ["POST", `/api/admin/configs/${id}/publish`],
    ];
    for (const [method, path, headers] of writes) {
      for (const raw of ["[]", "null", "5", '"x"']) {
        const r = await s.api(path, { method, rawBody: raw, headers });
        expect(r.status, `${method} ${path} ${raw}`).toBe(400);
        expect(r.body.code).toBe("VALIDATION");
        expect(r.body.detail, `${method} ${path} ${raw}`).toStartWith("(body): expected an object");
      }
    }
    const unknown = await s.api("/api/admin/configs/nope", { method: "PATCH", body: { value: 1 } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("NOT_FOUND");
    expect(await configRows(id)).toEqual(before);
  });

  test("JSON sent as text/plain is read as JSON: the caller's value, not an empty body", async () => {
    const { id } = await createConfig({ name: uniqueName("plain"), schema: true, value: 1 });
    const r = await s.api(`/api/admin/configs/${id}`, { method: "PATCH", rawBody: JSON.stringify({ dev: 2 }), headers: { "content-type": "text/plain" } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const c = await getConfig(id);
    expect(c.envs.dev).toMatchObject({ value: 2, version: 2 });
    expect(c.envs.prod).toMatchObject({ value: 1, version: 1 });
  });

  test("a schema that a stored value breaks is VALIDATION naming the env and path, and nothing changes", async () => {
    const { id } = await createConfig({ name: uniqueName("tighten"), schema: RETRIES_SCHEMA, value: { retries: 3 } });
    await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { prod: { retries: 9 } } });
    const before = await configRows(id);
    const revs = await revisions();
    const tighter = { ...RETRIES_SCHEMA, properties: { ...RETRIES_SCHEMA.properties, retries: { type: "integer", maximum: 5 } } };
    const r = await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { schema: tighter } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe("VALIDATION");
    expect(r.body.detail).toBe("prod /retries: must be <= 5");
    const after = await getConfig(id);
    expect(after.schema).toEqual(RETRIES_SCHEMA);
    expect(after.envs.prod).toMatchObject({ value: { retries: 9 }, version: 2 });
    expect(await configRows(id)).toEqual(before);
    expect(await revisions()).toEqual(revs);

    // The same schema goes through when the offending env gets a fitting value in the same PATCH.
    const ok = await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { schema: tighter, prod: { retries: 5 } } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const now = await getConfig(id);
    expect(now.schema).toEqual(tighter);
    expect(now.envs.prod).toMatchObject({ value: { retries: 5 }, version: 3 });
    expect(now.envs.dev.version).toBe(1);
    // ...and from then on values are checked against the new schema.
    const tooMany = await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { dev: { retries: 6 } } });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.detail).toBe("dev /retries: must be <= 5");
  });

  test("a schema that a draft breaks is VALIDATION naming the draft's env, and nothing changes", async () => {
    const { id } = await createConfig({ name: uniqueName("draft-guard"), schema: RETRIES_SCHEMA, value: { retries: 1 } });
    const saved = await s.api(`/api/admin/configs/${id}/drafts`, { method: "PUT", headers: withProject(), body: { env: "staging", value: { retries: 8 } } });
    expect(saved.status).toBe(200);
    const before = await configRows(id);
    const tighter = { ...RETRIES_SCHEMA, properties: { retries: { type: "integer", maximum: 5 } } };
    const r = await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { schema: tighter } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe("VALIDATION");
    expect(r.body.detail).toBe("draft staging /retries: must be <= 5");
    expect(await configRows(id)).toEqual(before);
    expect((await getConfig(id)).schema).toEqual(RETRIES_SCHEMA);
  });

  test("a schema-only change publishes nothing and bumps no revision; new values are checked against the new schema", async () => {
    const { id } = await createConfig({ name: uniqueName("reschema"), schema: { type: "integer" }, value: 1 });
    const revs = await revisions();
    const r = await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { schema: { type: ["integer", "string"] } } });
    expect(r.status).toBe(200);
    expect(await revisions()).toEqual(revs);
    expect((await getConfig(id)).envs.prod.version).toBe(1);

    const both = await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { schema: { type: "string" }, value: "now a string" } });
    expect(both.status, JSON.stringify(both.body)).toBe(200);
    const c = await getConfig(id);
    expect(c.schema).toEqual({ type: "string" });
    expect(c.envs.dev).toMatchObject({ value: "now a string", version: 2 });

    const mismatch = await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { schema: { type: "boolean" }, value: "still a string" } });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.detail).toBe("value /: must be boolean");
    expect((await getConfig(id)).schema).toEqual({ type: "string" });
  });

  test("30 concurrent per-env PATCHes give 30 distinct versions on that env only", async () => {
    const { id } = await createConfig({ name: uniqueName("race"), schema: { type: "integer" }, value: 0 });
    const revs = await revisions();
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { dev: i + 1 } })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(30).fill(200));
    const c = await getConfig(id);
    expect(c.envs.dev.version).toBe(31);
    expect(c.envs.prod.version).toBe(1);
    const history = await s.api(`/api/admin/configs/${id}/history?env=dev&limit=1000`);
    const versions = (history.body as any[]).map((h) => h.version);
    expect(versions).toEqual(Array.from({ length: 31 }, (_, i) => 31 - i));
    expect(new Set((history.body as any[]).slice(0, 30).map((h) => h.value)).size).toBe(30);
    expect(await revisions()).toEqual({ ...revs, dev: revs.dev! + 30 });
  });
});

describe("drafts and publish", () => {
  test("save, read, overwrite, publish: baseVersion, new version, draft gone, activity in order", async () => {
    const name = uniqueName("drafted");
    const { id } = await createConfig({ name, schema: RETRIES_SCHEMA, value: { retries: 1 } });
    await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { prod: { retries: 2 } } });
    const revs = await revisions();

    const first = await s.api(`/api/admin/configs/${name}/drafts`, { method: "PUT", headers: withProject(), body: { env: "prod", value: { retries: 3 } } });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ id, env: "prod", baseVersion: 2 });
    expect(typeof first.body.updatedAt).toBe("string");
    const second = await s.api(`/api/admin/configs/${id}/drafts`, { method: "PUT", headers: withProject(), body: { env: "prod", value: { retries: 4 } } });
    expect(second.body).toMatchObject({ id, env: "prod", baseVersion: 2 });
    expect(await revisions()).toEqual(revs);
    expect((await getConfig(id)).envs.prod).toMatchObject({ value: { retries: 2 }, version: 2 });

    const one = await s.api(`/api/admin/configs/${id}/drafts/prod`, { headers: withProject() });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id, env: "prod", value: { retries: 4 }, baseVersion: 2 });
    const list = await s.api(`/api/admin/configs/${id}/drafts`, { headers: withProject() });
    expect(list.body).toHaveLength(1);
    expect((await getConfig(id)).drafts.prod).toMatchObject({ value: { retries: 4 }, baseVersion: 2 });

    const pub = await s.api(`/api/admin/configs/${id}/publish`, { body: { env: "prod" } });
    expect(pub.status).toBe(200);
    expect(pub.body).toEqual({ id, env: "prod", version: 3, value: { retries: 4 } });
    const c = await getConfig(id);
    expect(c.envs.prod).toMatchObject({ value: { retries: 4 }, version: 3 });
    expect(c.envs.dev.version).toBe(1);
    expect(c.drafts).toEqual({});
    expect(await revisions()).toEqual({ ...revs, prod: revs.prod! + 1 });
    expect((await s.api(`/api/admin/configs/${id}/drafts/prod`, { headers: withProject() })).status).toBe(404);

    const acts = await activity(id);
    expect(acts.map((a) => a.action)).toEqual(["config.publish", "config.draft.save", "config.draft.save", "config.update", "config.create"]);
    expect(acts[0]!.payload).toEqual({ env: "prod", version: 3 });
    expect(acts[1]!.payload).toEqual({ env: "prod", baseVersion: 2 });
    const limited = await activity(id, "?limit=2");
    expect(limited.map((a) => a.id)).toEqual(acts.slice(0, 2).map((a) => a.id));
  });

  test("publish without a draft is NOT_FOUND with a helpful message; delete draft works once", async () => {
    const { id } = await createConfig({ name: uniqueName("no-draft"), schema: true, value: 1 });
    const r = await s.api(`/api/admin/configs/${id}/publish`, { body: { env: "dev" } });
    expect(r.status).toBe(404);
    expect(r.body.code).toBe("NOT_FOUND");
    expect(r.body.error).toContain("no draft on dev");
    expect(r.body.detail).toContain("PUT /api/admin/configs/{id}/drafts");

    await s.api(`/api/admin/configs/${id}/drafts`, { method: "PUT", headers: withProject(), body: { env: "dev", value: 2 } });
    const del = await s.api(`/api/admin/configs/${id}/drafts/dev`, { method: "DELETE", headers: withProject() });
    expect(del.status).toBe(204);
    expect((await configRows(id)).drafts).toEqual([]);
    const again = await s.api(`/api/admin/configs/${id}/drafts/dev`, { method: "DELETE", headers: withProject() });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe("NOT_FOUND");
    expect((await getConfig(id)).envs.dev).toMatchObject({ value: 1, version: 1 });
  });

  test("a draft that fails the schema is VALIDATION; a stored draft that no longer fits is refused at publish", async () => {
    const { id } = await createConfig({ name: uniqueName("draft-check"), schema: RETRIES_SCHEMA, value: { retries: 1 } });
    const bad = await s.api(`/api/admin/configs/${id}/drafts`, { method: "PUT", headers: withProject(), body: { env: "dev", value: { retries: 1.5 } } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("VALIDATION");
    expect(bad.body.detail).toBe("value /retries: must be integer");
    expect((await configRows(id)).drafts).toEqual([]);

    await s.api(`/api/admin/configs/${id}/drafts`, { method: "PUT", headers: withProject(), body: { env: "dev", value: { retries: 2 } } });
    // Another writer (a second process on the same file) left a draft that does not fit.
    await s.store.run("UPDATE config_drafts SET value = ? WHERE config_id = ?", JSON.stringify({ retries: "x" }), id);
    const before = await configRows(id);
    const pub = await s.api(`/api/admin/configs/${id}/publish`, { body: { env: "dev" } });
    expect(pub.status).toBe(400);
    expect(pub.body.code).toBe("VALIDATION");
    expect(pub.body.detail).toBe("draft dev /retries: must be integer");
    expect(await configRows(id)).toEqual(before);
  });

  test("draft bodies: missing value, bad env, wrong types and malformed JSON are refused", async () => {
    const { id } = await createConfig({ name: uniqueName("draft-bodies"), schema: true, value: 1 });
    const cases: [unknown, string][] = [
      [{ env: "dev" }, "VALIDATION"],
      [{ env: "qa", value: 1 }, "VALIDATION"],
      [{ env: 3, value: 1 }, "VALIDATION"],
      [{ value: 1 }, "VALIDATION"],
    ];
    for (const [body, code] of cases) {
      const r = await s.api(`/api/admin/configs/${id}/drafts`, { method: "PUT", headers: withProject(), body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe(code);
    }
    const malformed = await s.api(`/api/admin/configs/${id}/drafts`, { method: "PUT", headers: withProject(), rawBody: "{nope" });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe("BAD_REQUEST");
    const badEnv = await s.api(`/api/admin/configs/${id}/drafts/qa`, { headers: withProject() });
    expect(badEnv.status).toBe(400);
    expect(badEnv.body.code).toBe("VALIDATION");
    const badPublish = await s.api(`/api/admin/configs/${id}/publish`, { body: { env: "production" } });
    expect(badPublish.status).toBe(400);
    expect(badPublish.body.code).toBe("VALIDATION");
    expect((await configRows(id)).drafts).toEqual([]);
    expect((await activity(id)).map((a) => a.action)).toEqual(["config.create"]);
  });

  test("drafts and activity need X-Project-Id: missing is BAD_REQUEST, a foreign one is FORBIDDEN", async () => {
    const { id } = await createConfig({ name: uniqueName("header"), schema: true, value: 1 });
    const calls: [string, string, unknown?][] = [
      ["PUT", `/api/admin/configs/${id}/drafts`, { env: "dev", value: 2 }],
      ["GET", `/api/admin/configs/${id}/drafts`],
      ["GET", `/api/admin/configs/${id}/drafts/dev`],
      ["DELETE", `/api/admin/configs/${id}/drafts/dev`],
      ["GET", `/api/admin/configs/${id}/activity`],
    ];
    for (const [method, path, body] of calls) {
      const missing = await s.api(path, { method, body });
      expect(missing.status, `${method} ${path}`).toBe(400);
      expect(missing.body.code).toBe("BAD_REQUEST");
      expect(missing.body.detail).toContain("X-Project-Id");
      const wrong = await s.api(path, { method, body, headers: withProject(foreign.projectId) });
      expect(wrong.status, `${method} ${path}`).toBe(403);
      expect(wrong.body.code).toBe("FORBIDDEN");
    }
    expect((await configRows(id)).drafts).toEqual([]);
  });

  test("activity limit must be an integer from 1 to 100", async () => {
    const { id } = await createConfig({ name: uniqueName("limits"), schema: true, value: 1 });
    for (const limit of ["0", "101", "x", "1.5", ""]) {
      const r = await s.api(`/api/admin/configs/${id}/activity?limit=${limit}`, { headers: withProject() });
      expect(r.status, limit).toBe(400);
      expect(r.body.code).toBe("VALIDATION");
      expect(r.body.detail).toContain("limit");
    }
    for (let i = 0; i < 22; i++) await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { dev: i } });
    expect(await activity(id)).toHaveLength(20);
    expect(await activity(id, "?limit=100")).toHaveLength(23);
    expect(await activity(id, "?limit=1")).toHaveLength(1);
  });
});

describe("JSON Schema dialects and checks", () => {
  test("pattern and patternProperties are enforced, each pattern on its own", async () => {
    const name = uniqueName("patterns");
    const schema = {
      type: "object",
      properties: { code: { type: "string", pattern: "^[A-Z]{3}$" }, slug: { type: "string", pattern: "^[a-z-]+$" } },
      patternProperties: { "^x-": { type: "number" } },
    };
    await createConfig({ name, schema, value: { code: "ABC", slug: "a-b", "x-n": 1 } });
    for (const [value, path] of [
      [{ code: "abc", slug: "a-b" }, "/code"],
      [{ code: "ABC", slug: "A B" }, "/slug"],
      [{ code: "ABC", slug: "a", "x-n": "one" }, "/x-n"],
    ] as const) {
      const r = await s.api(`/api/admin/configs/${name}`, { method: "PATCH", body: { value } });
      expect(r.status, JSON.stringify(value)).toBe(400);
      expect(r.body.code).toBe("VALIDATION");
      expect(r.body.detail).toContain(path);
    }
    expect((await getConfig(name)).envs.prod.value).toEqual({ code: "ABC", slug: "a-b", "x-n": 1 });
  });

  test("patterns match in linear time: a catastrophic pattern cannot stall the server; lookaround is refused", async () => {
    const name = uniqueName("redos");
    await createConfig({ name, schema: { type: "string", pattern: "^(a+)+$" }, value: "aaa" });
    // With a backtracking engine this value takes longer than the test's whole time limit.
    const r = await s.api(`/api/admin/configs/${name}`, { method: "PATCH", body: { value: `${"a".repeat(50_000)}b` } });
    expect(r.status).toBe(400);
    expect(r.body.detail).toContain("must match pattern");
    const lookahead = await s.api("/api/admin/configs", { body: { name: uniqueName("lookahead"), schema: { type: "string", pattern: "(?=a)b" }, value: "b" } });
    expect(lookahead.status).toBe(400);
    expect(lookahead.body.code).toBe("VALIDATION");
    expect(lookahead.body.detail).toContain("schema");
  });

  test("draft-07 and 2020-12 schemas both work, formats included", async () => {
    const draft07 = {
      $schema: "http://json-schema.org/draft-07/schema#",
      definitions: { email: { type: "string", format: "email" } },
      type: "object",
      properties: { owner: { $ref: "#/definitions/email" } },
    };
    const d7 = await createConfig({ name: uniqueName("d7"), schema: draft07, value: { owner: "ops@example.com" } });
    const d7bad = await s.api(`/api/admin/configs/${d7.id}`, { method: "PATCH", body: { value: { owner: "not an email" } } });
    expect(d7bad.status).toBe(400);
    expect(d7bad.body.detail).toBe('value /owner: must match format "email"');

    const draft2020 = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $defs: { email: { type: "string", format: "email" } },
      type: "array",
      prefixItems: [{ $ref: "#/$defs/email" }],
      items: false,
    };
    const d2020 = await createConfig({ name: uniqueName("d2020"), schema: draft2020, value: ["a@b.co"] });
    const d2020bad = await s.api(`/api/admin/configs/${d2020.id}`, { method: "PATCH", body: { value: ["a@b.co", "extra"] } });
    expect(d2020bad.status).toBe(400);
    expect(d2020bad.body.code).toBe("VALIDATION");
    const d2020badEmail = await s.api(`/api/admin/configs/${d2020.id}`, { method: "PATCH", body: { value: ["nope"] } });
    expect(d2020badEmail.body.detail).toBe('value /0: must match format "email"');

    // No $schema means 2020-12: prefixItems is understood.
    const implicit = await createConfig({ name: uniqueName("implicit"), schema: { type: "array", prefixItems: [{ type: "integer" }] }, value: [1] });
    const implicitBad = await s.api(`/api/admin/configs/${implicit.id}`, { method: "PATCH", body: { value: ["x"] } });
    expect(implicitBad.status).toBe(400);

    // Two configs may carry the same $id.
    const withId = { $id: "https://example.com/shared.json", type: "integer" };
    await createConfig({ name: uniqueName("id-a"), schema: withId, value: 1 });
    await createConfig({ name: uniqueName("id-b"), schema: { ...withId, maximum: 3 }, value: 2 });
  });

  test("an invalid user schema is VALIDATION naming the problem, and nothing is stored", async () => {
    const cases: [unknown, string][] = [
      [{ type: "objekt" }, "schema/type"],
      [[{ type: "string" }], "schema: expected a JSON Schema object or a boolean"],
      ["string", "schema: expected a JSON Schema object or a boolean"],
      [null, "schema: expected a JSON Schema object or a boolean"],
      [{ type: "object", requird: ["a"] }, 'unknown keyword: "requird"'],
      [{ type: "string", format: "emial" }, 'unknown format "emial"'],
      [{ $schema: "http://json-schema.org/draft-04/schema#" }, "schema.$schema"],
      [{ $ref: "https://example.com/remote.json" }, "can't resolve reference"],
      [{ type: "string", pattern: "(" }, "schema"],
      [{ $schema: "http://json-schema.org/draft-07/schema#", type: "string", maxLength: -1 }, "schema/maxLength"],
      [{ description: "x".repeat(70 * 1024) }, "at most 65536"],
    ];
    for (const [schema, detail] of cases) {
      const name = uniqueName("bad-schema");
      const r = await s.api("/api/admin/configs", { body: { name, schema, value: "a" } });
      expect(r.status, JSON.stringify(schema).slice(0, 80)).toBe(400);
      expect(r.body.code).toBe("VALIDATION");
      expect(r.body.detail).toContain(detail);
      expect(await s.store.one("SELECT id FROM configs WHERE name = ?", name)).toBeUndefined();
    }
    const missing = await s.api("/api/admin/configs", { body: { name: uniqueName("no-schema"), value: 1 } });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe("VALIDATION");
    expect(missing.body.detail).toContain("schema");
  });

  test("a schema that recurses without end and over-deep values are VALIDATION, never a 500", async () => {
    const loop = await s.api("/api/admin/configs", { body: { name: uniqueName("loop"), schema: { $ref: "#" }, value: 1 } });
    expect(loop.status).toBe(400);
    expect(loop.body.code).toBe("VALIDATION");

    const { id } = await createConfig({ name: uniqueName("deep"), schema: true, value: 1 });
    // Past 64 levels the body itself is refused before anything parses it (issue 8: 100,000 `[` once stalled the server).
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    const started = performance.now();
    const r = await s.api(`/api/admin/configs/${id}`, { method: "PATCH", rawBody: `{"value": ${deep}}` });
    expect(performance.now() - started).toBeLessThan(500);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: "Body nested too deeply", code: "BAD_REQUEST", detail: "body: at most 64 levels of arrays/objects" });
    // Within the body limit, a value past its own 60 levels is VALIDATION naming the field.
    const moderate = "[".repeat(62) + "]".repeat(62);
    const m = await s.api(`/api/admin/configs/${id}`, { method: "PATCH", rawBody: `{"value": ${moderate}}` });
    expect(m.status).toBe(400);
    expect(m.body.code).toBe("VALIDATION");
    expect(m.body.detail).toContain("value: at most 60 levels");
    const deepSchema = await s.api("/api/admin/configs", { rawBody: `{"name":"${uniqueName("deep-schema")}","schema":${'{"not":'.repeat(5000)}true${"}".repeat(5000)},"value":1}` });
    expect(deepSchema.status).toBe(400);
    expect(deepSchema.body.code).toBe("BAD_REQUEST");
    expect((await getConfig(id)).envs.dev.version).toBe(1);
  });

  test("names: wrong types, '/', the cfg_ prefix and over-long names are refused", async () => {
    for (const name of [5, "", "a/b", "cfg_x", " padded", "x".repeat(129)]) {
      const r = await s.api("/api/admin/configs", { body: { name, schema: true, value: 1 } });
      expect(r.status, JSON.stringify(name)).toBe(400);
      expect(r.body.code).toBe("VALIDATION");
    }
    const malformed = await s.api("/api/admin/configs", { rawBody: '{"name": "x", ' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe("BAD_REQUEST");
  });
});

describe("tenancy", () => {
  test("another project's key sees and changes nothing", async () => {
    const name = uniqueName("private");
    const { id } = await createConfig({ name, schema: true, value: "secret" });
    await s.api(`/api/admin/configs/${id}/drafts`, { method: "PUT", headers: withProject(), body: { env: "dev", value: "draft" } });
    const before = await configRows(id);
    const revs = await revisions();
    const key = foreign.adminKey;
    const own = { "x-project-id": foreign.projectId };

    const list = await s.api("/api/admin/configs", { key });
    expect(list.status).toBe(200);
    expect((list.body as any[]).some((c) => c.id === id)).toBe(false);
    const attempts: [string, string, unknown?, Record<string, string>?][] = [
      ["GET", `/api/admin/configs/${id}`],
      ["GET", `/api/admin/configs/${name}`],
      ["PATCH", `/api/admin/configs/${id}`, { value: "stolen" }],
      ["DELETE", `/api/admin/configs/${id}`],
      ["GET", `/api/admin/configs/${id}/history`],
      ["POST", `/api/admin/configs/${id}/publish`, { env: "dev" }],
      ["PUT", `/api/admin/configs/${id}/drafts`, { env: "dev", value: "x" }, own],
      ["GET", `/api/admin/configs/${id}/drafts/dev`, undefined, own],
      ["DELETE", `/api/admin/configs/${id}/drafts/dev`, undefined, own],
      ["GET", `/api/admin/configs/${id}/activity`, undefined, own],
    ];
    for (const [method, path, body, headers] of attempts) {
      const r = await s.api(path, { method, body, key, headers });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.code).toBe("NOT_FOUND");
    }
    // The foreign key naming our project is refused outright.
    const cross = await s.api(`/api/admin/configs/${id}`, { key, headers: withProject() });
    expect(cross.status).toBe(403);
    // Same name in the other project is fine: names are unique per project.
    expect((await s.api("/api/admin/configs", { key, body: { name, schema: true, value: 1 } })).status).toBe(201);
    expect(await configRows(id)).toEqual(before);
    expect(await revisions()).toEqual(revs);
    expect((await s.server.ctx.services.configs.publishedForEnv(foreign.projectId, "dev"))[name]).toEqual({ value: 1, version: 1 });
    expect((await s.server.ctx.services.configs.publishedForEnv(s.projectId, "dev"))[name]).toEqual({ value: "secret", version: 1 });
  });
});

describe("history", () => {
  test("every published version is kept, newest first, filterable by env", async () => {
    const { id } = await createConfig({ name: uniqueName("hist"), schema: true, value: "v1" });
    await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { value: "v2" } });
    await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { prod: "v3" } });
    const prod = await s.api(`/api/admin/configs/${id}/history?env=prod`);
    expect(prod.status).toBe(200);
    expect((prod.body as any[]).map((h) => [h.version, h.value])).toEqual([[3, "v3"], [2, "v2"], [1, "v1"]]);
    expect(prod.body[0]).toMatchObject({ env: "prod", actorType: "key" });
    const all = await s.api(`/api/admin/configs/${id}/history`);
    expect(all.body).toHaveLength(7);
    const bad = await s.api(`/api/admin/configs/${id}/history?env=qa`);
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("VALIDATION");
  });
});

describe("audit", () => {
  test("every change records one audit row with the activity's facts; draft discards too; refused calls record none", async () => {
    const p = await s.newProject("Audited configs");
    const headers = { "x-project-id": p.projectId };
    const call = (path: string, init: { method?: string; body?: unknown } = {}) => s.api(path, { ...init, key: p.adminKey, headers });
    const created = await call("/api/admin/configs", { body: { name: "audited", schema: { type: "integer" }, value: 1 } });
    expect(created.status).toBe(201);
    const id: string = created.body.id;
    const base = `/api/admin/configs/${id}`;
    expect((await call(base, { method: "PATCH", body: { value: 2 } })).status).toBe(200);
    expect((await call(base, { method: "PATCH", body: { schema: { type: ["integer", "string"] } } })).status).toBe(200);
    expect((await call(`${base}/drafts`, { method: "PUT", body: { env: "dev", value: "x" } })).status).toBe(200);
    expect((await call(`${base}/drafts/dev`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`${base}/drafts`, { method: "PUT", body: { env: "prod", value: 3 } })).status).toBe(200);
    expect((await call(`${base}/publish`, { body: { env: "prod" } })).status).toBe(200);
    // Refused: nothing recorded.
    expect((await call(base, { method: "PATCH", body: { value: true } })).status).toBe(400);
    expect((await call(`${base}/drafts/dev`, { method: "DELETE" })).status).toBe(404);
    expect((await call(`${base}/publish`, { body: { env: "prod" } })).status).toBe(404);
    expect((await call("/api/admin/configs", { body: { name: "audited", schema: true, value: 1 } })).status).toBe(409);
    expect((await call(base, { method: "DELETE" })).status).toBe(204);

    // Only this module's rows: making the project also recorded project.create and key.mint.
    const rows = (await auditOf(s.store, p.projectId)).reverse().filter((r) => r.action.startsWith("config."));
    expect(rows.map((r) => [r.action, r.env])).toEqual([
      ["config.create", null],
      ["config.update", null],
      ["config.update", null],
      ["config.draft.save", "dev"],
      ["config.draft.delete", "dev"],
      ["config.draft.save", "prod"],
      ["config.publish", "prod"],
      ["config.delete", null],
    ]);
    for (const r of rows) expect(r).toMatchObject({ subjectId: id, subjectName: "audited", actorType: "key" });
    expect(rows[1]!.detail).toEqual({ versions: { dev: 2, staging: 2, prod: 2 } });
    expect(rows[2]!.detail).toEqual({ versions: {}, schemaChanged: true });
    expect(rows[6]!.detail).toEqual({ env: "prod", version: 3 });
    // The activity log keeps its own five actions (a discarded draft is not one of them).
    const activity = await s.api(`${base}/activity`, { key: p.adminKey, headers });
    expect((activity.body as any[]).map((a) => a.action)).toEqual([
      "config.delete",
      "config.publish",
      "config.draft.save",
      "config.draft.save",
      "config.update",
      "config.update",
      "config.create",
    ]);
  });
});
