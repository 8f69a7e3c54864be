import { describe, expect, test } from "bun:test";
import { GrowthBook } from "@growthbook/growthbook";
import { evaluateAll } from "../../src/modules/delivery/ofrep";
import type { Snapshot } from "../../src/modules/delivery/snapshot";
import { GATE_RULES_PREFIX, dateUpdatedOf, growthbookFeatures, mapSnapshot } from "../../src/modules/growthbook/mapping";
import { seededRandom } from "../seeded-random";

// The pure mapping (issue 28, part 2) on snapshots the server test does not publish: guarded rollouts, a gate
// shadowed by a killswitch, and every construct GrowthBook cannot evaluate as svc does (what is served instead).

const base = (parts: Partial<Snapshot>): Snapshot => ({
  projectId: "prj_1",
  env: "prod",
  epoch: "ep1",
  revision: 7,
  killswitches: {},
  configs: {},
  gates: {},
  universes: {},
  experiments: {},
  translations: {},
  rollouts: {},
  ...parts,
});

/** GrowthBook's answer for every feature of the payload (in-process), and svc's OFREP answer, for random units. */
function compare(snapshot: Snapshot, contexts: number, context: (random: () => number) => Record<string, unknown>) {
  const payload = growthbookFeatures(snapshot);
  const gb = new GrowthBook({ features: payload.features as never, savedGroups: payload.savedGroups ?? {} });
  const random = seededRandom(7);
  const mismatches: string[] = [];
  for (let i = 0; i < contexts && mismatches.length < 5; i++) {
    const ctx = context(random);
    void gb.setAttributes(ctx);
    for (const flag of evaluateAll(snapshot, ctx)) {
      const value = gb.evalFeature(flag.key).value;
      if (!Bun.deepEquals(value, flag.value)) mismatches.push(`${flag.key} ${JSON.stringify(ctx)}: gb ${JSON.stringify(value)} svc ${JSON.stringify(flag.value)}`);
    }
  }
  gb.destroy();
  return mismatches;
}

const unit = (random: () => number) => `u${Math.floor(random() * 1e9).toString(36)}`;

