import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { removeSandboxes, sandbox, startClientTestServer, svc, type ClientTestServer, type Sandbox } from "./client-helpers";

// `svc import <tool> FILE` (issue 31): each fixture export (test/fixtures/imports, from the tools' documented
// formats) mapped, planned on a real server, applied, and read back through the API; what was not mapped goes
// to stderr (and `unmapped` in --json), the re-bucketed percentages into the plan.

setDefaultTimeout(120_000);

const fixtures = join(import.meta.dir, "..", "fixtures", "imports");

let ts: ClientTestServer;
let box: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  ts = await startClientTestServer();
  const minted = await ts.api("/api/admin/tokens", { body: { name: "import-cli", access: "read-write" } });
  expect(minted.status).toBe(201);
  box = sandbox();
  env = { SERVICE_CLI_TOKEN: minted.body.token, SERVICE_URL: ts.url };
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

const get = async (path: string) => {
  const res = await ts.api(path);
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

describe("svc import", () => {
  test("unleash: the plan first (nothing changed), then --apply --yes; gates, the variant config and the segment are there", async () => {
    const file = join(fixtures, "unleash.json");
    const plan = await svc(box, ["import", "unleash", file], { env });
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain("+ gates new-checkout");
    expect(plan.stdout).toContain("+ segments beta-testers");
    expect(plan.stdout).toContain("Re-bucketed:");
    expect(plan.stdout).toContain("new-checkout (prod): 25%");
    expect(plan.stderr).toContain("not mapped: environment qa (environment)");
    expect(plan.stderr).toContain("strategy remoteAddress has no svc equivalent");
    expect((await ts.api("/api/admin/gates/new-checkout")).status).toBe(404);

    const applied = await svc(box, ["import", "unleash", file, "--env-map", "qa=staging", "--apply", "--yes"], { env });
    expect(applied.code).toBe(0);
    expect(applied.stdout).toMatch(/Applied: \d+ created, 0 changed, 0 deleted\./);
    const gate = await get("/api/admin/gates/new-checkout");
    expect(gate.envs.prod.rules.map((r: any) => r.passPercentage)).toEqual([100, 100, 25]);
    expect(gate.envs.prod.rules[2].conditions[2]).toEqual({ attr: "user_id", op: "in_segment", value: "beta-testers" });
    expect((await get("/api/admin/gates/legacy-banner")).envs.staging.rules).toEqual([{ conditions: [], passPercentage: 100 }]);
    expect((await get("/api/admin/segments/beta-testers")).ids).toEqual(["u-3", "u-4"]);
    const config = await get("/api/admin/configs/search-v2-variant");
    expect(config.envs.prod.value).toBe("disabled");
    expect(config.envs.prod.rules[1].split).toEqual([{ value: "blue", weight: 50 }, { value: "green", weight: 50 }]);

    // Importing the same export again changes nothing.
    const again = await svc(box, ["import", "unleash", file, "--env-map", "qa=staging", "--apply", "--yes"], { env });
    expect(again.stdout).toContain("No changes");
  });

  test("growthbook: --out writes a document that svc plan and svc apply take; --keep-exact leaves out the partial rollout", async () => {
    const out = join(box.cwd, "growthbook.yaml");
    const written = await svc(box, ["import", "growthbook", join(fixtures, "growthbook-payload.json"), "--keep-exact", "--out", out], { env });
    expect(written.code).toBe(0);
    expect(written.stdout).toContain(`Wrote ${out}: 1 segments, 1 gates, 2 configs; 5 not mapped.`);
    expect(written.stderr).toContain("--keep-exact keeps only 0% and 100% rules");
    expect(Bun.YAML.parse(readFileSync(out, "utf8"))).toMatchObject({ version: 1, gates: [{ name: "dark-mode" }] });
    expect((await svc(box, ["plan", out], { env })).code).toBe(2);
    expect((await svc(box, ["apply", out, "--yes"], { env })).code).toBe(0);
    const gate = await get("/api/admin/gates/dark-mode");
    expect(gate.envs.prod.rules.map((r: any) => [r.name, r.passPercentage])).toEqual([
      ["fr_staff", 100],
      ["fr_beta", 100],
      ["fr_blocked", 0],
    ]);
    expect((await get("/api/admin/segments/grp_beta")).ids).toEqual(["u-1", "u-2", "u-3"]);
    expect((await get("/api/admin/configs/page-size")).envs.prod).toMatchObject({ value: 20, rules: [{ conditions: [{ attr: "signup", op: "after", value: "2026-01-01" }], value: 30 }] });
    expect((await get("/api/admin/configs/checkout-button")).envs.prod.rules).toEqual([{ conditions: [{ attr: "age", op: "gt", value: 30 }, { attr: "beta", op: "exists" }], value: "orange" }]);

    // The REST API's export: values as text, saved groups with their attribute.
    const api = await svc(box, ["import", "growthbook", join(fixtures, "growthbook-api.json"), "--apply", "--yes"], { env });
    expect(api.code).toBe(0);
    expect((await get("/api/admin/segments/enterprise")).attribute).toBe("company");
    expect((await get("/api/admin/gates/new-onboarding")).envs.dev.rules).toEqual([{ conditions: [], passPercentage: 100 }]);
    expect((await get("/api/admin/configs/api-limits")).envs.prod).toMatchObject({ value: { rpm: 60 }, rules: [{ value: { rpm: 600 } }, { split: [{ value: { rpm: 60 }, weight: 50 }, { value: { rpm: 90 }, weight: 50 }] }] });
  });

  test("launchdarkly: --json carries the plan, unmapped and rebucketed; the gate and the multivariate config are created", async () => {
    const r = await svc(box, ["import", "launchdarkly", join(fixtures, "launchdarkly.json"), "--env-map", "test=dev", "--apply", "--yes", "--json"], { env });
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(body.plan.applied).toBe(true);
    expect(body.unmapped).toContainEqual({ source: "segment eu-customers", construct: "excluded", reason: "svc segments have no exclusions; the segment is not mapped" });
    expect(body.rebucketed).toEqual([
      { flag: "new-dashboard", env: "prod", percentage: 12.5 },
      { flag: "pricing-page", env: "prod", percentage: 100, split: [60, 40] },
    ]);
    const gate = await get("/api/admin/gates/new-dashboard");
    expect(gate.envs.prod.rules.at(-1)).toEqual({ conditions: [], passPercentage: 12.5 });
    expect(gate.envs.dev.rules).toEqual([]);
    const config = await get("/api/admin/configs/pricing-page");
    expect(config.envs.staging.value).toBe("compact");
    expect(config.envs.prod.rules[0]).toEqual({ conditions: [{ attr: "user_id", op: "passes_gate", value: "new-dashboard" }, { attr: "user_id", op: "in", value: ["u-7"] }], value: "wide" });
    expect((await get("/api/admin/segments/beta-users")).ids).toEqual(["u-3", "u-4"]);
    expect((await ts.api("/api/admin/segments/eu-customers")).status).toBe(404);
  });

  test("flagsmith: into --env staging; identity and segment overrides as rules, multivariate as a split", async () => {
    const r = await svc(box, ["import", "flagsmith", join(fixtures, "flagsmith.json"), "--env", "staging", "--apply", "--yes"], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("not mapped: segment ten-percent (segment rules)");
    expect(r.stderr).toContain("checkout_theme (staging): split 30/20/50");
    const gate = await get("/api/admin/gates/new_cart");
    expect(gate.envs.staging.rules.map((x: any) => x.name)).toEqual(["identity overrides (on)", "segment power-users"]);
    expect(gate.envs.prod.rules).toEqual([]);
    expect((await get("/api/admin/segments/power-users")).conditions).toEqual([
      { attr: "plan", op: "in", value: ["pro", "team"] },
      { attr: "logins", op: "gte", value: 10 },
      { attr: "app_version", op: "semver_gt", value: "2.1.0" },
    ]);
    const banner = await get("/api/admin/configs/banner_text");
    expect(banner.envs.staging.value).toBe("Welcome");
    expect(banner.envs.staging.rules[0]).toEqual({ name: "identity overrides", conditions: [{ attr: "user_id", op: "in", value: ["u-42"] }], value: "Hello, tester" });
    expect((await get("/api/admin/configs/checkout_theme")).envs.staging.rules[0].split).toEqual([{ value: "dark", weight: 30 }, { value: "contrast", weight: 20 }, { value: "light", weight: 50 }]);
  });

  test("usage: an unknown tool and a bad --env-map are refused before anything is read", async () => {
    const bad = await svc(box, ["import", "statsig", join(fixtures, "unleash.json")], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unleash, growthbook, launchdarkly, flagsmith");
    const map = await svc(box, ["import", "unleash", join(fixtures, "unleash.json"), "--env-map", "qa=live"], { env });
    expect(map.code).toBe(2);
    expect(map.stderr).toContain("--env-map qa");
    const both = await svc(box, ["import", "unleash", join(fixtures, "unleash.json"), "--out", join(box.cwd, "x.yaml"), "--apply"], { env });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--out");
  });

  test("a file that is not the tool's export is an error (exit 1), not an empty plan", async () => {
    const r = await svc(box, ["import", "launchdarkly", join(fixtures, "flagsmith.json")], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("is it LaunchDarkly's export");
  });
});
