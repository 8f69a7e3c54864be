import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { OFREPProvider } from "@openfeature/ofrep-provider";
import { OpenFeature } from "@openfeature/server-sdk";
import { auditOf } from "../../src/lib/audit";
import { ENVS } from "../../src/lib/envs";
import { compileRegex } from "../../src/lib/re2";
import { type PublishedConfig, decideConfig } from "../../src/sdk/configs";
import { createGateEvaluator } from "../../src/sdk/gates";
import { createClient } from "../../src/sdk/index";
import { type TestServer, expectErrorShape, startTestServer } from "../helpers";

// Targeted configs (issue 29): rules and splits saved with the draft, published together, served the
// same by OFREP (a real OpenFeature server SDK), the SDK and explain; splits stable across publishes.

let ts: TestServer;

beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await OpenFeature.close();
  await ts.stop();
});

const createConfig = (body: unknown) => ts.api("/api/admin/configs", { body });
const saveDraft = (name: string, body: unknown) => ts.api(`/api/admin/configs/${name}/drafts`, { method: "PUT", body, headers: { "X-Project-Id": ts.projectId } });
const publish = (name: string, env = "prod") => ts.api(`/api/admin/configs/${name}/publish`, { body: { env } });
const getConfig = (name: string) => ts.api(`/api/admin/configs/${name}`);
const explain = (name: string, body: unknown) => ts.api(`/api/admin/configs/${name}/explain`, { body });
const snapshot = async (env = "prod") => (await ts.api(`/api/sdk/v1/snapshot?env=${env}`, { key: ts.serverKey })).body;
const audits = async (action: string) => (await auditOf(ts.store, ts.projectId, 1000)).filter((r) => r.action === action);
const revisions = async () => {
  const rows = await ts.store.all<{ env: string; revision: number }>("SELECT env, revision FROM env_revisions WHERE project_id = ?", ts.projectId);
  return Object.fromEntries(ENVS.map((env) => [env, Number(rows.find((r) => r.env === env)?.revision ?? 0)]));
};
const ofrep = async (key: string, context: Record<string, unknown>) => {
  const res = await fetch(`${ts.url}/ofrep/v1/evaluate/flags/${key}`, { method: "POST", headers: { "x-sdk-key": ts.serverKey, "content-type": "application/json" }, body: JSON.stringify({ context }) });
  return { status: res.status, body: (await res.json()) as any };
};
async function publishRules(name: string, value: unknown, rules: unknown[], env = "prod") {
  const saved = await saveDraft(name, { env, value, rules });
  expect(saved.status).toBe(200);
  const published = await publish(name, env);
  expect(published.status).toBe(200);
  return published.body;
}

/** Which value each of `n` units gets, decided locally from the published snapshot (the SDK's own code). */
async function assignments(name: string, n: number): Promise<string[]> {
  const snap = await snapshot();
  const config = snap.configs[name] as PublishedConfig;
  const evaluator = createGateEvaluator({ compileRegex });
  return Array.from({ length: n }, (_, i) => JSON.stringify(decideConfig(config, { user_id: `unit-${i}` }, evaluator).value));
}