describe("mapping", () => {
  test("guarded rollouts of a gate and a config: units in the stage get the new rules or value, the others (and units without user_id) the published ones", () => {
    const snapshot = base({
      gates: {
        nav: { salt: "s-nav", version: 3, rules: [{ conditions: [{ attr: "plan", op: "eq", value: "pro" }], passPercentage: 100 }, { conditions: [], passPercentage: 10 }] },
      },
      configs: { limits: { value: { n: 1 }, version: 2 } },
      rollouts: {
        rol_a: { kind: "gate", name: "nav", salt: "r-nav", stage: 2, percent: 37, rules: [{ conditions: [], passPercentage: 80 }] },
        rol_b: { kind: "config", name: "limits", salt: "r-lim", stage: 1, percent: 12.5, value: { n: 2 } },
      },
    });
    expect(mapSnapshot(snapshot).unmapped).toEqual([]);
    expect(compare(snapshot, 10_000, (r) => ({ ...(r() < 0.95 ? { user_id: unit(r) } : {}), ...(r() < 0.3 ? { plan: "pro" } : {}) }))).toEqual([]);
  });

  test("a guarded rollout of a config's rules: units in the stage get the new rules (their splits included), the others the published rules", () => {
    const snapshot = base({
      configs: {
        limits: { value: { n: 1 }, version: 2, salt: "limits", rules: [{ conditions: [{ attr: "plan", op: "eq", value: "pro" }], value: { n: 5 } }] },
      },
      rollouts: {
        rol_c: {
          kind: "config",
          name: "limits",
          salt: "r-lim",
          stage: 1,
          percent: 40,
          value: { n: 2 },
          rules: [
            { conditions: [{ attr: "plan", op: "eq", value: "pro" }], value: { n: 9 } },
            { conditions: [], split: [{ value: { n: 3 }, weight: 50, ranges: [[0, 5000]] }, { value: { n: 4 }, weight: 50, ranges: [[5000, 10000]] }] },
          ],
        },
      },
    });
    expect(mapSnapshot(snapshot).unmapped).toEqual([]);
    expect(compare(snapshot, 10_000, (r) => ({ ...(r() < 0.95 ? { user_id: unit(r) } : {}), ...(r() < 0.3 ? { plan: "pro" } : {}) }))).toEqual([]);
  });

  test("targeted configs: value rules and splits (the server's bucket ranges, cut by publishes) place every unit as svc does; no unit skips the split", () => {
    const snapshot = base({
      gates: { pro: { salt: "s-pro", version: 1, rules: [{ conditions: [{ attr: "plan", op: "eq", value: "pro" }], passPercentage: 100 }] } },
      configs: {
        greeting: { value: "Hello", version: 3, salt: "greeting", rules: [{ name: "fr", conditions: [{ attr: "country", op: "eq", value: "FR" }], value: "Bonjour" }] },
        layout: {
          value: "a",
          version: 5,
          salt: "layout",
          rules: [
            { conditions: [{ attr: "user_id", op: "passes_gate", value: "pro" }], value: "pro" },
            {
              name: "test",
              conditions: [{ attr: "country", op: "neq", value: "US" }],
              unit: "device_id",
              split: [
                { value: "a", weight: 35, ranges: [[0, 3000], [8000, 8500]] },
                { value: "b", weight: 25, ranges: [[3000, 5500]] },
                { value: "c", weight: 40, ranges: [[5500, 8000], [8500, 10000]] },
              ],
            },
            { conditions: [], split: [{ value: "x", weight: 50 }, { value: "y", weight: 50 }] },
          ],
        },
      },
    });
    expect(mapSnapshot(snapshot).unmapped).toEqual([]);
    const mismatches = compare(snapshot, 10_000, (r) => ({
      ...(r() < 0.9 ? { user_id: unit(r) } : {}),
      ...(r() < 0.8 ? { device_id: unit(r) } : {}),
      ...(r() < 0.3 ? { plan: "pro" } : {}),
      country: r() < 0.3 ? "FR" : r() < 0.5 ? "US" : "DE",
    }));
    expect(mismatches).toEqual([]);
  });

  test("a gate a killswitch shadows is read by passes_gate through its own-rules feature", () => {
    const snapshot = base({
      killswitches: { dup: { value: true, switches: {}, version: 1 } },
      gates: {
        dup: { salt: "s-dup", version: 1, rules: [{ conditions: [], passPercentage: 50 }] },
        reads: { salt: "s-reads", version: 1, rules: [{ conditions: [{ attr: "x", op: "passes_gate", value: "dup" }], passPercentage: 100 }] },
        missing: { salt: "s-m", version: 1, rules: [{ conditions: [{ attr: "x", op: "fails_gate", value: "nowhere" }], passPercentage: 100 }] },
      },
    });
    const { features } = growthbookFeatures(snapshot);
    expect(features.dup).toEqual({ defaultValue: true });
    expect(features[`${GATE_RULES_PREFIX}dup`]?.rules?.length).toBe(2);
    expect(compare(snapshot, 5_000, (r) => ({ user_id: unit(r) }))).toEqual([]);
  });

  test("what GrowthBook cannot evaluate as svc does is listed, and served as docs/sdk.md says", () => {
    const snapshot = base({
      gates: {
        unicode: { salt: "s1", version: 1, rules: [{ conditions: [{ attr: "name", op: "regex", value: "^\\pL+$" }], passPercentage: 100 }] },
        dotted: { salt: "s2", version: 1, rules: [{ conditions: [{ attr: "app.version", op: "exists" }], passPercentage: 100 }] },
        reader: { salt: "s3", version: 1, rules: [{ conditions: [{ attr: "x", op: "passes_gate", value: "unicode" }], passPercentage: 100 }, { conditions: [], passPercentage: 100 }] },
      },
      universes: { web: { id: "uni_1", unit_type: "user_id", holdout_range: null, salt: "u1" }, acc: { id: "uni_2", unit_type: "account_id", holdout_range: null, salt: "u2" } },
      configs: { price: { value: 10, version: 1 } },
      experiments: {
        solo: { id: "exp_solo", universe: "web", salt: "e1", allocation: [0, 10_000], gate: null, variants: [{ key: "only", weight: 1, value: "x" }] },
        first: { id: "exp_first", universe: "web", salt: "e2", allocation: [0, 5000], gate: null, variants: [{ key: "control", weight: 1, value: 0 }, { key: "cheap", weight: 1, value: 1, override: { kind: "config", name: "price", value: 5 } }] },
        second: { id: "exp_second", universe: "acc", salt: "e3", allocation: [0, 5000], gate: null, variants: [{ key: "control", weight: 1, value: 0 }, { key: "dear", weight: 1, value: 1, override: { kind: "config", name: "price", value: 20 } }] },
      },
    });
    const { payload, unmapped } = mapSnapshot(snapshot);
    expect(unmapped).toEqual([
      { feature: "unicode", construct: "regex /^\\pL+$/ uses RE2-only syntax", served: "false to every unit (the gate is off)" },
      { feature: "dotted", construct: 'attribute name "app.version" (GrowthBook reads dots as paths)', served: "false to every unit (the gate is off)" },
      { feature: "reader", construct: "prerequisite gate unicode: regex /^\\pL+$/ uses RE2-only syntax", served: "false to every unit (the gate is off)" },
      { feature: "price", construct: "experiment second overriding it from a second universe", served: "price without second's override" },
      { feature: "solo", construct: "an experiment with one variant (GrowthBook needs two)", served: "the control's value to every unit" },
    ]);
    for (const gate of ["unicode", "dotted", "reader"]) expect(payload.features[gate]).toEqual({ defaultValue: false });
    expect(payload.features.solo).toEqual({ defaultValue: "x" });
    expect(payload.features.price!.rules!.map((r) => r.key)).toEqual(["first"]);
  });

  test("segments (issue 29): id lists as saved groups read by $inGroup, conditions inlined, both as $or; in gate rules and a rollout's; GrowthBook agrees with svc", () => {
    const members = Array.from({ length: 30 }, (_, i) => `m-${i}`);
    const segments = {
      members: { attribute: "user_id", ids: [...members, "7", "1e+21", "-5", "08"] },
      staff: { attribute: "user_id", conditions: [{ attr: "email", op: "ends_with", value: "@corp.io" }, { attr: "plan", op: "in", value: ["pro", "team"] }] },
      accounts: { attribute: "team", ids: ["t-1", "t-2", "3"], conditions: [{ attr: "country", op: "eq", value: "DE" }] },
      everyone: { attribute: "user_id", conditions: [{ attr: "plan", op: "neq", value: ["not", "scalar"] }] },
    };
    const inSeg = (name: string, op = "in_segment") => ({ attr: "user_id", op, value: name });
    const snapshot = base({
      gates: {
        members: { salt: "g1", version: 1, rules: [{ conditions: [inSeg("members")], passPercentage: 100 }] },
        "not-members": { salt: "g2", version: 1, rules: [{ conditions: [inSeg("members", "not_in_segment")], passPercentage: 60 }] },
        mixed: {
          salt: "g3",
          version: 1,
          rules: [
            { conditions: [inSeg("staff"), inSeg("accounts", "not_in_segment")], passPercentage: 100 },
            { conditions: [inSeg("accounts")], passPercentage: 40, unit: "account_id" },
            { conditions: [inSeg("everyone"), inSeg("gone", "not_in_segment")], passPercentage: 10 },
            { conditions: [inSeg("gone")], passPercentage: 100 },
          ],
        },
        rolled: { salt: "g4", version: 2, rules: [{ conditions: [inSeg("staff", "not_in_segment")], passPercentage: 100 }] },
      },
      rollouts: { rol_s: { kind: "gate", name: "rolled", salt: "r-s", stage: 1, percent: 45, rules: [{ conditions: [inSeg("members")], passPercentage: 100 }] } },
      segments,
    });
    const { payload, unmapped } = mapSnapshot(snapshot);
    expect(unmapped).toEqual([]);
    // Each id list once, by name; an id a number prints as is listed as that number too.
    expect(Object.keys(payload.savedGroups!).sort()).toEqual(["accounts", "members"]);
    expect(payload.savedGroups!.members).toEqual([...members, "7", "1e+21", "-5", "08", 7, 1e21, -5]);
    expect(payload.features.members!.rules![0]!.condition).toEqual({ user_id: { $inGroup: "members", $not: { $type: "array" } } });
    expect(JSON.stringify(payload.features)).not.toContain("m-1");
    const pick = <T>(r: () => number, list: T[]): T => list[Math.floor(r() * list.length)]!;
    const mismatches = compare(snapshot, 10_000, (r) => {
      const ctx: Record<string, unknown> = {};
      const u = r();
      if (u < 0.9) ctx.user_id = u < 0.35 ? pick(r, members) : u < 0.5 ? pick<unknown>(r, [7, "7", "07", 1e21, "1e+21", -5, "-5", 8, "08"]) : unit(r);
      if (r() < 0.8) ctx.account_id = `acc-${Math.floor(r() * 1e6)}`;
      // Values of every kind on a segment's attribute (not a bucketing unit): arrays and booleans are in no id list.
      if (r() < 0.8) ctx.team = pick<unknown>(r, ["t-1", "t-2", "t-9", 3, "3", "03", ["t-1"], true, "T-1", null]);
      if (r() < 0.7) ctx.email = pick(r, ["a@corp.io", "b@x.com", "c@corp.io.evil"]);
      if (r() < 0.7) ctx.plan = pick<unknown>(r, ["pro", "team", "free", 3]);
      if (r() < 0.6) ctx.country = pick<unknown>(r, ["DE", "de", "FR"]);
      return ctx;
    });
    expect(mismatches).toEqual([]);
  });

  test("a segment GrowthBook cannot read as svc does serves the gates naming it off", () => {
    const snapshot = base({
      gates: {
        dotted: { salt: "s1", version: 1, rules: [{ conditions: [{ attr: "x", op: "in_segment", value: "by-path" }], passPercentage: 100 }] },
        re2: { salt: "s2", version: 1, rules: [{ conditions: [{ attr: "x", op: "not_in_segment", value: "letters" }], passPercentage: 100 }] },
      },
      segments: { "by-path": { attribute: "org.id", ids: ["o-1"] }, letters: { attribute: "user_id", conditions: [{ attr: "name", op: "regex", value: "^\\pL+$" }] } },
    });
    const { payload, unmapped } = mapSnapshot(snapshot);
    expect(unmapped).toEqual([
      { feature: "dotted", construct: 'segment by-path: attribute name "org.id" (GrowthBook reads dots as paths)', served: "false to every unit (the gate is off)" },
      { feature: "re2", construct: "segment letters: regex /^\\pL+$/ uses RE2-only syntax", served: "false to every unit (the gate is off)" },
    ]);
    expect(payload.features.dotted).toEqual({ defaultValue: false });
  });

  test("dateUpdated is a stamp of the revision and epoch: it moves with every publish and differs across epochs", () => {
    const a = dateUpdatedOf({ epoch: "ep1", revision: 7 });
    expect(a).toBe(dateUpdatedOf({ epoch: "ep1", revision: 7 }));
    expect(dateUpdatedOf({ epoch: "ep1", revision: 8 }) > a).toBe(true);
    expect(dateUpdatedOf({ epoch: "ep2", revision: 7 })).not.toBe(a);
    expect(Number.isNaN(Date.parse(a))).toBe(false);
  });
});
