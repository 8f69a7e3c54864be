import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import { currentRevision } from "../../src/lib/revisions";
import { type TestServer, expectErrorShape, startTestServer } from "../helpers";

// Rolling a config back (issue 27, item 11): the value of an earlier version published as a new version,
// the way gates and killswitches roll back.

let s: TestServer;
let seq = 0;

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const unique = (base: string) => `${base}-${++seq}`;

async function create(schema: unknown, value: unknown): Promise<string> {
  const r = await s.api("/api/admin/configs", { body: { name: unique("rb"), schema, value } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id;
}

const envsOf = async (id: string) => (await s.api(`/api/admin/configs/${id}`)).body.envs;

describe("config rollback", () => {
  test("publishes the value of version N on one env as a new version, audited, and moves only that env's snapshot", async () => {
    const id = await create({ type: "object" }, { max: 1 });
    expect((await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { prod: { max: 2 } } })).status).toBe(200);
    expect((await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { prod: { max: 3 } } })).status).toBe(200);
    const before = { dev: await currentRevision(s.store, s.projectId, "dev"), prod: await currentRevision(s.store, s.projectId, "prod") };

    const r = await s.api(`/api/admin/configs/${id}/rollback`, { body: { env: "prod", version: 1 } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({ id, env: "prod", version: 4, value: { max: 1 } });
    const envs = await envsOf(id);
    expect(envs.prod).toMatchObject({ value: { max: 1 }, version: 4 });
    expect(envs.dev).toMatchObject({ value: { max: 1 }, version: 1 });
    expect(await currentRevision(s.store, s.projectId, "prod")).toBe(before.prod + 1);
    expect(await currentRevision(s.store, s.projectId, "dev")).toBe(before.dev);
    const snapshot = await s.api("/api/sdk/v1/snapshot?env=prod", { key: s.serverKey });
    const name = (await s.api(`/api/admin/configs/${id}`)).body.name;
    expect(snapshot.body.configs[name]).toEqual({ value: { max: 1 }, version: 4 });

    const history = (await s.api(`/api/admin/configs/${id}/history?env=prod`)).body as any[];
    expect(history.map((h) => [h.version, h.value])).toEqual([
      [4, { max: 1 }],
      [3, { max: 3 }],
      [2, { max: 2 }],
      [1, { max: 1 }],
    ]);
    const audit = (await auditOf(s.store, s.projectId, 1000)).filter((a) => a.subjectId === id);
    expect(audit[0]).toMatchObject({ action: "config.rollback", env: "prod", actorType: "key", detail: { env: "prod", version: 4, from: 1 } });
    // The activity log keeps its five actions: a rollback is a publish there, saying which version it restored.
    const activity = (await s.api(`/api/admin/configs/${id}/activity`, { headers: { "x-project-id": s.projectId } })).body as any[];
    expect(activity[0]).toMatchObject({ action: "config.publish", payload: { env: "prod", version: 4, rollbackOf: 1 } });
  });

  test("an unknown version, one of another env, another project's config and bad bodies are refused and change nothing", async () => {
    const id = await create({ type: "integer" }, 1);
    expect((await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { staging: 2 } })).status).toBe(200);
    const unknown = await s.api(`/api/admin/configs/${id}/rollback`, { body: { env: "staging", version: 9 } });
    expect(unknown.status).toBe(404);
    expect(expectErrorShape(unknown.body)).toMatchObject({ code: "NOT_FOUND" });
    expect(unknown.body.detail).toContain("version");
    // Version 2 exists on staging, not on dev.
    expect((await s.api(`/api/admin/configs/${id}/rollback`, { body: { env: "dev", version: 2 } })).status).toBe(404);
    const foreign = await s.newProject("Rollback foreign");
    expect((await s.api(`/api/admin/configs/${id}/rollback`, { key: foreign.adminKey, body: { env: "staging", version: 1 } })).status).toBe(404);
    for (const body of [{ env: "staging" }, { env: "qa", version: 1 }, { env: "staging", version: 0 }, { env: "staging", version: "1" }, { env: "staging", version: 1, extra: true }]) {
      const r = await s.api(`/api/admin/configs/${id}/rollback`, { body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(expectErrorShape(r.body).code).toBe("VALIDATION");
    }
    expect((await envsOf(id)).staging).toMatchObject({ value: 2, version: 2 });
    expect((await envsOf(id)).dev).toMatchObject({ value: 1, version: 1 });
    expect((await auditOf(s.store, s.projectId, 1000)).filter((a) => a.subjectId === id && a.action === "config.rollback")).toEqual([]);
  });

  test("an earlier value that no longer fits the current schema is VALIDATION naming it, and nothing is published", async () => {
    const id = await create({ type: ["integer", "string"] }, "old");
    expect((await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { value: 5 } })).status).toBe(200);
    expect((await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { schema: { type: "integer" } } })).status).toBe(200);
    const r = await s.api(`/api/admin/configs/${id}/rollback`, { body: { env: "dev", version: 1 } });
    expect(r.status).toBe(400);
    expect(expectErrorShape(r.body).code).toBe("VALIDATION");
    expect(r.body.detail).toContain("version 1");
    expect((await envsOf(id)).dev).toMatchObject({ value: 5, version: 2 });
  });

  test("20 concurrent rollbacks beside 10 PATCHes of the same env give 30 distinct versions, none lost", async () => {
    const id = await create({ type: "integer" }, 0);
    const calls = [
      ...Array.from({ length: 20 }, () => s.api(`/api/admin/configs/${id}/rollback`, { body: { env: "dev", version: 1 } })),
      ...Array.from({ length: 10 }, (_, i) => s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { dev: 100 + i } })),
    ];
    const results = await Promise.all(calls);
    expect(results.map((r) => r.status)).toEqual(Array(30).fill(200));
    const versions = results.slice(0, 20).map((r) => r.body.version as number);
    expect(new Set(versions).size).toBe(20);
    expect(results.slice(0, 20).every((r) => r.body.value === 0)).toBe(true);
    expect((await envsOf(id)).dev.version).toBe(31);
    const history = (await s.api(`/api/admin/configs/${id}/history?env=dev&limit=100`)).body as any[];
    expect(history.map((h) => h.version)).toEqual(Array.from({ length: 31 }, (_, i) => 31 - i));
    expect((await auditOf(s.store, s.projectId, 1000)).filter((a) => a.subjectId === id && a.action === "config.rollback")).toHaveLength(20);
  });
});