describe("rules saved with the draft, published with the value", () => {
  test("draft → publish → GET, activity, history, rollback restore value and rules together; audit rows", async () => {
    expect((await createConfig({ name: "banner", schema: { type: "string", maxLength: 40 }, value: "Welcome" })).status).toBe(201);
    const rules = [
      { name: "staff", conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }], value: "Hello, colleague" },
      { conditions: [{ attr: "country", op: "in", value: ["FR", "BE"] }], value: "Bienvenue" },
    ];
    const saved = await saveDraft("banner", { env: "prod", value: "Welcome!", rules });
    expect(saved.status).toBe(200);
    const withDraft = (await getConfig("banner")).body;
    expect(withDraft.drafts.prod).toMatchObject({ value: "Welcome!", rules });
    expect(withDraft.envs.prod).toMatchObject({ value: "Welcome", rules: [], version: 1 });
    expect((await ts.api("/api/admin/configs/banner/drafts/prod", { headers: { "X-Project-Id": ts.projectId } })).body.rules).toEqual(rules);

    const before = await revisions();
    expect((await publish("banner")).body).toMatchObject({ env: "prod", version: 2, value: "Welcome!" });
    expect((await revisions()).prod).toBe(before.prod + 1);
    const after = (await getConfig("banner")).body;
    expect(after.envs.prod).toMatchObject({ value: "Welcome!", rules, version: 2 });
    expect(after.envs.dev.rules).toEqual([]);
    expect(after.drafts.prod).toBeUndefined();
    const activity = (await ts.api("/api/admin/configs/banner/activity", { headers: { "X-Project-Id": ts.projectId } })).body;
    expect(activity[0]).toMatchObject({ action: "config.publish", payload: { env: "prod", version: 2, rules: { before: 0, after: 2 } } });
    expect(activity[1]).toMatchObject({ action: "config.draft.save", payload: { env: "prod", rules: 2 } });
    expect((await audits("config.publish")).some((r) => r.subjectName === "banner")).toBe(true);
    const history = (await ts.api("/api/admin/configs/banner/history?env=prod")).body;
    expect(history[0]).toMatchObject({ version: 2, value: "Welcome!", rules });
    expect(history[1]).toMatchObject({ version: 1, value: "Welcome", rules: [] });

    // A draft without rules keeps the published rules.
    await saveDraft("banner", { env: "prod", value: "Welcome!!" });
    expect((await publish("banner")).status).toBe(200);
    expect((await getConfig("banner")).body.envs.prod).toMatchObject({ value: "Welcome!!", rules, version: 3 });
    // A PATCH of the value keeps them too.
    expect((await ts.api("/api/admin/configs/banner", { method: "PATCH", body: { prod: "Hi" } })).status).toBe(200);
    expect((await getConfig("banner")).body.envs.prod).toMatchObject({ value: "Hi", rules, version: 4 });

    const rolled = await ts.api("/api/admin/configs/banner/rollback", { body: { env: "prod", version: 1 } });
    expect(rolled.status).toBe(200);
    expect((await getConfig("banner")).body.envs.prod).toMatchObject({ value: "Welcome", rules: [], version: 5 });
    expect((await snapshot()).configs.banner).toEqual({ value: "Welcome", version: 5 });
  });

  test("bad rules are VALIDATION naming the field, and change nothing", async () => {
    expect((await createConfig({ name: "limits", schema: { type: "integer", minimum: 1 }, value: 60 })).status).toBe(201);
    const cases: [unknown[], RegExp][] = [
      [[{ conditions: [], value: 0 }], /rules\[0\]\.value/],
      [[{ conditions: [], split: [{ value: 10, weight: 50 }, { value: -1, weight: 50 }] }], /rules\[0\]\.split\[1\]\.value/],
      [[{ conditions: [], split: [{ value: 10, weight: 50 }, { value: 20, weight: 40 }] }], /sum to 90/],
      [[{ conditions: [], value: 10, split: [{ value: 10, weight: 100 }] }], /exactly one/],
      [[{ conditions: [] }], /exactly one/],
      [[{ conditions: [{ attr: "plan", op: "near", value: "x" }], value: 5 }], /rules\[0\]\.conditions\[0\]\.op/],
      [[{ conditions: [{ attr: "user_id", op: "in_segment", value: "no-such-segment" }], value: 5 }], /no segment named no-such-segment/],
      [[{ conditions: [{ attr: "user_id", op: "passes_gate", value: "no-such-gate" }], value: 5 }], /no gate named no-such-gate/],
      [[{ conditions: [], value: 5, colour: "red" }], /colour|additional/i],
    ];
    for (const [rules, detail] of cases) {
      const res = await saveDraft("limits", { env: "prod", value: 60, rules });
      expect(res.status).toBe(400);
      expect(expectErrorShape(res.body).code).toBe("VALIDATION");
      expect(`${res.body.error} ${res.body.detail}`).toMatch(detail);
    }
    expect((await getConfig("limits")).body.drafts).toEqual({});

    // A schema change must keep every rule value valid.
    await publishRules("limits", 60, [{ conditions: [{ attr: "plan", op: "eq", value: "pro" }], value: 600 }]);
    const narrowed = await ts.api("/api/admin/configs/limits", { method: "PATCH", body: { schema: { type: "integer", minimum: 1, maximum: 100 } } });
    expect(narrowed.status).toBe(400);
    expect(narrowed.body.detail).toMatch(/prod rules\[0\]\.value/);
  });
});

