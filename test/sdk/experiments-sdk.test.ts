import { expect, test } from "bun:test";
import jStat from "jstat";
import { type PublishedExperiment, assignVariant } from "../../src/sdk/experiments";
import { segmentOf } from "../../src/sdk/universes";

const universe = { salt: "uni-salt-1", holdout_range: [0, 500] as [number, number] };
const experiment = (over: Partial<PublishedExperiment> = {}): PublishedExperiment => ({
  id: "exp_1",
  universe: "users",
  salt: "exp-1-salt",
  allocation: [500, 5500],
  variants: [
    { key: "control", weight: 1, value: false },
    { key: "treatment", weight: 1, value: true },
  ],
  gate: null,
  ...over,
});
const ids = Array.from({ length: 100_000 }, (_, i) => `user-${i}`);

test("holdout and allocation follow the unit's segment; in the allocation every unit gets a variant", () => {
  const e = experiment();
  for (const id of ids.slice(0, 20_000)) {
    const s = segmentOf(universe.salt, id);
    const a = assignVariant(e, universe, id);
    if (s < 500) expect(a.reason).toBe("holdout");
    else if (s >= 5500) expect(a.reason).toBe("unallocated");
    else expect([a.reason, ["control", "treatment"].includes(a.variant)]).toEqual(["assigned", true]);
  }
});

test("weights are honoured (χ² against 1:2:1) and assignment is stable when another experiment starts", () => {
  const e = experiment({
    allocation: [0, 10_000],
    variants: [
      { key: "a", weight: 1, value: 1 },
      { key: "b", weight: 2, value: 2 },
      { key: "c", weight: 1, value: 3 },
    ],
  });
  const open = { salt: universe.salt, holdout_range: null };
  const counts: Record<string, number> = { a: 0, b: 0, c: 0 };
  for (const id of ids) counts[assignVariant(e, open, id).variant]!++;
  const expected = [0.25, 0.5, 0.25].map((w) => w * ids.length);
  const chi2 = [counts.a!, counts.b!, counts.c!].reduce((s, c, i) => s + (c - expected[i]!) ** 2 / expected[i]!, 0);
  expect(1 - jStat.chisquare.cdf(chi2, 2)).toBeGreaterThan(0.001);

  // A second experiment on other segments changes nobody's variant in the first.
  const first = experiment();
  const before = ids.map((id) => assignVariant(first, universe, id).variant);
  const second = experiment({ id: "exp_2", salt: "exp-2-salt", allocation: [5500, 9000] });
  const after = ids.map((id) => {
    assignVariant(second, universe, id);
    return assignVariant(first, universe, id).variant;
  });
  expect(after).toEqual(before);
  // And no unit is in both.
  expect(ids.some((id) => assignVariant(first, universe, id).variant && assignVariant(second, universe, id).variant)).toBe(false);
});

test("a targeting gate is asked only for allocated units; zero weights and no gate answer mean no variant", () => {
  let asked = 0;
  const gated = experiment({ gate: "beta-users", allocation: [0, 10_000] });
  const open = { salt: universe.salt, holdout_range: null };
  expect(assignVariant(gated, open, "u1", () => (asked++, false)).reason).toBe("targeting");
  expect(assignVariant(gated, open, "u1").reason).toBe("targeting");
  expect(assignVariant(gated, open, "u1", () => (asked++, true)).reason).toBe("assigned");
  expect(asked).toBe(2);
  const empty = experiment({ allocation: [0, 10_000], variants: [{ key: "a", weight: 0, value: 1 }] });
  expect(assignVariant(empty, open, "u1").variant).toBe("");
  const onlyB = experiment({ allocation: [0, 10_000], variants: [{ key: "a", weight: 0, value: 1 }, { key: "b", weight: 3, value: 2 }] });
  expect(new Set(ids.slice(0, 1000).map((id) => assignVariant(onlyB, open, id).variant))).toEqual(new Set(["b"]));
});
