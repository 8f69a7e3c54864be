import { describe, expect, test } from "bun:test";
import { compileRegex } from "../../src/lib/re2";
import { type Gate, bucketOf, compareSemver, createGateEvaluator, parseSemver } from "../../src/sdk/gates";
import { GATE_CASES } from "../support/gate-cases";

describe("bucketing", () => {
  test("GrowthBook hash v2 vectors (NOTES.md)", () => {
    expect(bucketOf("seed", "a")).toBe(0.0505);
    expect(bucketOf("seed", "b")).toBe(0.2696);
    expect(bucketOf("seed", "123")).toBe(0.7884);
    expect(bucketOf("exp-1", "user-1")).toBe(0.5069);
  });

  test("growing a percentage keeps every unit that passed, and the share tracks the percentage", () => {
    const evaluator = createGateEvaluator({ compileRegex });
    const ids = Array.from({ length: 20_000 }, (_, i) => `user-${i}`);
    let previous = new Set<string>();
    for (const pct of [1, 5, 10, 25, 50, 75, 99, 100]) {
      const gate: Gate = { salt: "rollout", rules: [{ conditions: [], passPercentage: pct }] };
      const passing = new Set(ids.filter((id) => evaluator.evaluate(gate, { user_id: id }).value));
      for (const id of previous) expect(passing.has(id)).toBe(true);
      expect(Math.abs(passing.size / ids.length - pct / 100)).toBeLessThan(0.015);
      previous = passing;
    }
  });

  test("another salt places units independently; the unit attribute can be any attribute", () => {
    const evaluator = createGateEvaluator({ compileRegex });
    const a: Gate = { salt: "a", rules: [{ conditions: [], passPercentage: 50 }] };
    const b: Gate = { salt: "b", rules: [{ conditions: [], passPercentage: 50 }] };
    const ids = Array.from({ length: 4000 }, (_, i) => `u${i}`);
    const both = ids.filter((id) => evaluator.evaluate(a, { user_id: id }).value && evaluator.evaluate(b, { user_id: id }).value).length;
    expect(Math.abs(both / ids.length - 0.25)).toBeLessThan(0.03);
    const byAccount: Gate = { salt: "a", rules: [{ conditions: [], passPercentage: 50, unit: "account_id" }] };
    expect(evaluator.evaluate(byAccount, { account_id: "u7", user_id: "zzz" }).value).toBe(evaluator.evaluate(a, { user_id: "u7" }).value);
  });
});

describe("semver", () => {
  test("precedence follows semver.org, including pre-releases", () => {
    const order = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "2.0.0"];
    for (let i = 0; i + 1 < order.length; i++) expect(compareSemver(parseSemver(order[i])!, parseSemver(order[i + 1])!)).toBe(-1);
    expect(parseSemver("1.2.x")).toBeNull();
  });
});

describe("the table of gate cases", () => {
  const evaluator = createGateEvaluator({ compileRegex });
  for (const c of GATE_CASES) {
    test(c.name, () => {
      expect(evaluator.evaluate(c.gate, c.context).value).toBe(c.expected);
      // explain agrees with evaluate.
      expect(evaluator.explain(c.gate, c.context).value).toBe(c.expected);
    });
  }
});

describe("prerequisite gates and explanations", () => {
  const gates: Record<string, Gate> = {
    staff: { salt: "s", rules: [{ conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }], passPercentage: 100 }] },
    beta: { salt: "b", rules: [{ name: "staff first", conditions: [{ attr: "x", op: "passes_gate", value: "staff" }], passPercentage: 100 }] },
    loopA: { salt: "la", rules: [{ conditions: [{ attr: "x", op: "passes_gate", value: "loopB" }], passPercentage: 100 }] },
    loopB: { salt: "lb", rules: [{ conditions: [{ attr: "x", op: "passes_gate", value: "loopA" }], passPercentage: 100 }] },
  };
  const evaluator = createGateEvaluator({ compileRegex, gate: (name) => gates[name] });

  test("passes_gate and fails_gate follow the other gate; a missing gate counts as off", () => {
    expect(evaluator.evaluate(gates.beta!, { email: "ana@acme.com" }).value).toBe(true);
    expect(evaluator.evaluate(gates.beta!, { email: "ana@example.com" }).value).toBe(false);
    const failsMissing: Gate = { salt: "f", rules: [{ conditions: [{ attr: "x", op: "fails_gate", value: "nope" }], passPercentage: 100 }] };
    expect(evaluator.evaluate(failsMissing, {}).value).toBe(true);
  });

  test("a cycle that reached the evaluator ends as off instead of recursing forever", () => {
    expect(evaluator.evaluate(gates.loopA!, {}).value).toBe(false);
  });

  test("explain names the deciding rule, the bucket, and why each earlier rule did not hold", () => {
    const gate: Gate = {
      salt: "explain",
      rules: [
        { name: "internal", conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }], passPercentage: 100 },
        { name: "pro in DE", conditions: [{ attr: "plan", op: "eq", value: "pro" }, { attr: "country", op: "in", value: ["de"] }], passPercentage: 100 },
        { name: "everyone", conditions: [], passPercentage: 30 },
      ],
    };
    const out = evaluator.explain(gate, { email: "bo@example.com", plan: "pro", country: "fr", user_id: "user-1" });
    expect(out.ruleIndex).toBe(2);
    expect(out.reason).toBe("SPLIT");
    expect(out.bucket).toBe(bucketOf("explain", "user-1"));
    expect(out.value).toBe(out.bucket! < 0.3);
    expect(out.rules.map((r) => r.holds)).toEqual([false, false, true]);
    expect(out.rules[0]!.conditions[0]).toMatchObject({ holds: false, why: 'email is "bo@example.com"' });
    expect(out.rules[1]!.conditions.map((c) => c.holds)).toEqual([true, false]);
    expect(out.rules[1]!.conditions[1]!.why).toBe('country is "fr", not in the list');
  });
});