describe("evaluation: OFREP through a real OpenFeature server SDK, the SDK, explain", () => {
  test("string, number and object configs whose value depends on the context", async () => {
    expect((await createConfig({ name: "greeting", schema: { type: "string" }, value: "Hello" })).status).toBe(201);
    await publishRules("greeting", "Hello", [{ name: "french", conditions: [{ attr: "country", op: "eq", value: "FR" }], value: "Bonjour" }]);
    expect((await createConfig({ name: "rate", schema: { type: "number" }, value: 10 })).status).toBe(201);
    await publishRules("rate", 10, [{ conditions: [{ attr: "plan", op: "in", value: ["pro", "team"] }], value: 100 }]);
    expect((await createConfig({ name: "theme", schema: { type: "object" }, value: { colour: "blue" } })).status).toBe(201);
    await publishRules("theme", { colour: "blue" }, [{ name: "dark-mode", conditions: [{ attr: "app_version", op: "semver_gte", value: "2.0.0" }], value: { colour: "black" } }]);

    await OpenFeature.setProviderAndWait("cfg", new OFREPProvider({ baseUrl: ts.url, headers: [["X-SDK-Key", ts.serverKey]] }));
    const client = OpenFeature.getClient("cfg");
    const fr = await client.getStringDetails("greeting", "?", { targetingKey: "u-1", country: "FR" });
    expect(fr).toMatchObject({ value: "Bonjour", reason: "TARGETING_MATCH", variant: "french" });
    expect(await client.getStringDetails("greeting", "?", { targetingKey: "u-1", country: "DE" })).toMatchObject({ value: "Hello", reason: "DEFAULT", variant: "default" });
    expect(await client.getNumberDetails("rate", 0, { targetingKey: "u-2", plan: "team" })).toMatchObject({ value: 100, reason: "TARGETING_MATCH", variant: "rule-1" });
    expect(await client.getNumberValue("rate", 0, { targetingKey: "u-2", plan: "free" })).toBe(10);
    expect(await client.getObjectValue("theme", {}, { targetingKey: "u-3", app_version: "2.1.0" })).toEqual({ colour: "black" });
    expect(await client.getObjectValue("theme", {}, { targetingKey: "u-3", app_version: "1.9.0" })).toEqual({ colour: "blue" });

    const svc = createClient({ baseUrl: ts.url, sdkKey: ts.serverKey, env: "prod", stream: false });
    try {
      await svc.ready();
      expect(svc.getConfig("greeting", "", { user_id: "u-1", country: "FR" })).toBe("Bonjour");
      expect(svc.getConfig("greeting", "", { user_id: "u-1" })).toBe("Hello");
      // Without a context: the default value.
      expect(svc.getConfig("greeting", "")).toBe("Hello");
      expect(svc.getConfig("rate", 0, { plan: "pro" })).toBe(100);
    } finally {
      svc.close();
    }

    const why = await explain("greeting", { env: "prod", context: { country: "FR" } });
    expect(why.status).toBe(200);
    expect(why.body).toMatchObject({ config: "greeting", value: "Bonjour", variant: "french", reason: "TARGETING_MATCH", ruleIndex: 0, draft: false });
    expect(why.body.rules[0].conditions[0]).toMatchObject({ attr: "country", holds: true });
    // The draft preview: what publishing would serve.
    await saveDraft("greeting", { env: "prod", value: "Hi", rules: [{ conditions: [{ attr: "country", op: "eq", value: "FR" }], value: "Salut" }] });
    expect((await explain("greeting", { context: { country: "FR" }, draft: true })).body).toMatchObject({ value: "Salut", draft: true });
    expect((await explain("greeting", { context: { country: "FR" } })).body.value).toBe("Bonjour");
    expect((await explain("greeting", { env: "dev", context: {}, draft: true })).status).toBe(404);
  });

  test("a 50/30/20 split over 30,000 units through OpenFeature is within 1 % of the weights", async () => {
    expect((await createConfig({ name: "layout", schema: { type: "string", enum: ["a", "b", "c"] }, value: "a" })).status).toBe(201);
    await publishRules("layout", "a", [{ name: "test", conditions: [], split: [{ value: "a", weight: 50 }, { value: "b", weight: 30 }, { value: "c", weight: 20 }] }]);
    await OpenFeature.setProviderAndWait("split", new OFREPProvider({ baseUrl: ts.url, headers: [["X-SDK-Key", ts.serverKey]] }));
    const client = OpenFeature.getClient("split");
    const counts: Record<string, number> = { a: 0, b: 0, c: 0 };
    const N = 30_000;
    const local = await assignments("layout", N);
    for (let start = 0; start < N; start += 200) {
      const batch = await Promise.all(Array.from({ length: Math.min(200, N - start) }, (_, k) => client.getStringDetails("layout", "?", { targetingKey: `unit-${start + k}` })));
      batch.forEach((d, k) => {
        expect(d.reason).toBe("SPLIT");
        counts[d.value] = (counts[d.value] ?? 0) + 1;
        // OFREP and the SDK's local evaluation give every unit the same value.
        if (JSON.stringify(d.value) !== local[start + k]) throw new Error(`unit-${start + k}: OFREP ${d.value}, SDK ${local[start + k]}`);
      });
    }
    expect(Math.abs(counts.a! / N - 0.5)).toBeLessThan(0.01);
    expect(Math.abs(counts.b! / N - 0.3)).toBeLessThan(0.01);
    expect(Math.abs(counts.c! / N - 0.2)).toBeLessThan(0.01);
    // The variant names the rule and the value's place in the split.
    expect((await ofrep("layout", { user_id: "unit-1" })).body.variant).toMatch(/^test\/[123]$/);
    // No unit: the split cannot place it, so the rule is passed over (the default).
    expect((await ofrep("layout", {})).body).toMatchObject({ value: "a", reason: "DEFAULT", variant: "default" });
  });

  test("growing a split's weight moves no unit between the other values", async () => {
    expect((await createConfig({ name: "price-test", schema: { type: "integer" }, value: 10 })).status).toBe(201);
    const split = (a: number, b: number, c: number) => [{ conditions: [], split: [{ value: 10, weight: a }, { value: 12, weight: b }, { value: 15, weight: c }] }];
    await publishRules("price-test", 10, split(50, 30, 20));
    const first = await assignments("price-test", 20_000);
    // 15 grows from 20 to 40, taking from both others.
    await publishRules("price-test", 10, split(35, 25, 40));
    const second = await assignments("price-test", 20_000);
    let moved = 0;
    for (let i = 0; i < first.length; i++) {
      if (first[i] === second[i]) continue;
      moved++;
      expect(second[i]).toBe("15");
    }
    expect(moved / first.length).toBeGreaterThan(0.18);
    expect(moved / first.length).toBeLessThan(0.22);
    // 10 grows back (from 35 to 60), 15 shrinks: units only move into 10.
    await publishRules("price-test", 10, split(60, 25, 15));
    const third = await assignments("price-test", 20_000);
    for (let i = 0; i < second.length; i++) if (second[i] !== third[i]) expect(third[i]).toBe("10");
    // The API shows weights, never the buckets; the snapshot carries them.
    expect((await getConfig("price-test")).body.envs.prod.rules[0].split).toEqual([{ value: 10, weight: 60 }, { value: 12, weight: 25 }, { value: 15, weight: 15 }]);
    expect((await snapshot()).configs["price-test"].rules[0].split[0].ranges.length).toBeGreaterThan(0);
  });
});

