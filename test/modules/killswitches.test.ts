import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { auditOf } from "../../src/lib/audit";
import { ENVS, type Env } from "../../src/lib/envs";
import { currentRevision } from "../../src/lib/revisions";
import { expectErrorShape, startTestServer, type ProjectKeys, type TestServer } from "../helpers";

const BASE = "/api/admin/killswitches";

let s: TestServer;
let foreign: ProjectKeys;
let counter = 0;

beforeAll(async () => {
  s = await startTestServer();
  foreign = await s.newProject("Foreign");
});
afterAll(() => s.stop());

/** A fresh killswitch with a unique name; returns its id and name. */
async function create(body: Record<string, unknown> = {}): Promise<{ id: string; name: string }> {
  const name = (body.name as string | undefined) ?? `ks-${++counter}-${Date.now()}`;
  const r = await s.api(BASE, { body: { name, ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

async function get(idOrName: string, key?: string) {
  return s.api(`${BASE}/${encodeURIComponent(idOrName)}`, { key });
}

/** The versions of every env, read back over HTTP. */
async function versions(id: string): Promise<Record<Env, number>> {
  const r = await get(id);
  expect(r.status).toBe(200);
  return { dev: r.body.envs.dev.version, staging: r.body.envs.staging.version, prod: r.body.envs.prod.version };
}

async function revisions(projectId = s.projectId): Promise<Record<Env, number>> {
  const [dev, staging, prod] = await Promise.all(ENVS.map((env) => currentRevision(s.store, projectId, env)));
  return { dev: dev!, staging: staging!, prod: prod! };
}

describe("create, list, get, delete", () => {
  test("create gives {id, name} and version 1 with the given value and switches on every env", async () => {
    const r = await s.api(BASE, { body: { name: "payments", value: true, switches: { eu: true, us: false }, description: "Kill payments" } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(["id", "name"]);
    expect(r.body.id).toMatch(/^ksw_[A-Za-z0-9]+$/);
    expect(r.body.name).toBe("payments");

    const ks = (await get(r.body.id)).body;
    expect(ks).toMatchObject({ id: r.body.id, name: "payments", description: "Kill payments" });
    expect(typeof ks.createdAt).toBe("string");
    expect(typeof ks.updatedAt).toBe("string");
    for (const env of ENVS) {
      expect(ks.envs[env]).toMatchObject({ value: true, switches: { eu: true, us: false }, version: 1 });
      expect(ks.envs[env].updatedBy).toContain("@");
      expect(typeof ks.envs[env].updatedAt).toBe("string");
    }
  });

  test("defaults: value false, no switches, no description", async () => {
    const { id } = await create();
    const ks = (await get(id)).body;
    expect(ks).not.toHaveProperty("description");
    for (const env of ENVS) expect(ks.envs[env]).toMatchObject({ value: false, switches: {}, version: 1 });
  });

  test("get by id and by name give the same record; unknown is NOT_FOUND", async () => {
    const { id, name } = await create({ name: "by name test" });
    const byId = await get(id);
    const byName = await get(name);
    expect(byId.status).toBe(200);
    expect(byName.body).toEqual(byId.body);
    const missing = await get("no-such-killswitch");
    expect(missing.status).toBe(404);
    expect(expectErrorShape(missing.body).code).toBe("NOT_FOUND");
  });

  test("a duplicate name is 409 ALREADY_EXISTS and creates nothing", async () => {
    const { name } = await create();
    const before = (await s.api(BASE)).body.length;
    const r = await s.api(BASE, { body: { name, value: true } });
    expect(r.status).toBe(409);
    expect(expectErrorShape(r.body).code).toBe("ALREADY_EXISTS");
    expect((await s.api(BASE)).body.length).toBe(before);
    expect((await get(name)).body.envs.prod.value).toBe(false);
  });

  test("the same name in another project is allowed", async () => {
    const { name } = await create();
    const r = await s.api(BASE, { body: { name }, key: foreign.adminKey });
    expect(r.status).toBe(201);
  });

  test("list is a bare array of full records; q filters name and description, case-insensitively", async () => {
    const a = await create({ name: "Zebra-Search-1" });
    const b = await create({ name: "other-2", description: "mentions ZEBRA-search too" });
    const c = await create({ name: "unrelated-3" });
    const all = await s.api(BASE);
    expect(Array.isArray(all.body)).toBe(true);
    expect(all.body.map((k: any) => k.id)).toEqual(expect.arrayContaining([a.id, b.id, c.id]));
    const full = all.body.find((k: any) => k.id === a.id);
    expect(full.envs.prod).toMatchObject({ value: false, switches: {}, version: 1 });
    const filtered = await s.api(`${BASE}?q=zebra-SEARCH`);
    expect(filtered.body.map((k: any) => k.id).sort()).toEqual([a.id, b.id].sort());
    expect((await s.api(`${BASE}?q=${"x".repeat(101)}`)).status).toBe(400);
  });

  test("delete by name or id gives 204; it is gone, its name is free again", async () => {
    const a = await create();
    const b = await create();
    expect((await s.api(`${BASE}/${a.name}`, { method: "DELETE" })).status).toBe(204);
    expect((await s.api(`${BASE}/${b.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await get(a.id)).status).toBe(404);
    expect((await get(b.name)).status).toBe(404);
    expect((await s.api(BASE)).body.some((k: any) => k.id === a.id || k.id === b.id)).toBe(false);
    expect((await s.api(`${BASE}/${a.id}`, { method: "DELETE" })).status).toBe(404);
    expect((await s.api(BASE, { body: { name: a.name } })).status).toBe(201);
  });
});

describe("toggle", () => {
  test("rule 1: {} flips the flat value on prod only", async () => {
    const { id } = await create({ switches: { a: true } });
    const r = await s.api(`${BASE}/${id}/toggle`, { body: {} });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id, env: "prod", switchKey: null, previous: false, value: true, version: 2, published: { value: true, switches: { a: true } } });
    const back = await s.api(`${BASE}/${id}/toggle`, { body: {} });
    expect(back.body).toMatchObject({ previous: true, value: false, version: 3 });
    expect(await versions(id)).toEqual({ dev: 1, staging: 1, prod: 3 });
    expect((await get(id)).body.envs.dev.value).toBe(false);
  });

  test("a toggle with no body at all is the same as {}", async () => {
    const { id } = await create();
    const r = await s.api(`${BASE}/${id}/toggle`, { method: "POST" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ env: "prod", switchKey: null, previous: false, value: true, version: 2 });
  });

  test("rule 2: switchKey only flips that entry; a missing entry is created from false", async () => {
    const { id } = await create({ switches: { eu: true } });
    const flip = await s.api(`${BASE}/${id}/toggle`, { body: { switchKey: "eu" } });
    expect(flip.body).toMatchObject({ env: "prod", switchKey: "eu", previous: true, value: false, version: 2 });
    expect(flip.body.published).toEqual({ value: false, switches: { eu: false } });
    const created = await s.api(`${BASE}/${id}/toggle`, { body: { switchKey: "us" } });
    expect(created.body).toMatchObject({ switchKey: "us", previous: false, value: true, version: 3 });
    expect(created.body.published).toEqual({ value: false, switches: { eu: false, us: true } });
    const ks = (await get(id)).body;
    expect(ks.envs.prod.switches).toEqual({ eu: false, us: true });
    expect(ks.envs.prod.value).toBe(false);
    expect(ks.envs.staging.switches).toEqual({ eu: true });
  });

  test("rule 3: switchKey with a boolean publishes exactly it; a retry gives the same value", async () => {
    const { id } = await create();
    const first = await s.api(`${BASE}/${id}/toggle`, { body: { switchKey: "beta", value: true, env: "staging" } });
    const retry = await s.api(`${BASE}/${id}/toggle`, { body: { switchKey: "beta", value: true, env: "staging" } });
    expect(first.body).toMatchObject({ env: "staging", switchKey: "beta", previous: false, value: true, version: 2 });
    expect(retry.body).toMatchObject({ env: "staging", switchKey: "beta", previous: true, value: true, version: 3 });
    expect((await get(id)).body.envs.staging.switches).toEqual({ beta: true });
    // A flat value given explicitly, too.
    const flat = await s.api(`${BASE}/${id}/toggle`, { body: { value: false } });
    expect(flat.body).toMatchObject({ env: "prod", previous: false, value: false, version: 2 });
    // null means flip.
    const flip = await s.api(`${BASE}/${id}/toggle`, { body: { value: null, switchKey: "beta", env: "staging" } });
    expect(flip.body).toMatchObject({ previous: true, value: false, version: 4 });
  });

  test("rule 4: each toggle publishes exactly one version, on its env only", async () => {
    const { id } = await create();
    for (const env of ENVS) {
      const before = await versions(id);
      const r = await s.api(`${BASE}/${id}/toggle`, { body: { env } });
      expect(r.body.version).toBe(before[env] + 1);
      expect(await versions(id)).toEqual({ ...before, [env]: before[env] + 1 });
    }
  });

  test("50 concurrent toggles give 50 distinct versions and final version 51", async () => {
    const { id } = await create();
    const results = await Promise.all(Array.from({ length: 50 }, () => s.api(`${BASE}/${id}/toggle`, { body: {} })));
    for (const r of results) expect(r.status).toBe(200);
    const got = results.map((r) => r.body.version as number);
    expect(new Set(got).size).toBe(50);
    expect([...got].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 2));
    const ks = (await get(id)).body;
    expect(ks.envs.prod.version).toBe(51);
    // 50 flips from false: back to false; every flip saw the previous one.
    expect(ks.envs.prod.value).toBe(false);
    expect(results.filter((r) => r.body.value === true).length).toBe(25);
    expect(await versions(id)).toEqual({ dev: 1, staging: 1, prod: 51 });
  });

  test("toggles by id and by name at once serialise on one lock: no version is lost or handed out twice", async () => {
    const { id, name } = await create();
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => s.api(`${BASE}/${i % 2 ? id : encodeURIComponent(name)}/toggle`, { body: {} })),
    );
    for (const r of results) expect(r.status).toBe(200);
    expect(results.map((r) => r.body.version as number).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 2));
    expect((await get(id)).body.envs.prod).toMatchObject({ value: false, version: 41 });
  });

  test("two processes toggling the same store lose nothing", async () => {
    const { id } = await create();
    const N = 120;
    const child = Bun.spawn(
      [process.execPath, join(import.meta.dir, "../fixtures/killswitch-toggler.ts"), s.dataDir, s.projectId, id, String(N)],
      // The child opens the test server's store: its PostgreSQL database on PostgreSQL runs, else the data dir's file.
      { stdin: "pipe", stdout: "pipe", stderr: "pipe", env: { ...process.env, SERVICE_STORE_URL: s.storeUrl ?? "" } },
    );
    const reader = child.stdout.getReader();
    let out = "";
    while (!out.includes("ready\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`toggler exited early: ${await new Response(child.stderr).text()}`);
      out += new TextDecoder().decode(value);
    }
    child.stdin.write("go\n");
    child.stdin.end();

    const ours: number[] = [];
    for (let i = 0; i < N; i++) {
      const r = await s.api(`${BASE}/${id}/toggle`, { body: {} });
      expect(r.status).toBe(200);
      ours.push(r.body.version);
    }
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      out += new TextDecoder().decode(value);
    }
    const code = await child.exited;
    expect(code, await new Response(child.stderr).text()).toBe(0);
    const theirs: number[] = JSON.parse(out.slice(out.indexOf("{")).trim()).versions;
    expect(theirs.length).toBe(N);

    const all = [...ours, ...theirs].sort((a, b) => a - b);
    expect(all).toEqual(Array.from({ length: 2 * N }, (_, i) => i + 2));
    const ks = (await get(id)).body;
    expect(ks.envs.prod.version).toBe(1 + 2 * N);
    expect(ks.envs.prod.value).toBe(false);
    const history = await s.api(`${BASE}/${id}/history?env=prod&limit=1000`);
    expect(history.body.length).toBe(1 + 2 * N);
    expect(history.body.filter((h: any) => h.actorEmail === "second-process@example.com").length).toBe(N);
  }, 30_000);
});

describe("switch, value, history, rollback", () => {
  test("PUT /switch sets or adds one entry on one env; false keeps the entry", async () => {
    const { id, name } = await create({ switches: { eu: true } });
    const r = await s.api(`${BASE}/${name}/switch`, { method: "PUT", body: { env: "dev", switchKey: "eu", value: false } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id, env: "dev", switchKey: "eu", value: false });
    const add = await s.api(`${BASE}/${id}/switch`, { method: "PUT", body: { env: "dev", switchKey: "apac", value: true } });
    expect(add.body).toEqual({ id, env: "dev", switchKey: "apac", value: true });
    const ks = (await get(id)).body;
    expect(ks.envs.dev.switches).toEqual({ eu: false, apac: true });
    expect(ks.envs.prod.switches).toEqual({ eu: true });
    expect(await versions(id)).toEqual({ dev: 3, staging: 1, prod: 1 });
  });

  test("PUT /switch needs env, switchKey and value", async () => {
    const { id } = await create();
    for (const body of [{ switchKey: "a", value: true }, { env: "dev", value: true }, { env: "dev", switchKey: "a" }]) {
      const r = await s.api(`${BASE}/${id}/switch`, { method: "PUT", body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(expectErrorShape(r.body).code).toBe("VALIDATION");
    }
    expect(await versions(id)).toEqual({ dev: 1, staging: 1, prod: 1 });
  });

  test("DELETE /switch removes an entry (body or query), one version; a missing entry is NOT_FOUND", async () => {
    const { id } = await create({ switches: { a: true, b: false } });
    const viaBody = await s.api(`${BASE}/${id}/switch`, { method: "DELETE", body: { env: "staging", switchKey: "a" } });
    expect(viaBody.status).toBe(200);
    expect(viaBody.body).toMatchObject({ id, env: "staging", switchKey: "a", version: 2 });
    const viaQuery = await s.api(`${BASE}/${id}/switch?env=staging&switchKey=b`, { method: "DELETE" });
    expect(viaQuery.status).toBe(200);
    expect(viaQuery.body).toMatchObject({ env: "staging", switchKey: "b", version: 3 });
    expect((await get(id)).body.envs.staging.switches).toEqual({});
    expect((await get(id)).body.envs.prod.switches).toEqual({ a: true, b: false });

    const again = await s.api(`${BASE}/${id}/switch`, { method: "DELETE", body: { env: "staging", switchKey: "a" } });
    expect(again.status).toBe(404);
    expect(expectErrorShape(again.body).code).toBe("NOT_FOUND");
    const neither = await s.api(`${BASE}/${id}/switch`, { method: "DELETE" });
    expect(neither.status).toBe(400);
    expect(expectErrorShape(neither.body).code).toBe("VALIDATION");
    const conflicting = await s.api(`${BASE}/${id}/switch?env=dev`, { method: "DELETE", body: { env: "prod", switchKey: "a" } });
    expect(conflicting.status).toBe(400);
    expect(await versions(id)).toEqual({ dev: 1, staging: 3, prod: 1 });
  });

  test("PUT /value sets the flat value unconditionally, one version each call", async () => {
    const { id } = await create({ switches: { k: true } });
    const r = await s.api(`${BASE}/${id}/value`, { method: "PUT", body: { env: "prod", value: true } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id, env: "prod", value: true, version: 2 });
    const same = await s.api(`${BASE}/${id}/value`, { method: "PUT", body: { env: "prod", value: true } });
    expect(same.body).toEqual({ id, env: "prod", value: true, version: 3 });
    const ks = (await get(id)).body;
    expect(ks.envs.prod).toMatchObject({ value: true, switches: { k: true }, version: 3 });
    expect(ks.envs.dev.value).toBe(false);
  });

  test("history lists every published version newest first, per env or for all", async () => {
    const { id } = await create();
    await s.api(`${BASE}/${id}/toggle`, { body: {} });
    await s.api(`${BASE}/${id}/switch`, { method: "PUT", body: { env: "prod", switchKey: "x", value: true } });
    await s.api(`${BASE}/${id}/value`, { method: "PUT", body: { env: "dev", value: true } });
    await s.api(`${BASE}/${id}/switch?env=prod&switchKey=x`, { method: "DELETE" });

    const prod = await s.api(`${BASE}/${id}/history?env=prod`);
    expect(prod.status).toBe(200);
    expect(prod.body.map((h: any) => [h.version, h.action])).toEqual([
      [4, "killswitch.switch.delete"],
      [3, "killswitch.switch.set"],
      [2, "killswitch.toggle"],
      [1, "killswitch.create"],
    ]);
    expect(prod.body[1]).toMatchObject({ env: "prod", value: true, switches: { x: true }, actorType: "key" });
    expect(Object.keys(prod.body[0]).sort()).toEqual(["action", "actorEmail", "actorType", "createdAt", "env", "switches", "value", "version"]);
    expect(prod.body[0].actorEmail).toContain("@");

    const all = await s.api(`${BASE}/${id}/history`);
    expect(all.body.length).toBe(3 + 4);
    expect(all.body[0]).toMatchObject({ env: "prod", action: "killswitch.switch.delete" });
    expect(all.body[1]).toMatchObject({ env: "dev", version: 2, action: "killswitch.value.set", value: true });
    expect((await s.api(`${BASE}/${id}/history?limit=2`)).body.length).toBe(2);
    expect((await s.api(`${BASE}/${id}/history?limit=1000`)).body.length).toBe(7);
    for (const limit of ["0", "-1", "1001", "1.5", "x", ""]) {
      const r = await s.api(`${BASE}/${id}/history?limit=${limit}`);
      expect(r.status, limit).toBe(400);
      expect(expectErrorShape(r.body).code, limit).toBe("VALIDATION");
      expect(r.body.detail, limit).toStartWith("limit:");
    }
    expect((await s.api(`${BASE}/${id}/history?env=qa`)).status).toBe(400);
    expect((await s.api(`${BASE}/nope/history`)).status).toBe(404);
  });

  test("rollback publishes a new version equal to an earlier one", async () => {
    const { id } = await create({ switches: { a: true } });
    await s.api(`${BASE}/${id}/toggle`, { body: { env: "staging" } }); // v2: value true
    await s.api(`${BASE}/${id}/toggle`, { body: { env: "staging", switchKey: "a" } }); // v3: a false
    await s.api(`${BASE}/${id}/toggle`, { body: { env: "staging", switchKey: "b" } }); // v4: b true
    const r = await s.api(`${BASE}/${id}/rollback`, { body: { env: "staging", version: 2 } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id, env: "staging", switchKey: null, previous: true, value: true, version: 5, published: { value: true, switches: { a: true } } });
    expect((await get(id)).body.envs.staging).toMatchObject({ value: true, switches: { a: true }, version: 5 });
    const history = (await s.api(`${BASE}/${id}/history?env=staging`)).body;
    expect(history[0]).toMatchObject({ version: 5, action: "killswitch.rollback", value: true, switches: { a: true } });

    const unknown = await s.api(`${BASE}/${id}/rollback`, { body: { env: "staging", version: 99 } });
    expect(unknown.status).toBe(404);
    expect(expectErrorShape(unknown.body).code).toBe("NOT_FOUND");
    // Version 4 exists on staging but not on dev.
    expect((await s.api(`${BASE}/${id}/rollback`, { body: { env: "dev", version: 4 } })).status).toBe(404);
    expect(await versions(id)).toEqual({ dev: 1, staging: 5, prod: 1 });
  });
});

describe("bad input changes nothing", () => {
  test("create: wrong names and types", async () => {
    const before = (await s.api(BASE)).body.length;
    const cases: [unknown, string][] = [
      [{}, "VALIDATION"],
      [{ name: "" }, "VALIDATION"],
      [{ name: "x".repeat(129) }, "VALIDATION"],
      [{ name: "has/slash" }, "VALIDATION"],
      [{ name: " padded" }, "VALIDATION"],
      [{ name: "ksw_lookslikeanid" }, "VALIDATION"],
      [{ name: 5 }, "VALIDATION"],
      [{ name: "ok-name-bad-value", value: "yes" }, "VALIDATION"],
      [{ name: "ok-name-bad-switches", switches: { a: "yes" } }, "VALIDATION"],
      [{ name: "ok-name-bad-switches-2", switches: ["a"] }, "VALIDATION"],
      // Not turned into an empty map: a wrong type is refused.
      [{ name: "ok-name-bad-switches-3", switches: 5 }, "VALIDATION"],
      [{ name: "ok-name-bad-switches-4", switches: [] }, "VALIDATION"],
      [{ name: "ok-name-bad-switches-5", switches: "on" }, "VALIDATION"],
      [{ name: "ok-name-empty-key", switches: { "": true } }, "VALIDATION"],
      [{ name: "ok-name-long-key", switches: { ["k".repeat(129)]: true } }, "VALIDATION"],
      [{ name: "ok-name-description", description: 7 }, "VALIDATION"],
    ];
    for (const [body, code] of cases) {
      const r = await s.api(BASE, { body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      const err = expectErrorShape(r.body);
      expect(err.code, JSON.stringify(body)).toBe(code);
      expect(err.detail, JSON.stringify(body)).toBeString();
    }
    const slash = await s.api(BASE, { body: { name: "a/b" } });
    expect(slash.body.detail).toContain("name");
    for (const raw of ["{bad json", "[]", "null", '"name"']) {
      const r = await s.api(BASE, { rawBody: raw });
      expect(r.status, raw).toBe(400);
      expect(expectErrorShape(r.body).code, raw).toBe(raw.startsWith("{") ? "BAD_REQUEST" : "VALIDATION");
    }
    expect((await s.api(BASE)).body.length).toBe(before);
    expect((await s.api(BASE, { body: { name: "x".repeat(128) } })).status).toBe(201);
  });

  test("toggle, switch, value, rollback: malformed or wrongly typed bodies", async () => {
    const { id } = await create({ switches: { a: true } });
    const snapshot = (await get(id)).body;
    const calls: [string, string, unknown, string][] = [
      ["POST", "toggle", { env: "qa" }, "VALIDATION"],
      ["POST", "toggle", { value: "yes" }, "VALIDATION"],
      ["POST", "toggle", { value: "true" }, "VALIDATION"],
      ["POST", "toggle", { switchKey: 5 }, "VALIDATION"],
      ["POST", "toggle", { switchKey: "" }, "VALIDATION"],
      ["PUT", "switch", { env: "qa", switchKey: "a", value: true }, "VALIDATION"],
      ["PUT", "switch", { env: "dev", switchKey: 5, value: true }, "VALIDATION"],
      ["PUT", "switch", { env: "dev", switchKey: "a", value: "yes" }, "VALIDATION"],
      ["DELETE", "switch", { env: "qa", switchKey: "a" }, "VALIDATION"],
      ["DELETE", "switch", { env: "dev", switchKey: 5 }, "VALIDATION"],
      ["PUT", "value", { env: "dev", value: "yes" }, "VALIDATION"],
      ["PUT", "value", { env: "dev" }, "VALIDATION"],
      ["PUT", "value", { value: true }, "VALIDATION"],
      ["POST", "rollback", { env: "dev", version: "1" }, "VALIDATION"],
      ["POST", "rollback", { env: "dev", version: 0 }, "VALIDATION"],
      ["POST", "rollback", { env: "dev", version: 1.5 }, "VALIDATION"],
      ["POST", "rollback", { env: "dev" }, "VALIDATION"],
    ];
    for (const [method, sub, body, code] of calls) {
      const r = await s.api(`${BASE}/${id}/${sub}`, { method, body });
      const label = `${method} ${sub} ${JSON.stringify(body)}`;
      expect(r.status, label).toBe(400);
      expect(expectErrorShape(r.body).code, label).toBe(code);
    }
    for (const [method, sub] of [["POST", "toggle"], ["PUT", "switch"], ["DELETE", "switch"], ["PUT", "value"], ["POST", "rollback"]]) {
      for (const raw of ["{bad", "[]", "null", "true", '"x"']) {
        const r = await s.api(`${BASE}/${id}/${sub}`, { method, rawBody: raw });
        const label = `${method} ${sub} ${raw}`;
        expect(r.status, label).toBe(400);
        expect(expectErrorShape(r.body).code, label).toBe(raw === "{bad" ? "BAD_REQUEST" : "VALIDATION");
      }
    }
    // JSON sent as text/plain is still read as JSON, never silently taken as {}.
    const plain = await s.api(`${BASE}/${id}/toggle`, { rawBody: JSON.stringify({ switchKey: "a", value: true }), headers: { "content-type": "text/plain" } });
    expect(plain.status).toBe(200);
    expect(plain.body).toMatchObject({ switchKey: "a", previous: true, value: true, version: 2 });
    const after = (await get(id)).body;
    expect(after.envs.dev).toEqual(snapshot.envs.dev);
    expect(after.envs.staging).toEqual(snapshot.envs.staging);
    expect(after.envs.prod).toMatchObject({ value: false, switches: { a: true }, version: 2 });
  });

  test("an unknown id or name is NOT_FOUND on every route", async () => {
    const calls: [string, string, unknown][] = [
      ["GET", "", undefined],
      ["DELETE", "", undefined],
      ["POST", "/toggle", {}],
      ["PUT", "/switch", { env: "dev", switchKey: "a", value: true }],
      ["DELETE", "/switch", { env: "dev", switchKey: "a" }],
      ["PUT", "/value", { env: "dev", value: true }],
      ["GET", "/history", undefined],
      ["POST", "/rollback", { env: "dev", version: 1 }],
    ];
    for (const [method, sub, body] of calls) {
      const r = await s.api(`${BASE}/ksw_doesnotexist${sub}`, { method, body });
      expect(r.status, `${method} ${sub}`).toBe(404);
      expect(expectErrorShape(r.body).code).toBe("NOT_FOUND");
    }
    expect((await s.api(`${BASE}/${"x".repeat(129)}`)).status).toBe(400);
  });

  test("sub-switch keys that are Object.prototype names are ordinary keys; __proto__ is refused", async () => {
    const { id } = await create();
    const r = await s.api(`${BASE}/${id}/toggle`, { body: { switchKey: "toString" } });
    expect(r.body).toMatchObject({ previous: false, value: true });
    const ctor = await s.api(`${BASE}/${id}/switch`, { method: "PUT", body: { env: "prod", switchKey: "constructor", value: false } });
    expect(ctor.status).toBe(200);
    const proto = await s.api(`${BASE}/${id}/switch`, { method: "PUT", body: { env: "prod", switchKey: "__proto__", value: true } });
    expect(proto.status).toBe(400);
    expect(expectErrorShape(proto.body).code).toBe("VALIDATION");
    expect((await s.api(`${BASE}/${id}/toggle`, { body: { switchKey: "__proto__" } })).status).toBe(400);
    expect((await s.api(BASE, { body: { name: "__proto__" } })).status).toBe(400);
    const ks = (await get(id)).body;
    expect(ks.envs.prod.switches).toEqual({ toString: true, constructor: false });
    expect(ks.envs.prod.version).toBe(3);
    const published = await s.server.ctx.services.killswitches.publishedForEnv(s.projectId, "prod");
    expect(published["constructor"]).toBeUndefined();
    expect(published["toString"]).toBeUndefined();
    expect(published[ks.name]!.switches["hasOwnProperty"]).toBeUndefined();
    expect(published[ks.name]!.switches["toString"]).toBe(true);
    expect(published[ks.name]!.switches["constructor"]).toBe(false);
  });
});

describe("tenancy", () => {
  test("a foreign project's admin key sees nothing and changes nothing", async () => {
    const { id, name } = await create({ switches: { a: true } });
    const before = (await get(id)).body;
    const list = await s.api(BASE, { key: foreign.adminKey });
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(id);
    const calls: [string, string, unknown][] = [
      ["GET", "", undefined],
      ["DELETE", "", undefined],
      ["POST", "/toggle", {}],
      ["PUT", "/switch", { env: "prod", switchKey: "a", value: false }],
      ["DELETE", "/switch", { env: "prod", switchKey: "a" }],
      ["PUT", "/value", { env: "prod", value: true }],
      ["GET", "/history", undefined],
      ["POST", "/rollback", { env: "prod", version: 1 }],
    ];
    for (const target of [id, name]) {
      for (const [method, sub, body] of calls) {
        const own = await s.api(`${BASE}/${encodeURIComponent(target)}${sub}`, { method, body, key: foreign.adminKey });
        expect(own.status, `${method} ${sub} as foreign`).toBe(404);
        expect(expectErrorShape(own.body).code).toBe("NOT_FOUND");
        const naming = await s.api(`${BASE}/${encodeURIComponent(target)}${sub}`, {
          method,
          body,
          key: foreign.adminKey,
          headers: { "x-project-id": s.projectId },
        });
        expect(naming.status, `${method} ${sub} naming our project`).toBe(403);
        expect(expectErrorShape(naming.body).code).toBe("FORBIDDEN");
      }
    }
    const create403 = await s.api(BASE, { body: { name: "intruder" }, key: foreign.adminKey, headers: { "x-project-id": s.projectId } });
    expect(create403.status).toBe(403);
    expect((await get(id)).body).toEqual(before);
    expect((await get("intruder")).status).toBe(404);
  });

  test("X-Project-Id: optional, our own is accepted, a mismatch is FORBIDDEN", async () => {
    const ok = await s.api(BASE, { body: { name: `with-header-${Date.now()}` }, headers: { "x-project-id": s.projectId } });
    expect(ok.status).toBe(201);
    const mismatch = await s.api(BASE, { body: { name: `mismatch-${Date.now()}` }, headers: { "x-project-id": foreign.projectId } });
    expect(mismatch.status).toBe(403);
    expect(expectErrorShape(mismatch.body).code).toBe("FORBIDDEN");
    const toggle = await s.api(`${BASE}/${ok.body.id}/toggle`, { body: {}, headers: { "x-project-id": foreign.projectId } });
    expect(toggle.status).toBe(403);
    expect((await versions(ok.body.id)).prod).toBe(1);
  });

  test("bad bodies without a credential are 401, not a body error", async () => {
    const { id } = await create();
    for (const raw of ["{bad", "[]"]) {
      const r = await s.api(`${BASE}/${id}/toggle`, { rawBody: raw, key: null });
      expect(r.status, raw).toBe(401);
    }
  });
});

describe("revisions", () => {
  test("every publish bumps its env's revision by exactly one; delete bumps every env", async () => {
    const p = await s.newProject("Revisions");
    const call = (path: string, init: { method?: string; body?: unknown } = {}) => s.api(path, { ...init, key: p.adminKey });
    const start = await revisions(p.projectId);
    const { body: created } = await call(BASE, { body: { name: "rev" } });
    let expected = { dev: start.dev + 1, staging: start.staging + 1, prod: start.prod + 1 };
    expect(await revisions(p.projectId)).toEqual(expected);

    const steps: [string, { method?: string; body?: unknown }, Env][] = [
      [`${BASE}/rev/toggle`, { body: {} }, "prod"],
      [`${BASE}/rev/toggle`, { body: { env: "dev", switchKey: "a" } }, "dev"],
      [`${BASE}/rev/switch`, { method: "PUT", body: { env: "staging", switchKey: "b", value: true } }, "staging"],
      [`${BASE}/rev/switch`, { method: "DELETE", body: { env: "staging", switchKey: "b" } }, "staging"],
      [`${BASE}/rev/value`, { method: "PUT", body: { env: "dev", value: true } }, "dev"],
      [`${BASE}/rev/rollback`, { body: { env: "prod", version: 1 } }, "prod"],
    ];
    for (const [path, init, env] of steps) {
      const r = await call(path, init);
      expect(r.status, path).toBe(200);
      expected = { ...expected, [env]: expected[env] + 1 };
      expect(await revisions(p.projectId), `${init.method ?? "POST"} ${path}`).toEqual(expected);
    }
    // Refused calls bump nothing.
    await call(`${BASE}/rev/switch`, { method: "DELETE", body: { env: "staging", switchKey: "missing" } });
    await call(`${BASE}/rev/rollback`, { body: { env: "prod", version: 99 } });
    await call(`${BASE}/rev/toggle`, { body: { env: "qa" } });
    await call(BASE, { body: { name: "rev" } });
    expect(await revisions(p.projectId)).toEqual(expected);

    expect((await call(`${BASE}/${created.id}`, { method: "DELETE" })).status).toBe(204);
    expect(await revisions(p.projectId)).toEqual({ dev: expected.dev + 1, staging: expected.staging + 1, prod: expected.prod + 1 });
    // Our main project's revisions were never touched by this project's publishes.
  });

  test("publishedForEnv gives each killswitch's published state and version on that env", async () => {
    const p = await s.newProject("Published");
    const svc = s.server.ctx.services.killswitches;
    const actor = { email: "tester@example.com", type: "user" };
    await svc.create(p.projectId, { name: "one", value: true, switches: { x: false } }, actor);
    await svc.create(p.projectId, { name: "two" }, actor);
    await svc.create(p.projectId, { name: "Three" }, actor);
    await svc.toggle(p.projectId, "two", { env: "dev", switchKey: "y" }, actor);
    const prod = await svc.publishedForEnv(p.projectId, "prod");
    expect({ ...prod }).toEqual({
      one: { value: true, switches: { x: false }, version: 1 },
      two: { value: false, switches: {}, version: 1 },
      Three: { value: false, switches: {}, version: 1 },
    });
    // Names in code-unit order on both engines, so every server serialises the same snapshot bytes.
    expect(Object.keys(prod)).toEqual(["Three", "one", "two"]);
    const dev = await svc.publishedForEnv(p.projectId, "dev");
    expect(dev.two).toEqual({ value: false, switches: { y: true }, version: 2 });
    await svc.remove(p.projectId, "one", actor);
    await svc.remove(p.projectId, "Three", actor);
    expect(Object.keys(await svc.publishedForEnv(p.projectId, "prod"))).toEqual(["two"]);
    expect(Object.keys(await svc.publishedForEnv(foreign.projectId, "prod"))).not.toContain("two");
  });
});

describe("audit", () => {
  test("every change records one audit row in its transaction; refused calls record none", async () => {
    const p = await s.newProject("Audited");
    const call = (path: string, init: { method?: string; body?: unknown } = {}) => s.api(path, { ...init, key: p.adminKey });
    const { body: created } = await call(BASE, { body: { name: "audited", switches: { a: true } } });
    const ok: [string, { method?: string; body?: unknown }][] = [
      [`${BASE}/audited/toggle`, { body: { env: "dev" } }],
      [`${BASE}/audited/switch`, { method: "PUT", body: { env: "staging", switchKey: "b", value: true } }],
      [`${BASE}/audited/switch`, { method: "DELETE", body: { env: "staging", switchKey: "b" } }],
      [`${BASE}/audited/value`, { method: "PUT", body: { env: "prod", value: true } }],
      [`${BASE}/audited/rollback`, { body: { env: "prod", version: 1 } }],
    ];
    for (const [path, init] of ok) expect((await call(path, init)).status, path).toBe(200);
    // Refused: nothing recorded.
    expect((await call(`${BASE}/audited/switch`, { method: "DELETE", body: { env: "staging", switchKey: "missing" } })).status).toBe(404);
    expect((await call(`${BASE}/audited/rollback`, { body: { env: "prod", version: 99 } })).status).toBe(404);
    expect((await call(BASE, { body: { name: "audited" } })).status).toBe(409);
    expect((await call(`${BASE}/${created.id}`, { method: "DELETE" })).status).toBe(204);

    // Only this module's rows: making the project also recorded project.create and key.mint.
    const rows = (await auditOf(s.store, p.projectId)).reverse().filter((r) => r.action.startsWith("killswitch."));
    expect(rows.map((r) => [r.action, r.env])).toEqual([
      ["killswitch.create", null],
      ["killswitch.toggle", "dev"],
      ["killswitch.switch.set", "staging"],
      ["killswitch.switch.delete", "staging"],
      ["killswitch.value.set", "prod"],
      ["killswitch.rollback", "prod"],
      ["killswitch.delete", null],
    ]);
    for (const r of rows) expect(r).toMatchObject({ subjectId: created.id, subjectName: "audited", actorType: "key" });
    expect(rows[1]!.detail).toEqual({ version: 2, switchKey: null, previous: false, value: true });
    expect(rows[5]!.detail).toMatchObject({ version: 3, from: 1, value: false });
  });
});

test("the OpenAPI document shows each killswitch request body as JSON", async () => {
  const doc = (await s.api("/openapi/json", { key: null })).body;
  const body = (path: string, method: string) => doc.paths[path]?.[method]?.requestBody?.content?.["application/json"]?.schema;
  expect(body("/api/admin/killswitches", "post")?.properties).toHaveProperty("name");
  expect(body("/api/admin/killswitches/{id}/toggle", "post")?.properties).toHaveProperty("switchKey");
  expect(body("/api/admin/killswitches/{id}/switch", "put")?.required).toEqual(expect.arrayContaining(["env", "switchKey", "value"]));
  expect(body("/api/admin/killswitches/{id}/value", "put")?.properties).toHaveProperty("value");
  expect(body("/api/admin/killswitches/{id}/rollback", "post")?.properties).toHaveProperty("version");
  expect(doc.paths["/api/admin/killswitches/{id}/history"].get.parameters.map((p: any) => p.name)).toEqual(expect.arrayContaining(["env", "limit"]));
});
