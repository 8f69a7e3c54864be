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

describe("explain's texts and the evaluator's fast paths (issue 32)", () => {
  const others: Record<string, Gate> = { on: { salt: "x", rules: [{ conditions: [], passPercentage: 100 }] }, off: { salt: "x", rules: [] } };
  const evaluator = createGateEvaluator({ compileRegex, gate: (name) => others[name], segment: (name) => (name === "vip" ? { ids: ["u1"] } : undefined) });
  const LONG = "x".repeat(5000);

  test("every text path of explain is pinned (evaluate computes none of them)", () => {
    // [attr, op, value, context, holds, why]: one row per text explain can give.
    const table: [string, string, unknown, Record<string, unknown>, boolean, string][] = [
      ["plan", "eq", "pro", {}, false, "plan is not in the context"],
      ["plan", "eq", "pro", { plan: null }, false, "plan is not in the context"],
      ["plan", "eq", "pro", { plan: LONG }, false, "plan is text of 5000 characters, over the 4096 an operator reads (matches nothing)"],
      ["plan", "exists", undefined, { plan: LONG }, true, "plan is set"],
      ["plan", "not_exists", undefined, { plan: "a" }, false, "plan is set"],
      ["plan", "eq", "pro", { plan: "pro" }, true, "plan is \"pro\""],
      ["plan", "eq", "pro", { plan: "free" }, false, "plan is \"free\", not \"pro\""],
      ["plan", "neq", "pro", { plan: "free" }, true, "plan is \"free\", not \"pro\""],
      ["plan", "neq", "pro", { plan: "pro" }, false, "plan is \"pro\""],
      ["n", "eq", 42, { n: "42" }, true, "n is \"42\""],
      ["country", "in", ["de"], { country: "de" }, true, "country is \"de\", in the list"],
      ["country", "not_in", ["de"], { country: "de" }, false, "country is \"de\", in the list"],
      ["country", "in", ["de"], { country: "fr" }, false, "country is \"fr\", not in the list"],
      ["email", "ends_with", "@acme.com", { email: "a@acme.com" }, true, "email is \"a@acme.com\""],
      ["email", "contains", "acme", { email: 42 }, false, "email is 42, not text"],
      ["email", "starts_with", "a", { email: "bob" }, false, "email is \"bob\""],
      ["email", "regex", "^a", { email: "abc" }, true, "email is \"abc\", matching /^a/"],
      ["email", "regex", "^a", { email: "bcd" }, false, "email is \"bcd\", not matching /^a/"],
      ["email", "regex", "^a", { email: true }, false, "email is true, not text"],
      ["age", "gt", 3, { age: 5 }, true, "age is 5"],
      ["age", "lte", 3, { age: "x" }, false, "age is \"x\", not a number"],
      ["age", "gte", "x", { age: 5 }, false, "age is 5, not a number"],
      ["v", "semver_gte", "1.0.0", { v: "1.2.0" }, true, "v is version \"1.2.0\""],
      ["v", "semver_lt", "1.0.0", { v: "nope" }, false, "v is \"nope\", not a version"],
      ["d", "after", "2026-01-01", { d: "2026-02-01" }, true, "d is \"2026-02-01\""],
      ["d", "before", "2026-01-01", { d: "soon" }, false, "d is \"soon\", not a date"],
      ["x", "passes_gate", "on", { x: 1 }, true, "gate on is on"],
      ["x", "passes_gate", "off", {}, false, "gate off is off"],
      ["x", "fails_gate", "off", {}, true, "gate off is off"],
      ["x", "passes_gate", "ghost", {}, false, "gate ghost does not exist (off)"],
      ["user_id", "in_segment", "vip", { user_id: "u1" }, true, "in segment vip"],
      ["user_id", "not_in_segment", "vip", { user_id: "u1" }, false, "in segment vip"],
      ["user_id", "in_segment", "ghost", { user_id: "u1" }, false, "segment ghost does not exist (not in it)"],
      ["plan", "bogus", 1, { plan: "a" }, false, "unknown operator \"bogus\""],
      ["plan", "eq", "pro", { plan: "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy" }, false, "plan is \"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy...\" (80 characters), not \"pro\""],
      ["plan", "eq", "pro", { plan: [1, 2, 3] }, false, "plan is a list of 3, not \"pro\""],
      ["plan", "eq", "pro", { plan: {"a": 1} }, false, "plan is an object, not \"pro\""],
      ["plan", "eq", ["a"], { plan: "a" }, false, "plan is \"a\", not a list of 1"],
      ["plan", "eq", "a\"b", { plan: "aé\n" }, false, "plan is \"aé\\n\", not \"a\\\"b\""],
      ["n", "eq", 1, { n: 2.5 }, false, "n is 2.5, not 1"],
      ["n", "eq", 1, { n: false }, false, "n is false, not 1"],
    ];
    for (const [attr, op, value, context, holds, why] of table) {
      const gate = { salt: "s", rules: [{ conditions: [{ attr, op, value }], passPercentage: 100 }] } as Gate;
      const out = evaluator.explain(gate, context);
      expect([attr, op, out.rules[0]!.conditions[0]]).toEqual([attr, op, { attr, op, holds, why }] as never);
      // evaluate decides as explain does.
      expect([attr, op, evaluator.evaluate(gate, context).value]).toEqual([attr, op, holds]);
    }
  });

  test("evaluate builds no explanation: no JSON.stringify, no rules in its answer", () => {
    const gate: Gate = {
      salt: "quiet",
      rules: [
        { conditions: [{ attr: "plan", op: "eq", value: "pro" }, { attr: "country", op: "in", value: ["de", "fr"] }], passPercentage: 100 },
        { conditions: [{ attr: "age", op: "gte", value: 30 }, { attr: "v", op: "semver_gte", value: "2.0.0" }], passPercentage: 20 },
      ],
    };
    const original = JSON.stringify;
    let calls = 0;
    JSON.stringify = ((...args: Parameters<typeof JSON.stringify>) => {
      calls++;
      return original(...args);
    }) as typeof JSON.stringify;
    let out: ReturnType<typeof evaluator.evaluate>;
    try {
      out = evaluator.evaluate(gate, { plan: "free", country: "it", age: 40, v: "2.1.0", user_id: "user-3" });
    } finally {
      JSON.stringify = original;
    }
    expect(calls).toBe(0);
    expect(Object.keys(out).sort()).toEqual(["bucket", "reason", "ruleIndex", "value"]);
    expect(out).toMatchObject({ ruleIndex: 1, reason: "SPLIT", bucket: bucketOf("quiet", "user-3") });
  });

  test("bucketOf is fnv(String(fnv(seed + id))) % 10000 / 10000 for every kind of id (it no longer builds either string)", () => {
    const fnv = (text: string) => {
      let h = 0x811c9dc5;
      for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
      return h >>> 0;
    };
    const ids = ["", "0", "a", "user-1", "ünïcödé", "😀", "x".repeat(300), ...Array.from({ length: 20_000 }, (_, i) => `${i}-${(i * 2654435761) >>> 0}`)];
    for (const seed of ["", "seed", "checkout-v2", "ß"]) {
      for (const id of ids) expect([seed, id, bucketOf(seed, id)]).toEqual([seed, id, (fnv(String(fnv(seed + id))) % 10000) / 10000]);
    }
  });

  test("numbers in text are read as before: leading whitespace of any kind, signs, dots; other text is not a number", () => {
    const eq = (actual: unknown, value: unknown) => evaluator.evaluate({ salt: "n", rules: [{ conditions: [{ attr: "a", op: "eq", value }], passPercentage: 100 }] } as Gate, { a: actual }).value;
    for (const text of [" 42", "\t42", "\u00a042", "\ufeff42", "\u200042", "\u300042 ", "+42", "42.0", "4.2e1"]) expect([text, eq(text, 42)]).toEqual([text, true]);
    expect(eq(".5", 0.5)).toBe(true);
    expect(eq("-1", -1)).toBe(true);
    for (const text of ["x42", "forty-two", "", "٤٢"]) expect([text, eq(text, 42)]).toEqual([text, false]);
    expect(eq("abc", "abc")).toBe(true);
  });
});
