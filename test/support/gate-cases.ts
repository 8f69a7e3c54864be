import type { EvaluationContext, Gate, GateCondition } from "../../src/sdk/gates";

/**
 * The one table of gate cases: every operator with edge values and missing
 * attributes, and percentage boundaries. The evaluator's unit test runs it
 * today; the server (explain), the SDK and OFREP run the same table once the
 * gates module publishes gates.
 */
export type GateCase = { name: string; gate: Gate; context: EvaluationContext; expected: boolean };

const SALT = "gate-salt-1";
const only = (c: GateCondition, passPercentage = 100): Gate => ({ salt: SALT, rules: [{ conditions: [c], passPercentage }] });

function opCases(op: GateCondition["op"], value: unknown, rows: [string, unknown, boolean][]): GateCase[] {
  return rows.map(([label, actual, expected]) => ({
    name: `${op} ${JSON.stringify(value)}: ${label}`,
    gate: only({ attr: "a", op, value }),
    context: actual === undefined ? {} : { a: actual },
    expected,
  }));
}

export const GATE_CASES: GateCase[] = [
  ...opCases("eq", "pro", [["same text", "pro", true], ["other text", "free", false], ["case differs", "Pro", false], ["missing", undefined, false], ["null", null, false], ["object", { x: 1 }, false]]),
  ...opCases("eq", 42, [["number", 42, true], ["numeric text", "42", true], ["42.0 text", "42.0", true], ["other", 43, false]]),
  ...opCases("eq", true, [["true", true, true], ["'true'", "true", true], ["false", false, false]]),
  ...opCases("neq", "pro", [["other", "free", true], ["same", "pro", false], ["missing", undefined, true]]),
  ...opCases("in", ["de", "fr", 7], [["listed", "fr", true], ["listed number as text", "7", true], ["not listed", "us", false], ["missing", undefined, false]]),
  ...opCases("not_in", ["de", "fr"], [["not listed", "us", true], ["listed", "de", false], ["missing", undefined, true]]),
  ...opCases("contains", "@acme", [["inside", "ana@acme.com", true], ["absent", "ana@example.com", false], ["not text", 5, false], ["missing", undefined, false]]),
  ...opCases("starts_with", "beta-", [["prefix", "beta-7", true], ["elsewhere", "x-beta-7", false]]),
  ...opCases("ends_with", "@acme.com", [["suffix", "ana@acme.com", true], ["case differs", "ana@ACME.com", false]]),
  ...opCases("regex", "^[a-z]+@acme\\.(com|io)$", [["match", "ana@acme.io", true], ["no match", "ana@acme.org", false], ["not text", 3, false], ["missing", undefined, false]]),
  ...opCases("gt", 10, [["above", 11, true], ["equal", 10, false], ["numeric text", "10.5", true], ["not a number", "ten", false], ["missing", undefined, false]]),
  ...opCases("gte", 10, [["equal", 10, true], ["below", 9.99, false]]),
  ...opCases("lt", 0, [["negative", -1, true], ["zero", 0, false]]),
  ...opCases("lte", 0, [["zero", 0, true], ["text zero", "0", true], ["positive", 1, false]]),
  ...opCases("semver_gte", "2.4.0", [["same", "2.4.0", true], ["greater minor", "2.10.0", true], ["v prefix", "v2.4.1", true], ["pre-release sorts before", "2.4.0-beta.1", false], ["smaller", "2.3.9", false], ["two parts", "2.4", true], ["not a version", "latest", false], ["missing", undefined, false]]),
  ...opCases("semver_eq", "1.0.0", [["build metadata ignored", "1.0.0+42", true], ["pre-release differs", "1.0.0-rc.1", false]]),
  ...opCases("semver_gt", "1.0.0-alpha", [["alpha.1 above alpha", "1.0.0-alpha.1", true], ["release above pre-release", "1.0.0", true]]),
  ...opCases("semver_lt", "1.0.0-beta.11", [["beta.2 below beta.11 (numeric)", "1.0.0-beta.2", true], ["rc above beta", "1.0.0-rc.1", false]]),
  ...opCases("semver_lte", "3.0.0", [["equal", "3.0.0", true], ["above", "3.0.1", false]]),
  ...opCases("before", "2026-06-01T00:00:00Z", [["earlier", "2026-05-31T23:59:59Z", true], ["same instant", "2026-06-01T00:00:00Z", false], ["epoch ms", Date.parse("2026-01-01T00:00:00Z"), true], ["not a date", "yesterday", false]]),
  ...opCases("after", "2026-06-01", [["later", "2026-06-02", true], ["earlier", "2026-05-01", false], ["missing", undefined, false]]),
  ...opCases("exists", undefined, [["set", "x", true], ["empty text is set", "", true], ["false is set", false, true], ["null", null, false], ["missing", undefined, false]]),
  ...opCases("not_exists", undefined, [["missing", undefined, true], ["set", 0, false]]),
  // First matching rule decides; later rules are not consulted.
  {
    name: "first rule that holds decides, even when it rolls out to 0%",
    gate: { salt: SALT, rules: [{ conditions: [{ attr: "plan", op: "eq", value: "free" }], passPercentage: 0 }, { conditions: [], passPercentage: 100 }] },
    context: { plan: "free", user_id: "u1" },
    expected: false,
  },
  { name: "no rule holds: off", gate: { salt: SALT, rules: [{ conditions: [{ attr: "plan", op: "eq", value: "pro" }], passPercentage: 100 }] }, context: { plan: "free" }, expected: false },
  { name: "no rules at all: off", gate: { salt: SALT, rules: [] }, context: { user_id: "u1" }, expected: false },
  { name: "all conditions of a rule must hold", gate: { salt: SALT, rules: [{ conditions: [{ attr: "plan", op: "eq", value: "pro" }, { attr: "country", op: "in", value: ["de"] }], passPercentage: 100 }] }, context: { plan: "pro", country: "fr" }, expected: false },
  // Percentage boundaries (bucketOf("gate-salt-1", id) decides; see the bucket test for the values).
  { name: "100% passes without a unit", gate: { salt: SALT, rules: [{ conditions: [], passPercentage: 100 }] }, context: {}, expected: true },
  { name: "0% passes nobody", gate: { salt: SALT, rules: [{ conditions: [], passPercentage: 0 }] }, context: { user_id: "u1" }, expected: false },
  { name: "50% without the unit attribute: out", gate: { salt: SALT, rules: [{ conditions: [], passPercentage: 50 }] }, context: { account_id: "a1" }, expected: false },
];
