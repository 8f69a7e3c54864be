import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import { ENVS } from "../../src/lib/envs";
import { compileRegex } from "../../src/lib/re2";
import { bumpRevision } from "../../src/lib/revisions";
import { type Gate, type GateRule, createGateEvaluator } from "../../src/sdk/gates";
import { type TestServer, expectErrorShape, startTestServer } from "../helpers";

/**
 * Issue 25, items 1 and 13 (DECISIONS "Limits that keep one request from
 * stalling the server"): evaluating one flag for one context is bounded work
 * (each prerequisite gate once per evaluation, at most 4,096 characters of an
 * attribute read, costly rules refused at publish, contexts over 64 KiB
 * refused), and one env's snapshot is at most 5 MiB of JSON.
 */

let ts: TestServer;

beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.stop();
});

const HOSTILE_PATTERN = "(?:a|aa|aaa|aaaa){1,50}[^a]";

const createGate = (name: string, rules: unknown[], projectKey?: string) => ts.api("/api/admin/gates", { body: { name, rules }, key: projectKey });
const setRules = (name: string, rules: unknown[], env = "prod") => ts.api(`/api/admin/gates/${name}/rules`, { method: "PUT", body: { env, rules } });
const ofrep = (flag: string, context: Record<string, unknown>) => ts.api(`/ofrep/v1/evaluate/flags/${flag}`, { key: ts.serverKey, body: { context } });
const prodVersion = async (name: string) => (await ts.api(`/api/admin/gates/${name}`)).body.envs.prod;

/** Writes a gate's prod rules straight into the database, as a gate saved before the bound existed would be. */
async function plantLegacyRules(name: string, rules: GateRule[]): Promise<void> {
  const gate = (await ts.api(`/api/admin/gates/${name}`)).body;
  await ts.store.write(async (tx) => {
    await tx.run("UPDATE gate_envs SET rules = ? WHERE gate_id = ? AND env = 'prod'", JSON.stringify(rules), gate.id);
    await bumpRevision(tx, ts.projectId, "prod");
  });
}

/**
 * The longest a /healthz caller waits while `work` runs: polled back to back, the longest gap
 * between two answers (a poll is always in flight, so a stall of the event loop shows whole; the
 * server runs in this process). Best of three runs, so a machine busy with other work does not
 * fail it; a stall shows in every run.
 */
async function slowestHealthzDuring(work: () => Promise<unknown>): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let run = 0; run < 3 && best >= 100; run++) {
    let done = false;
    let slowest = 0;
    let polls = 0;
    let last = performance.now();
    const poller = (async () => {
      while (!done || polls < 3) {
        const res = await fetch(`${ts.url}/healthz`);
        expect(res.status).toBe(200);
        await res.text();
        const now = performance.now();
        slowest = Math.max(slowest, now - last);
        last = now;
        polls++;
      }
    })();
    // A poll is in flight before the hostile work starts.
    await Bun.sleep(5);
    try {
      await work();
    } finally {
      done = true;
      await poller;
    }
    best = Math.min(best, slowest);
  }
  return best;
}

