import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sha256Hex } from "../src/lib/ids";
import { startTestServer, type TestServer } from "./helpers";

/**
 * Issue 25 item 2: a config's JSON Schema whose validation cost grows
 * exponentially (a `$defs` chain whose every level is
 * `anyOf: [{$ref: next}, {$ref: next}]`) once held the request loop for
 * seconds and gigabytes. Such a schema is refused at save, and every value
 * check runs off the request loop under a time budget (DECISIONS, "Limits
 * that keep one request from stalling the server").
 */

let s: TestServer;
let seq = 0;
let readOnly = "";

beforeAll(async () => {
  s = await startTestServer();
  const token = await s.api("/api/admin/tokens", { body: { name: "viewer", access: "read-only" } });
  expect(token.status, JSON.stringify(token.body)).toBe(201);
  readOnly = token.body.token;
});
afterAll(() => s.stop());

const uniqueName = (base: string) => `${base}-${++seq}`;

/** The schema of the report: each level offers two branches to the next; 2^depth evaluations of one value. */
function hostileSchema(depth: number): Record<string, unknown> {
  const $defs: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) $defs[`d${i}`] = { anyOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
  $defs[`d${depth}`] = { type: "string" };
  return { $defs, $ref: "#/$defs/d0" };
}

/** Asks /healthz over and over until `stop()` says so; answers the slowest answer's time. */
async function probeHealthz(stop: () => boolean): Promise<number> {
  let slowest = 0;
  while (!stop()) {
    const started = performance.now();
    const r = await fetch(`${s.url}/healthz`);
    await r.text();
    slowest = Math.max(slowest, performance.now() - started);
    await Bun.sleep(5);
  }
  return slowest;
}

/**
 * Runs `work` while asking /healthz over and over. The server runs in this
 * process, so a stalled request loop delays these calls too. The machine's
 * own delays (other processes on shared cores) are measured idle, for a
 * second before and after, as `idleMs`: the check is that `work` adds under
 * 100 ms to the slowest answer (a stall adds seconds).
 */
async function healthzDuring<T>(work: () => Promise<T>): Promise<{ result: T; slowestMs: number; idleMs: number }> {
  // Warm: the first call of a route may compile it.
  expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
  const idleUntil = performance.now() + 1000;
  const idleMs = await probeHealthz(() => performance.now() > idleUntil);
  let done = false;
  const probe = probeHealthz(() => done);
  // Let a probe be in flight before the hostile request starts.
  await Bun.sleep(10);
  let result: T;
  try {
    result = await work();
  } finally {
    done = true;
  }
  const slowestMs = await probe;
  const afterUntil = performance.now() + 1000;
  const idleAfterMs = await probeHealthz(() => performance.now() > afterUntil);
  return { result, slowestMs, idleMs: Math.max(idleMs, idleAfterMs) };
}

