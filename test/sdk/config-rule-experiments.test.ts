import { describe, expect, test } from "bun:test";
import { type Exposure, evaluateFlag } from "../../src/modules/delivery/ofrep";
import type { Snapshot as ServerSnapshot } from "../../src/modules/delivery/snapshot";
import { mapSnapshot } from "../../src/modules/growthbook/mapping";
import { type PublishedExperiment, assignVariant } from "../../src/sdk/experiments";
import { type Snapshot, createClient } from "../../src/sdk/index";

// An experiment on one of a config's rules (issue 29): only the units that rule decides take part (and are
// exposed), in OFREP and the SDK alike; the others get the config as published, with no exposure.

const USERS = { id: "uni_users", unit_type: "user_id" as const, holdout_range: null, salt: "users-salt" };
const ON_BETA_RULE: PublishedExperiment = {
  id: "exp_banner",
  universe: "users",
  salt: "banner-salt",
  allocation: [0, 10_000],
  variants: [
    { key: "control", weight: 1, value: null, override: { kind: "config", name: "banner", value: "Beta: welcome", rule: "beta" } },
    { key: "bold", weight: 1, value: null, override: { kind: "config", name: "banner", value: "BETA: WELCOME!", rule: "beta" } },
  ],
  gate: null,
};
const SNAPSHOT: Snapshot = {
  projectId: "prj_test",
  env: "prod",
  epoch: "",
  revision: 1,
  killswitches: {},
  configs: {
    banner: {
      value: "Welcome",
      version: 2,
      salt: "banner",
      rules: [
        { name: "staff", conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }], value: "Hi, colleague" },
        { name: "beta", conditions: [{ attr: "plan", op: "eq", value: "beta" }], value: "Beta: welcome" },
      ],
    },
  },
  gates: {},
  universes: { users: USERS },
  experiments: { "banner-test": ON_BETA_RULE },
  translations: {},
};

const contexts = Array.from({ length: 400 }, (_, i) => ({ user_id: `u-${i}`, plan: i % 2 ? "beta" : "free", ...(i % 5 === 0 ? { email: `p${i}@acme.com` } : {}) }));
const expected = (ctx: (typeof contexts)[number]) => {
  if (ctx.email) return { value: "Hi, colleague", exposed: false };
  if (ctx.plan !== "beta") return { value: "Welcome", exposed: false };
  const variant = assignVariant(ON_BETA_RULE, USERS, ctx.user_id).variant;
  return { value: variant === "bold" ? "BETA: WELCOME!" : "Beta: welcome", exposed: true, variant };
};

describe("an experiment on a config's rule", () => {
  test("OFREP: units the rule decides are assigned and exposed; the others are served as published, unexposed", () => {
    let bold = 0;
    for (const ctx of contexts) {
      const exposures: Exposure[] = [];
      const flag = evaluateFlag(SNAPSHOT as unknown as ServerSnapshot, "banner", ctx, exposures)!;
      const want = expected(ctx);
      expect(flag.value).toBe(want.value);
      expect(exposures.length).toBe(want.exposed ? 1 : 0);
      if (want.exposed) expect(exposures[0]).toEqual({ experimentId: "exp_banner", unitId: ctx.user_id, variant: want.variant! });
      if (flag.value === "BETA: WELCOME!") bold++;
    }
    expect(bold).toBeGreaterThan(40);
  });

  test("the SDK gives the same values and logs exposures for the rule's units only", async () => {
    // Event batches carry `events`; evaluation-count batches (`{env, counts}`, issue 30) do not.
  const sent: { events?: { name: string; unitId?: string }[] }[] = [];
    const svc = createClient({
      baseUrl: "http://svc.test",
      sdkKey: "sdk_server_test",
      stream: false,
      flushIntervalMs: 60_000,
      reportContextAttributes: false,
      fetch: async (_url, init) => {
        if (init?.method === "POST") {
          sent.push(JSON.parse(String(init.body)));
          return Response.json({ accepted: 1 });
        }
        return Response.json(SNAPSHOT);
      },
    });
    await svc.ready();
    for (const ctx of contexts) expect(svc.getConfig("banner", "", ctx)).toBe(expected(ctx).value);
    await svc.close();
    const exposed = new Set(sent.flatMap((b) => b.events ?? []).filter((e) => e.name === "$exposure:exp_banner").map((e) => e.unitId));
    expect(exposed).toEqual(new Set(contexts.filter((c) => expected(c).exposed).map((c) => c.user_id)));
  });

  test("GrowthBook's payload lists it as unmapped and serves the config's own rules", () => {
    const { payload, unmapped } = mapSnapshot(SNAPSHOT as unknown as ServerSnapshot);
    expect(unmapped).toEqual([{ feature: "banner", construct: "experiment banner-test on one of its rules", served: "banner without banner-test's override" }]);
    expect(payload.features.banner!.rules!.map((r) => r.force)).toEqual(["Hi, colleague", "Beta: welcome"]);
  });
});
