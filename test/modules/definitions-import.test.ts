import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fromFlagsmith, fromGrowthBook, fromLaunchDarkly, fromUnleash } from "../../src/modules/definitions/importers";

// `svc import` (issue 31): each tool's mapper over a fixture export written from the tool's documented format
// (test/fixtures/imports/README.md cites them). The whole result (document, unmapped, rebucketed) is compared
// with the reviewed expectation beside the fixture; the cases below spell out the mappings that matter.

const dir = join(import.meta.dir, "..", "fixtures", "imports");
const fixture = (name: string) => JSON.parse(readFileSync(join(dir, `${name}.json`), "utf8"));
const expected = (name: string) => JSON.parse(readFileSync(join(dir, "expected", `${name}.json`), "utf8"));
const find = (list: any[] | undefined, name: string) => list?.find((e) => e.name === name);

describe("Unleash", () => {
  const result = fromUnleash(fixture("unleash"));
  test("the whole document, what was left out and what re-buckets", () => {
    expect(result).toEqual(expected("unleash"));
  });
  test("strategies: full ones first (Unleash ORs them), constraints as conditions, segments by name", () => {
    expect(find(result.document.gates, "new-checkout").envs.prod.rules).toEqual([
      { name: "Staff", conditions: [{ attr: "user_id", op: "in", value: ["u-1", "u-2"] }], passPercentage: 100 },
      { conditions: [{ attr: "country", op: "in", value: ["DE", "FR"] }], passPercentage: 100 },
      {
        name: "Rollout 25%",
        conditions: [
          { attr: "appVersion", op: "semver_gt", value: "2.4.0" },
          { attr: "email", op: "regex", value: "(?i)(?:@acme\\.com|@acme\\.io)$" },
          { attr: "user_id", op: "in_segment", value: "beta-testers" },
        ],
        passPercentage: 25,
      },
    ]);
    expect(find(result.document.segments, "beta-testers")).toEqual({ name: "beta-testers", description: "Customers in the beta", attribute: "user_id", conditions: [], ids: ["u-3", "u-4"] });
    // Inverted IN is not_in; a disabled feature is a gate without rules.
    expect(find(result.document.gates, "search-v2").envs.prod.rules).toEqual([{ conditions: [{ attr: "plan", op: "not_in", value: ["pro"] }], passPercentage: 10 }]);
    expect(find(result.document.gates, "legacy-banner").envs).toEqual({ prod: { rules: [] } });
  });
  test("variants are a config split behind the feature's gate", () => {
    expect(find(result.document.configs, "search-v2-variant").envs.prod.rules[1]).toEqual({
      conditions: [{ attr: "user_id", op: "passes_gate", value: "search-v2" }],
      split: [
        { value: "blue", weight: 50 },
        { value: "green", weight: 50 },
      ],
    });
  });
  test("unmapped: current time, unknown strategies, name-only segments, unknown envs; --env-map maps them", () => {
    expect(result.unmapped.map((u) => u.construct)).toEqual(["segment", "strategy", "constraint", "environment"]);
    expect(result.rebucketed).toEqual([
      { flag: "new-checkout", env: "prod", percentage: 25 },
      { flag: "search-v2", env: "prod", percentage: 10 },
      { flag: "search-v2-variant", env: "prod", percentage: 100, split: [50, 50] },
    ]);
    const mapped = fromUnleash(fixture("unleash"), { envMap: { qa: "staging" } });
    expect(find(mapped.document.gates, "legacy-banner").envs).toEqual({ prod: { rules: [] }, staging: { rules: [{ conditions: [], passPercentage: 100 }] } });
    expect(mapped.unmapped.some((u) => u.construct === "environment")).toBe(false);
  });
  test("--keep-exact keeps 0 % and 100 % rules only and lists the partial ones", () => {
    const exact = fromUnleash(fixture("unleash"), { keepExact: true });
    expect(exact.rebucketed).toEqual([]);
    expect(find(exact.document.gates, "new-checkout").envs.prod.rules.map((r: any) => r.passPercentage)).toEqual([100, 100]);
    expect(find(exact.document.gates, "search-v2").envs.prod.rules).toEqual([]);
    expect(exact.unmapped.filter((u) => u.construct === "percentage rollout").map((u) => u.source)).toEqual([
      "feature new-checkout (production) strategy 2 flexibleRollout",
      "feature search-v2 (production) strategy 2 flexibleRollout",
    ]);
    expect(exact.unmapped.find((u) => u.construct === "split")?.source).toBe("feature search-v2 (production) variants");
  });
});