async function createConfig(body: Record<string, unknown>) {
  const r = await s.api("/api/admin/configs", { body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { id: string; name: string };
}

/** A config stored with `schema` as a database from before the fix could hold it (no check at save then). */
async function plantSchema(id: string, schema: unknown): Promise<void> {
  const json = JSON.stringify(schema);
  expect(await s.store.run("UPDATE configs SET schema = ?, schema_hash = ? WHERE id = ?", json, sha256Hex(json), id)).toBe(1);
}

describe("a config schema that costs exponential time", () => {
  test("is refused at save with VALIDATION naming the path, and /healthz answers within 100 ms meanwhile", async () => {
    const name = uniqueName("hostile");
    const { result: r, slowestMs, idleMs } = await healthzDuring(() => s.api("/api/admin/configs", { body: { name, schema: hostileSchema(20), value: 1 } }));
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.code).toBe("VALIDATION");
    expect(r.body.detail).toContain("schema/$defs/d");
    expect(r.body.detail).toContain("anyOf");
    expect(await s.store.one("SELECT id FROM configs WHERE name = ?", name)).toBeUndefined();
    expect(slowestMs).toBeLessThan(100 + idleMs);

    // The same schema sent as a PATCH of an existing config changes nothing.
    const { id } = await createConfig({ name: uniqueName("plain"), schema: { type: "integer" }, value: 1 });
    const before = await s.store.one<{ schema: string }>("SELECT schema FROM configs WHERE id = ?", id);
    const patched = await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { schema: hostileSchema(20) } });
    expect(patched.status).toBe(400);
    expect(patched.body.code).toBe("VALIDATION");
    expect(patched.body.detail).toContain("schema/$defs/d");
    expect(await s.store.one("SELECT schema FROM configs WHERE id = ?", id)).toEqual(before);
  });

  test("recursion through values is bounded too: a branching `items` loop is refused", async () => {
    // Each array level doubles the work: 2^60 evaluations for a value 120 bytes long.
    const schema = { $defs: { node: { type: "array", items: { anyOf: [{ $ref: "#/$defs/node" }, { $ref: "#/$defs/node" }] } } }, $ref: "#/$defs/node" };
    const r = await s.api("/api/admin/configs", { body: { name: uniqueName("deep-branch"), schema, value: [] } });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.code).toBe("VALIDATION");
    expect(r.body.detail).toContain("schema/$defs/node");
  });

  test("ordinary schemas, recursive ones included, are still accepted", async () => {
    const tree = {
      $defs: { node: { type: "object", properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/node" } } }, additionalProperties: false } },
      $ref: "#/$defs/node",
    };
    const { id } = await createConfig({ name: uniqueName("tree"), schema: tree, value: { name: "root", children: [{ name: "leaf", children: [] }] } });
    const bad = await s.api(`/api/admin/configs/${id}/check`, { body: { value: { name: "root", children: [{ name: 1 }] } } });
    expect(bad.status).toBe(200);
    expect(bad.body).toEqual({ valid: false, problems: ["value /children/0/name: must be string"] });
    // An enum-like oneOf (what generated schemas look like) fits the budget.
    const oneOf = Array.from({ length: 200 }, (_, i) => ({ const: `v${i}` }));
    await createConfig({ name: uniqueName("choices"), schema: { oneOf }, value: "v199" });
  });

  test("a stored hostile schema (from before the fix) never stalls: POST /check by a read-only token, drafts and PATCH are VALIDATION, /healthz answers within 100 ms", async () => {
    const { id } = await createConfig({ name: uniqueName("planted"), schema: true, value: "a" });
    await plantSchema(id, hostileSchema(20));
    const { result: check, slowestMs, idleMs } = await healthzDuring(() => s.api(`/api/admin/configs/${id}/check`, { key: readOnly, body: { value: 1 } }));
    expect(check.status, JSON.stringify(check.body)).toBe(400);
    expect(check.body.code).toBe("VALIDATION");
    expect(check.body.detail).toContain("schema");
    expect(slowestMs).toBeLessThan(100 + idleMs);

    const versions = await s.store.all("SELECT env, version FROM config_values WHERE config_id = ? ORDER BY env", id);
    const attempts = await healthzDuring(async () => [
      await s.api(`/api/admin/configs/${id}/drafts`, { method: "PUT", headers: { "x-project-id": s.projectId }, body: { env: "dev", value: 1 } }),
      await s.api(`/api/admin/configs/${id}`, { method: "PATCH", body: { value: 1 } }),
    ]);
    for (const r of attempts.result) {
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.code).toBe("VALIDATION");
    }
    expect(attempts.slowestMs).toBeLessThan(100 + attempts.idleMs);
    expect(await s.store.all("SELECT env, version FROM config_values WHERE config_id = ? ORDER BY env", id)).toEqual(versions);
    expect(await s.store.all("SELECT env FROM config_drafts WHERE config_id = ?", id)).toEqual([]);
  });

  test("a check that runs past its time budget is VALIDATION, /healthz answers within 100 ms meanwhile, and the next check works", async () => {
    // RE2 matches in linear time, but with a large program: seconds for 200,000 characters. The static estimate
    // does not price patterns; the time budget catches it. Sized to take over three times the budget on a fast
    // machine (5.1 s, where {1,500} over 100,000 characters took 1.1 s, under the budget, and the test failed).
    const slowValue = "a".repeat(200_000);
    const { id } = await createConfig({ name: uniqueName("slow-pattern"), schema: { type: "string", pattern: "(?:a|b|c|d|e|f|g|h|i|j){1,1000}[^a-j]" }, value: "a1" });
    const { result: slow, slowestMs, idleMs } = await healthzDuring(() => s.api(`/api/admin/configs/${id}/check`, { key: readOnly, body: { value: slowValue } }));
    expect(slow.status, JSON.stringify(slow.body)).toBe(400);
    expect(slow.body).toEqual({
      error: "Checking the value against the config's schema takes too long",
      code: "VALIDATION",
      detail: expect.stringContaining("value: checking against the schema took longer than"),
    });
    expect(slowestMs).toBeLessThan(100 + idleMs);
    const ok = await s.api(`/api/admin/configs/${id}/check`, { key: readOnly, body: { value: "ab1" } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ valid: true, problems: [] });
    const saved = await s.api(`/api/admin/configs/${id}/drafts`, { method: "PUT", headers: { "x-project-id": s.projectId }, body: { env: "dev", value: slowValue } });
    expect(saved.status).toBe(400);
    expect(saved.body.code).toBe("VALIDATION");
    expect(await s.store.all("SELECT env FROM config_drafts WHERE config_id = ?", id)).toEqual([]);
  }, 15_000);
});