describe("item 1: gate evaluation is bounded work", () => {
  test("each gate passes_gate / fails_gate name is evaluated once per evaluation, not once per path", () => {
    // Five gates chained, three rules each naming the next: 3 + 9 + 27 + 81 lookups without memoising.
    const gates: Record<string, Gate> = {};
    for (let k = 0; k < 5; k++) {
      gates[`g${k}`] = {
        salt: `g${k}`,
        rules: Array.from({ length: 3 }, (_, i) => ({
          conditions: k < 4 ? [{ attr: "x", op: "passes_gate" as const, value: `g${k + 1}` }] : [{ attr: "plan", op: "eq" as const, value: `never-${i}` }],
          passPercentage: 100,
        })),
      };
    }
    let lookups = 0;
    const evaluator = createGateEvaluator({ compileRegex, gate: (name) => (lookups++, gates[name]) });
    expect(evaluator.evaluate(gates.g0!, { plan: "free" }).value).toBe(false);
    expect(lookups).toBe(4);
    // The memo is per evaluation: the next one sees a changed context.
    lookups = 0;
    expect(evaluator.evaluate(gates.g0!, { plan: "never-2" }).value).toBe(true);
    expect(lookups).toBe(4);
    // A diamond (two paths to one gate) and fails_gate of the same gate also count it once.
    const diamond: Gate = {
      salt: "d",
      rules: [
        { conditions: [{ attr: "x", op: "passes_gate", value: "g3" }], passPercentage: 100 },
        { conditions: [{ attr: "x", op: "fails_gate", value: "g3" }, { attr: "x", op: "passes_gate", value: "g4" }], passPercentage: 100 },
      ],
    };
    lookups = 0;
    expect(evaluator.evaluate(diamond, { plan: "free" }).value).toBe(false);
    expect(lookups).toBe(2);
    expect(evaluator.explain(diamond, { plan: "free" }).rules[1]!.conditions.map((c) => c.why)).toEqual(["gate g3 is off", "gate g4 is off"]);
  });

  test("a chain of five gates by passes_gate: OFREP answers at once, and /healthz answers in < 100 ms meanwhile", async () => {
    // The five chained gates (60 rules each there, rules^depth = 60^5 conditions); 20 rules
    // already make 3.2 million without memoising, about a second here.
    const RULES = 20;
    for (let k = 4; k >= 0; k--) {
      const rules = Array.from({ length: RULES }, (_, i) => ({
        conditions: k < 4 ? [{ attr: "x", op: "passes_gate", value: `chain${k + 1}` }, { attr: "plan", op: "neq", value: `p${i}` }] : [{ attr: "plan", op: "eq", value: `never-${i}` }],
        passPercentage: 100,
      }));
      const created = await createGate(`chain${k}`, rules);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }
    const context = { targetingKey: "user-1", plan: "free" };
    expect((await ofrep("chain0", context)).status).toBe(200);
    let answer: Awaited<ReturnType<typeof ofrep>> | undefined;
    let took = 0;
    const slowest = await slowestHealthzDuring(async () => {
      const start = performance.now();
      answer = await ofrep("chain0", context);
      took = performance.now() - start;
    });
    expect(slowest).toBeLessThan(100);
    expect(took).toBeLessThan(100);
    expect(answer!.status).toBe(200);
    expect(answer!.body).toMatchObject({ key: "chain0", value: false, reason: "DEFAULT" });
  }, 60_000);

  test("an attribute over 4,096 characters matches no string operator; 4,096 still does", async () => {
    expect((await createGate("staff-cap", [{ conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }], passPercentage: 100 }])).status).toBe(201);
    const at = (n: number) => `${"a".repeat(n - "@acme.com".length)}@acme.com`;
    expect((await ofrep("staff-cap", { targetingKey: "u", email: at(4096) })).body.value).toBe(true);
    expect((await ofrep("staff-cap", { targetingKey: "u", email: at(4097) })).body.value).toBe(false);
    const explained = await ts.api("/api/admin/gates/staff-cap/explain", { body: { context: { email: at(5000) } } });
    expect(explained.status).toBe(200);
    expect(explained.body.rules[0].conditions[0]).toMatchObject({ holds: false, why: expect.stringContaining("over the 4096") });
    // The explanation shows a bounded excerpt, never the whole value.
    expect(explained.text.length).toBeLessThan(2000);
  });

  test("the issue's pattern on a long value: no stall for a gate saved before the bound, /healthz answers in < 100 ms", async () => {
    // Saved before the bound existed (publishing it now is refused, below): 30 rules of the pattern.
    expect((await createGate("legacy-regex", [])).status).toBe(201);
    await plantLegacyRules(
      "legacy-regex",
      Array.from({ length: 30 }, () => ({ conditions: [{ attr: "name", op: "regex" as const, value: HOSTILE_PATTERN }], passPercentage: 100 })),
    );
    // 5,000 characters of `a`: RE2 took about 45 ms a rule on it; over 4,096, no rule reads it.
    const context = { targetingKey: "u", name: "a".repeat(5000) };
    let answer: Awaited<ReturnType<typeof ofrep>> | undefined;
    const slowest = await slowestHealthzDuring(async () => {
      answer = await ofrep("legacy-regex", context);
    });
    expect(answer!.status).toBe(200);
    expect(answer!.body).toMatchObject({ key: "legacy-regex", value: false, reason: "DEFAULT" });
    expect(slowest).toBeLessThan(100);
    // Under the cap the pattern still works.
    expect((await ofrep("legacy-regex", { targetingKey: "u", name: "aab" })).body.value).toBe(true);
  }, 60_000);

  test("an evaluation context over 64 KiB: OFREP 400 INVALID_CONTEXT (single and bulk), explain VALIDATION; 64 KiB passes", async () => {
    expect((await createGate("ctx-size", [{ conditions: [{ attr: "name", op: "exists" }], passPercentage: 100 }])).status).toBe(201);
    // The 300 KB value.
    const big = { targetingKey: "u", name: "a".repeat(300_000) };
    const single = await ofrep("ctx-size", big);
    expect(single.status).toBe(400);
    expect(single.body).toMatchObject({ key: "ctx-size", errorCode: "INVALID_CONTEXT", errorDetails: expect.stringMatching(/^context: \d+ bytes of JSON; at most 65536/) });
    const bulk = await ts.api("/ofrep/v1/evaluate/flags", { key: ts.serverKey, body: { context: big } });
    expect(bulk.status).toBe(400);
    expect(bulk.body).toMatchObject({ errorCode: "INVALID_CONTEXT" });
    const explained = await ts.api("/api/admin/gates/ctx-size/explain", { body: { context: big } });
    expect(explained.status).toBe(400);
    expect(expectErrorShape(explained.body)).toMatchObject({ code: "VALIDATION", detail: expect.stringMatching(/^context: \d+ bytes of JSON; at most 65536/) });
    // Measured as JSON bytes: exactly 64 KiB passes, one more byte does not (multi-byte characters count as their UTF-8 bytes).
    const sized = (bytes: number) => {
      const base = JSON.stringify({ targetingKey: "u", name: "" }).length;
      const euros = Math.floor((bytes - base) / 3);
      return { targetingKey: "u", name: "€".repeat(euros) + "a".repeat(bytes - base - euros * 3) };
    };
    expect((await ofrep("ctx-size", sized(65_536))).status).toBe(200);
    expect((await ofrep("ctx-size", sized(65_537))).status).toBe(400);
  });

  test("a pattern whose evaluation alone would cost over the bound is refused at publish, naming the gate and rule; nothing changes", async () => {
    expect((await createGate("regex-target", [])).status).toBe(201);
    const before = await prodVersion("regex-target");
    const refused = await setRules("regex-target", [
      { conditions: [{ attr: "email", op: "exists" }], passPercentage: 100 },
      { conditions: [{ attr: "name", op: "regex", value: HOSTILE_PATTERN }], passPercentage: 100 },
    ]);
    expect(refused.status).toBe(400);
    const body = expectErrorShape(refused.body);
    expect(body.code).toBe("VALIDATION");
    expect(body.error).toContain("regex-target");
    expect(body.detail).toMatch(/^rules\[1\]\.conditions\[0\]\.value: this pattern alone costs 35329 units/);
    expect(await prodVersion("regex-target")).toEqual(before);
    // At creation too.
    const created = await createGate("regex-new", [{ conditions: [{ attr: "name", op: "regex", value: HOSTILE_PATTERN }], passPercentage: 100 }]);
    expect(created.status).toBe(400);
    expect((await ts.api("/api/admin/gates/regex-new")).status).toBe(404);
  });

  test("rules whose evaluation adds up to over the bound are refused at the rule where it goes over", async () => {
    expect((await createGate("many-regex", [])).status).toBe(201);
    // 1,409 units each (an RE2 program of 22 instructions × 64, + 1): the 15th goes over 20,000.
    const rules = Array.from({ length: 30 }, (_, i) => ({ name: `r${i}`, conditions: [{ attr: "email", op: "regex", value: "[^@]+@[^@]+\\.(com|org|net)$" }], passPercentage: 100 }));
    const refused = await setRules("many-regex", rules);
    expect(refused.status).toBe(400);
    expect(expectErrorShape(refused.body)).toMatchObject({ code: "VALIDATION", detail: expect.stringMatching(/^rules\[14\]\.conditions\[0\]: gate many-regex goes over the limit of 20000 units/) });
    expect((await setRules("many-regex", rules.slice(0, 14))).status).toBe(200);
  });

  test("a publish that pushes a gate depending on it over the bound is refused, naming that gate", async () => {
    expect((await createGate("dep-leaf", [])).status).toBe(201);
    // 12,929 + 1 units of its own, plus dep-leaf's.
    const top = await createGate("dep-top", [{ conditions: [{ attr: "code", op: "regex", value: "x{1,100}y" }, { attr: "x", op: "passes_gate", value: "dep-leaf" }], passPercentage: 100 }]);
    expect(top.status).toBe(201);
    const before = await prodVersion("dep-leaf");
    // 7,809 alone is fine, but dep-top would then cost 20,739.
    const refused = await setRules("dep-leaf", [{ conditions: [{ attr: "code", op: "regex", value: "x{1,60}y" }], passPercentage: 100 }]);
    expect(refused.status).toBe(400);
    const body = expectErrorShape(refused.body);
    expect(body.code).toBe("VALIDATION");
    expect(body.error).toContain("dep-top");
    expect(body.detail).toContain("gate dep-top reaches gate dep-leaf");
    expect(await prodVersion("dep-leaf")).toEqual(before);
    // On another env dep-top is the same: refused there too; a cheaper pattern passes.
    expect((await setRules("dep-leaf", [{ conditions: [{ attr: "code", op: "regex", value: "x{1,60}y" }], passPercentage: 100 }], "dev")).status).toBe(400);
    expect((await setRules("dep-leaf", [{ conditions: [{ attr: "code", op: "regex", value: "x{1,50}y" }], passPercentage: 100 }])).status).toBe(200);
  });

  test("prerequisites nested deeper than 10 are refused at publish (they used to evaluate as off)", async () => {
    for (let k = 11; k >= 1; k--) {
      const rules = k === 11 ? [] : [{ conditions: [{ attr: "x", op: "passes_gate", value: `deep${k + 1}` }], passPercentage: 100 }];
      expect((await createGate(`deep${k}`, rules)).status).toBe(201);
    }
    // deep1 → … → deep11 is 10 references deep; one more is refused.
    const refused = await createGate("deep0", [{ conditions: [{ attr: "x", op: "passes_gate", value: "deep1" }], passPercentage: 100 }]);
    expect(refused.status).toBe(400);
    expect(expectErrorShape(refused.body)).toMatchObject({ code: "VALIDATION", detail: expect.stringMatching(/^rules\[0\]\.conditions\[0\]\.value: this prerequisite chain is 11 gates deep; at most 10/) });
  });

  test("a gate rollout's new rules get the same bound", async () => {
    expect((await createGate("rolled", [])).status).toBe(201);
    const refused = await ts.api("/api/admin/rollouts", { body: { gate: "rolled", env: "prod", rules: [{ conditions: [{ attr: "name", op: "regex", value: HOSTILE_PATTERN }], passPercentage: 100 }] } });
    expect(refused.status).toBe(400);
    expect(expectErrorShape(refused.body)).toMatchObject({ code: "VALIDATION", detail: expect.stringContaining("rules[0].conditions[0].value: this pattern alone costs") });
    expect((await ts.store.one<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM rollouts WHERE project_id = ?", ts.projectId))!.n).toBe(0);
  });
});