describe("GrowthBook", () => {
  test("the features payload: booleans as gates, other types as configs, saved groups as segments", () => {
    const result = fromGrowthBook(fixture("growthbook-payload"));
    expect(result).toEqual(expected("growthbook-payload"));
    expect(find(result.document.gates, "dark-mode").envs.prod.rules[3]).toEqual({
      name: "fr_rollout",
      conditions: [
        { attr: "plan", op: "eq", value: "pro" },
        { attr: "version", op: "semver_gte", value: "2.0.0" },
      ],
      passPercentage: 30,
    });
    // The payload's group is a bare list: it holds the attribute its condition tests (`id`, svc's user_id).
    expect(find(result.document.segments, "grp_beta")).toMatchObject({ attribute: "user_id", ids: ["u-1", "u-2", "u-3"] });
    expect(result.unmapped.map((u) => u.reason.split(" ")[0])).toEqual(["$or", "experiment", "tags:"]);
    expect(fromGrowthBook(fixture("growthbook-payload"), { env: "staging" }).document.gates![0]!.envs).toHaveProperty("staging");
  });
  test("the API export: values as text parsed by valueType, per-env defaults, saved groups with their attribute", () => {
    const result = fromGrowthBook(fixture("growthbook-api"));
    expect(result).toEqual(expected("growthbook-api"));
    expect(find(result.document.gates, "new-onboarding").envs).toEqual({
      prod: { rules: [{ conditions: [{ attr: "user_id", op: "in_segment", value: "enterprise" }], passPercentage: 100 }, { conditions: [], passPercentage: 20 }] },
      dev: { rules: [{ conditions: [], passPercentage: 100 }] },
    });
    expect(find(result.document.configs, "api-limits").envs.prod.value).toEqual({ rpm: 60 });
    expect(find(result.document.segments, "enterprise")).toMatchObject({ attribute: "company", ids: ["acme", "globex"] });
  });
});

describe("what would widen an audience is left out", () => {
  test("a GrowthBook rule limited by a namespace, range or filters is not mapped (its limit would be lost)", () => {
    const payload = {
      features: {
        "ns-flag": {
          defaultValue: false,
          rules: [
            { force: true, coverage: 1, namespace: ["checkout", 0, 0.5] },
            { force: true, range: [0, 0.25], hashAttribute: "id" },
            { force: true, filters: [{ seed: "s", ranges: [[0, 0.5]] }] },
            { condition: { plan: "pro" }, force: true },
          ],
        },
      },
    };
    const result = fromGrowthBook(payload);
    expect(result.document.gates).toEqual([{ name: "ns-flag", description: "", envs: { prod: { rules: [{ conditions: [{ attr: "plan", op: "eq", value: "pro" }], passPercentage: 100 }] } } }]);
    expect(result.unmapped.map((u) => [u.source, u.construct])).toEqual([
      ["feature ns-flag (prod) rule 1", "namespace"],
      ["feature ns-flag (prod) rule 2", "range"],
      ["feature ns-flag (prod) rule 3", "filters"],
    ]);
  });
  test("a GrowthBook rollout at coverage 0 lets every unit fall through: no rule, not a rule that stops at false", () => {
    const result = fromGrowthBook({ features: { f: { defaultValue: false, rules: [{ force: true, coverage: 0 }, { condition: { plan: "pro" }, force: true }] } } });
    expect(result.document.gates![0]!.envs).toEqual({ prod: { rules: [{ conditions: [{ attr: "plan", op: "eq", value: "pro" }], passPercentage: 100 }] } });
  });
  test("Flagsmith identity overrides beyond what one svc list holds become a segment of ids, never cut short", () => {
    const doc = fixture("flagsmith");
    const feature = doc.feature_states[1].feature;
    doc.identity_overrides = Array.from({ length: 1001 }, (_, i) => ({ identifier: `u-${i}`, identity_features: [{ feature, enabled: true, feature_state_value: "Hi" }] }));
    const result = fromFlagsmith(doc);
    expect(find(result.document.configs, "banner_text").envs.prod.rules[0]).toEqual({ name: "identity overrides", conditions: [{ attr: "user_id", op: "in_segment", value: "banner_text-identities-1" }], value: "Hi" });
    expect(find(result.document.segments, "banner_text-identities-1").ids).toHaveLength(1001);
    expect(result.unmapped.filter((u) => u.construct === "identity overrides")).toEqual([]);
  });
  test("a file of another shape maps nothing and says so", () => {
    for (const [fn, raw] of [[fromUnleash, { items: [] }], [fromLaunchDarkly, { features: [] }], [fromFlagsmith, [1, 2]], [fromGrowthBook, "text"]] as const) {
      const result = (fn as (r: unknown) => ReturnType<typeof fromUnleash>)(raw);
      expect(result.document).toEqual({ version: 1 });
      expect(result.unmapped).toEqual([{ source: "file", construct: "format", reason: expect.stringContaining("not") }]);
    }
  });
});