describe("experiments on a config's rule", () => {
  test("the rule must exist by name on the experiment's env, the same in every variant; gates take none", async () => {
    expect((await ts.api("/api/admin/universes", { body: { name: "rule-web" }, headers: { "X-Project-Id": ts.projectId } })).status).toBe(201);
    expect((await createConfig({ name: "promo", schema: { type: "string" }, value: "none" })).status).toBe(201);
    await publishRules("promo", "none", [{ name: "beta", conditions: [{ attr: "plan", op: "eq", value: "beta" }], value: "beta-promo" }]);
    const experiment = (rule: unknown, other: unknown = rule) => ({
      // `null`: the variant names no rule.
      name: `promo-test-${Math.random().toString(36).slice(2, 8)}`,
      universe: "rule-web",
      allocation: [0, 1000],
      variants: [
        { key: "control", weight: 1, override: { kind: "config", name: "promo", value: "beta-promo", ...(rule === undefined ? {} : { rule }) } },
        { key: "b", weight: 1, override: { kind: "config", name: "promo", value: "b-promo", ...(other === undefined || other === null ? {} : { rule: other }) } },
      ],
    });
    const missing = await ts.api("/api/admin/experiments", { body: experiment("gamma") });
    expect(missing.status).toBe(400);
    expect(missing.body.detail).toContain("variants[0].override.rule: one of beta");
    const mixed = await ts.api("/api/admin/experiments", { body: experiment("beta", null) });
    expect(mixed.status).toBe(400);
    expect(mixed.body.detail).toContain("same rule");
    const gate = await ts.api("/api/admin/experiments", { body: { ...experiment(undefined), variants: [{ key: "a", weight: 1 }, { key: "b", weight: 1, override: { kind: "gate", name: "x", value: true, rule: "beta" } }] } });
    expect(gate.status).toBe(400);
    const ok = await ts.api("/api/admin/experiments", { body: experiment("beta") });
    expect(ok.status).toBe(201);
    expect(ok.body.variants[1].override).toEqual({ kind: "config", name: "promo", value: "b-promo", rule: "beta" });
  });
});