describe("item 13: one env's snapshot is at most 5 MiB of JSON", () => {
  const LIMIT = 5 * 1024 * 1024;

  test("a translation push that would take the snapshot over 5 MiB is refused, saying by how much, and changes nothing", async () => {
    const project = await ts.newProject("Translations at the limit");
    const as = { key: project.adminKey };
    expect((await ts.api(`/api/admin/projects/${project.projectId}`, { ...as, method: "PATCH", body: { moduleTranslations: true } })).status).toBe(200);
    const profile = await ts.api("/api/admin/i18n/profiles", { ...as, body: { name: "english", locale: "en" } });
    expect(profile.status).toBe(201);
    // The keys of 10,000 characters, 90 a call (under the 1 MiB body limit): 450 keys, 4.5 MB.
    const value = "x".repeat(10_000);
    const batch = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ key: `k${String(from + i).padStart(5, "0")}`, value }));
    for (let b = 0; b < 5; b++) expect((await ts.api("/api/admin/i18n/keys", { ...as, body: { profile_id: "english", keys: batch(b * 90, 90) } })).status).toBe(200);
    const revisions = async () => ts.store.all<{ env: string; revision: number }>("SELECT env, revision FROM env_revisions WHERE project_id = ? ORDER BY env", project.projectId);
    const keys = async () => Number((await ts.store.one<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM i18n_keys WHERE project_id = ?", project.projectId))!.n);
    const before = { revisions: await revisions(), keys: await keys(), audit: (await auditOf(ts.store, project.projectId, 1000)).length };
    // 90 more would make about 5.4 MB.
    const refused = await ts.api("/api/admin/i18n/keys", { ...as, body: { profile_id: "english", keys: batch(450, 90) } });
    expect(refused.status).toBe(400);
    const body = expectErrorShape(refused.body);
    expect(body.code).toBe("VALIDATION");
    const over = /would make the dev snapshot every SDK downloads (\d+) bytes of JSON, (\d+) bytes over the limit of 5242880 \(5 MiB\)/.exec(body.detail ?? "");
    expect(over, body.detail).not.toBeNull();
    expect(Number(over![1]) - LIMIT).toBe(Number(over![2]));
    expect(Number(over![2])).toBeGreaterThan(100_000);
    expect(await revisions()).toEqual(before.revisions);
    expect(await keys()).toBe(before.keys);
    expect((await auditOf(ts.store, project.projectId, 1000)).length).toBe(before.audit);
    // What fits is still published, and what SDKs download stays under the limit on every env.
    expect((await ts.api("/api/admin/i18n/keys", { ...as, body: { profile_id: "english", keys: batch(450, 60) } })).status).toBe(200);
    for (const env of ENVS) {
      const snapshot = await ts.api(`/api/sdk/v1/snapshot?env=${env}`, { key: project.serverKey });
      expect(snapshot.status).toBe(200);
      expect(Buffer.byteLength(snapshot.text)).toBeLessThanOrEqual(LIMIT);
      expect(Object.keys(snapshot.body.translations.en)).toHaveLength(510);
    }
    // A small edit over the limit is refused too; removing a key still works.
    expect((await ts.api("/api/admin/i18n/keys", { ...as, body: { profile_id: "english", keys: batch(510, 30) } })).status).toBe(400);
    expect((await ts.api("/api/admin/i18n/keys/k00000?profile_id=english", { ...as, method: "DELETE" })).status).toBe(204);
  }, 60_000);

  test("a config whose publish would take the snapshots over 5 MiB is refused, and nothing changes", async () => {
    const project = await ts.newProject("Configs at the limit");
    const as = { key: project.adminKey };
    const value = { blob: "v".repeat(250_000) };
    const schema = { type: "object" };
    // Twenty configs of 250 KB: 5 MB on every env.
    for (let i = 0; i < 20; i++) expect((await ts.api("/api/admin/configs", { ...as, body: { name: `big${i}`, schema, value } })).status).toBe(201);
    const configs = async () => Number((await ts.store.one<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM configs WHERE project_id = ?", project.projectId))!.n);
    const count = await configs();
    const refused = await ts.api("/api/admin/configs", { ...as, body: { name: "big20", schema, value } });
    expect(refused.status).toBe(400);
    expect(expectErrorShape(refused.body)).toMatchObject({ code: "VALIDATION", detail: expect.stringMatching(/^snapshot: .* bytes over the limit of 5242880/) });
    expect(await configs()).toBe(count);
    expect((await ts.api("/api/admin/configs/big20", as)).status).toBe(404);
  }, 60_000);
});