describe("LaunchDarkly", () => {
  const result = fromLaunchDarkly(fixture("launchdarkly"));
  test("the whole document, what was left out and what re-buckets", () => {
    expect(result).toEqual(expected("launchdarkly"));
  });
  test("a boolean flag: targets, rules and a fallthrough rollout (thousandths kept exact) as gate rules", () => {
    const rules = find(result.document.gates, "new-dashboard").envs.prod.rules;
    expect(rules[0]).toEqual({ conditions: [{ attr: "user_id", op: "in", value: ["u-1", "u-2"] }], passPercentage: 100 });
    expect(rules[1]).toEqual({ conditions: [{ attr: "user_id", op: "in", value: ["u-666"] }], passPercentage: 0 });
    expect(rules.at(-1)).toEqual({ conditions: [], passPercentage: 12.5 });
    // The negated `contains` rule is left out, and said so.
    expect(rules.length).toBe(5);
    expect(result.unmapped.find((u) => u.construct === "clause")?.reason).toContain("negated contains");
  });
  test("a multivariate flag: a config with rules, a split fallthrough and prerequisites as passes_gate", () => {
    const config = find(result.document.configs, "pricing-page");
    expect(config.schema).toEqual({ type: "string" });
    expect(config.envs.staging).toEqual({ value: "compact", rules: [] });
    expect(config.envs.prod.rules[2]).toEqual({ conditions: [{ attr: "user_id", op: "passes_gate", value: "new-dashboard" }], split: [{ value: "classic", weight: 60 }, { value: "compact", weight: 40 }] });
    expect(result.unmapped.find((u) => u.source === "segment eu-customers")?.construct).toBe("excluded");
  });
});

describe("Flagsmith", () => {
  const result = fromFlagsmith(fixture("flagsmith"));
  test("the whole document, what was left out and what re-buckets", () => {
    expect(result).toEqual(expected("flagsmith"));
  });
  test("identity overrides, then segment overrides by priority, then the environment's state", () => {
    expect(find(result.document.gates, "new_cart").envs.prod.rules).toEqual([
      { name: "identity overrides (on)", conditions: [{ attr: "user_id", op: "in", value: ["u-42"] }], passPercentage: 100 },
      { name: "segment power-users", conditions: [{ attr: "user_id", op: "in_segment", value: "power-users" }], passPercentage: 100 },
    ]);
    expect(find(result.document.segments, "power-users").conditions).toEqual([
      { attr: "plan", op: "in", value: ["pro", "team"] },
      { attr: "logins", op: "gte", value: 10 },
      { attr: "app_version", op: "semver_gt", value: "2.1.0" },
    ]);
    expect(find(result.document.configs, "checkout_theme").envs.prod.rules).toEqual([{ conditions: [], split: [{ value: "dark", weight: 30 }, { value: "contrast", weight: 20 }, { value: "light", weight: 50 }] }]);
    expect(result.unmapped.map((u) => u.construct)).toEqual(["segment rules", "segment override"]);
  });
});