describe("segments in configs' rules", () => {
  test("an edit of a segment used by two gates and a config publishes each env once, and a streaming SDK sees it", async () => {
    expect((await ts.api("/api/admin/segments", { body: { name: "vip", ids: ["v-1"] } })).status).toBe(201);
    for (const gate of ["vip-lounge", "vip-support"]) {
      expect((await ts.api("/api/admin/gates", { body: { name: gate } })).status).toBe(201);
      expect((await ts.api(`/api/admin/gates/${gate}/rules`, { method: "PUT", body: { env: "prod", rules: [{ conditions: [{ attr: "user_id", op: "in_segment", value: "vip" }], passPercentage: 100 }] } })).status).toBe(200);
    }
    expect((await createConfig({ name: "discount", schema: { type: "integer" }, value: 0 })).status).toBe(201);
    await publishRules("discount", 0, [{ conditions: [{ attr: "user_id", op: "in_segment", value: "vip" }], value: 20 }]);
    await publishRules("discount", 0, [{ conditions: [{ attr: "user_id", op: "in_segment", value: "vip" }], value: 25 }], "dev");
    const snap = await snapshot();
    expect(snap.segments.vip).toEqual({ attribute: "user_id", ids: ["v-1"] });

    const svc = createClient({ baseUrl: ts.url, sdkKey: ts.serverKey, env: "prod" });
    try {
      await svc.ready();
      expect(svc.getConfig("discount", -1, { user_id: "v-2" })).toBe(0);
      const before = await revisions();
      expect((await ts.api("/api/admin/segments/vip", { method: "PATCH", body: { ids: ["v-1", "v-2"] } })).status).toBe(200);
      const after = await revisions();
      expect(after).toEqual({ dev: before.dev + 1, staging: before.staging, prod: before.prod + 1 });
      const audit = (await audits("segment.update")).at(-1)!;
      expect(audit.detail).toMatchObject({ envs: ["dev", "prod"] });
      const deadline = Date.now() + 5000;
      while ((svc.getConfig("discount", -1, { user_id: "v-2" }) as number) !== 20 && Date.now() < deadline) await Bun.sleep(20);
      expect(svc.getConfig("discount", -1, { user_id: "v-2" })).toBe(20);
      expect(svc.isEnabled("vip-lounge", { user_id: "v-2" })).toBe(true);
    } finally {
      svc.close();
    }

    const refused = await ts.api("/api/admin/segments/vip", { method: "DELETE" });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toContain("config discount (prod)");
    expect(refused.body.error).toContain("vip-lounge (prod)");
  });

  test("a publish naming a segment and the segment's delete, at once: exactly one wins, on every try", async () => {
    expect((await createConfig({ name: "race-cfg", schema: { type: "integer" }, value: 0 })).status).toBe(201);
    for (let i = 0; i < 8; i++) {
      const segment = `race-seg-${i}`;
      expect((await ts.api("/api/admin/segments", { body: { name: segment, ids: ["r-1"] } })).status).toBe(201);
      expect((await saveDraft("race-cfg", { env: "staging", value: 0, rules: [{ conditions: [{ attr: "user_id", op: "in_segment", value: segment }], value: i + 1 }] })).status).toBe(200);
      const [published, deleted] = await Promise.all([publish("race-cfg", "staging"), ts.api(`/api/admin/segments/${segment}`, { method: "DELETE" })]);
      const stored = (await getConfig("race-cfg")).body.envs.staging;
      const exists = (await ts.api(`/api/admin/segments/${segment}`)).status === 200;
      if (published.status === 200) {
        // The publish won: the segment is in use, so its delete was refused.
        expect(deleted.status).toBe(409);
        expect(exists).toBe(true);
        expect(stored.rules[0].conditions[0].value).toBe(segment);
        // Free it for the next round.
        expect((await saveDraft("race-cfg", { env: "staging", value: 0, rules: [] })).status).toBe(200);
        expect((await publish("race-cfg", "staging")).status).toBe(200);
      } else {
        expect(published.status).toBe(400);
        expect(published.body.detail).toContain(`no segment named ${segment}`);
        expect(deleted.status).toBe(204);
        expect(exists).toBe(false);
        expect((await ts.api("/api/admin/configs/race-cfg/drafts/staging", { method: "DELETE", headers: { "X-Project-Id": ts.projectId } })).status).toBe(204);
      }
    }
  });

  test("a browser key's OFREP answers carry values, never a segment's members", async () => {
    const key = await ts.api("/api/admin/keys", { body: { type: "browser", env: "prod" } });
    expect(key.status).toBe(201);
    const res = await fetch(`${ts.url}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { "x-sdk-key": key.body.key ?? key.body.secret, "content-type": "application/json", origin: ts.url }, body: JSON.stringify({ context: { targetingKey: "v-1" } }) });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(JSON.parse(text).flags.find((f: any) => f.key === "discount")).toMatchObject({ value: 20, reason: "TARGETING_MATCH" });
    expect(text).not.toContain("v-2");
  });
});
