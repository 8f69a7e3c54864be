import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { saveDeviceSignIn, envFor, removeSandboxes, sandbox, startClientTestServer, svc, svcJson, type ClientTestServer, type Sandbox } from "./client-helpers";
import { SVC_SOURCE } from "./process";

// Each test spawns the CLI several times.
setDefaultTimeout(60_000);

let ts: ClientTestServer;
/** A sandbox with a read-write API token (SERVICE_CLI_TOKEN): never asks. */
let box: Sandbox;
let env: Record<string, string>;

const STAFF = { name: "staff", conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }], passPercentage: 100 };
const DE = { name: "half of DE", conditions: [{ attr: "country", op: "in", value: ["de", "at"] }, { attr: "app_version", op: "semver_gte", value: "2.4.0" }], passPercentage: 50 };
const EVERYONE = { conditions: [], passPercentage: 100 };

beforeAll(async () => {
  ts = await startClientTestServer();
  const minted = await ts.api("/api/admin/tokens", { body: { name: "gates-cli", access: "read-write" } });
  expect(minted.status).toBe(201);
  box = sandbox();
  env = { SERVICE_CLI_TOKEN: minted.body.token, SERVICE_URL: ts.url };
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

const gate = async (name: string) => (await ts.api(`/api/admin/gates/${name}`)).body;
const run = (args: string[]) => svc(box, ["gates", ...args], { env });
const runJson = (args: string[]) => svcJson(box, ["gates", ...args], { env });

describe("svc gates", () => {
  test("create (--rules inline and @FILE), list, get: --json is the API's answer, the human form reads as rules", async () => {
    const created = await runJson(["create", "new-checkout", "--description", "The redesigned checkout", "--rules", JSON.stringify([STAFF, DE])]);
    // (bun's toMatchObject writes its asymmetric matchers into the object it checks: plain comparisons keep `created` intact.)
    expect(created.id).toMatch(/^gate_/);
    expect(created.name).toBe("new-checkout");
    for (const e of ["dev", "staging", "prod"]) expect((await gate("new-checkout")).envs[e]).toMatchObject({ rules: [STAFF, DE], version: 1 });

    const file = join(box.cwd, "rules.json");
    writeFileSync(file, JSON.stringify([EVERYONE]));
    const human = await run(["create", "beta", "--rules", `@${file}`]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("Created gate beta (gate_");
    expect(human.stdout).toContain("  1. everyone → 100%");
    expect(human.stdout).toContain("svc gates set-rules beta --env dev --rules JSON");
    expect(human.stderr).toBe("");
    const bare = await run(["create", "empty"]);
    expect(bare.stdout).toContain("no rules (off for everyone)");
    // Attributes nobody declared or saw: published all the same, with a warning on stderr naming the rule and field.
    const warned = await run(["create", "staff-only", "--rules", JSON.stringify([STAFF])]);
    expect(warned.code).toBe(0);
    expect(warned.stdout).toContain('  1. staff: email ends_with "@acme.com" → 100%');
    expect(warned.stderr).toMatch(/^warning: rules\[0\]\.conditions\[0\]\.attr: .*\bemail\b/m);
    expect((await runJson(["delete", "staff-only"])).deleted).toBe(true);

    const listed = await runJson(["list"]);
    expect(listed.map((g: any) => g.name)).toEqual(["beta", "empty", "new-checkout"]);
    expect(listed[2]).toMatchObject({ description: "The redesigned checkout", envs: { prod: { rules: [STAFF, DE], version: 1 } } });
    expect((await runJson(["list", "--query", "REDESIGN"])).map((g: any) => g.name)).toEqual(["new-checkout"]);
    const table = await run(["list"]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^NAME\s+DEV\s+STAGING\s+PROD\s+DESCRIPTION$/m);
    expect(table.stdout).toMatch(/^new-checkout\s+v1, 2 rules\s+v1, 2 rules\s+v1, 2 rules\s+The redesigned checkout$/m);
    expect(table.stdout).toMatch(/^empty\s+v1, 0 rules/m);
    expect((await run(["list", "--query", "nothing"])).stdout.trim()).toBe('No gates match "nothing".');

    const got = await runJson(["get", "new-checkout"]);
    expect(got).toEqual(await gate("new-checkout"));
    const one = await runJson(["get", "new-checkout", "--env", "prod"]);
    expect(one).toMatchObject({ id: created.id, name: "new-checkout", env: "prod", rules: [STAFF, DE], version: 1, updatedBy: got.envs.prod.updatedBy });
    const shown = await run(["get", "new-checkout"]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`new-checkout (${created.id}): The redesigned checkout`);
    expect(shown.stdout).toMatch(/^prod \(version 1, \d{4}-\d\d-\d\d \d\d:\d\d by .+\):$/m);
    expect(shown.stdout).toContain('  1. staff: email ends_with "@acme.com" → 100%');
    expect(shown.stdout).toContain('  2. half of DE: country in ["de", "at"] and app_version semver_gte "2.4.0" → 50%');
    expect((await run(["get", "empty", "--env", "dev"])).stdout).toContain("  no rules: off for everyone");
  });

  test("set-rules publishes one env (also from `get --env --json` output); history lists the versions", async () => {
    const dev = await runJson(["set-rules", "new-checkout", "--env", "dev", "--rules", JSON.stringify([EVERYONE])]);
    expect(dev).toMatchObject({ env: "dev", version: 2, rules: [EVERYONE] });
    expect((await gate("new-checkout")).envs.prod.version).toBe(1);

    const human = await run(["set-rules", "new-checkout", "--env", "staging", "--rules", JSON.stringify([{ ...STAFF, passPercentage: 25, unit: "account_id" }])]);
    expect(human.code).toBe(0);
    expect(human.stdout).toBe('staging: new-checkout version 2, 1 rule:\n  1. staff: email ends_with "@acme.com" → 25% by account_id\n');

    // Not a terminal: prod does not ask. The JSON `get --env` prints is accepted as --rules.
    const file = join(box.cwd, "prod.json");
    writeFileSync(file, JSON.stringify({ ...(await runJson(["get", "new-checkout", "--env", "dev"])), env: "dev" }));
    const prod = await runJson(["set-rules", "new-checkout", "--env", "prod", "--rules", `@${file}`]);
    expect(prod).toMatchObject({ env: "prod", version: 2, rules: [EVERYONE] });

    const history = await runJson(["history", "new-checkout", "--env", "prod"]);
    expect(history.map((h: any) => [h.env, h.version, h.action])).toEqual([
      ["prod", 2, "gate.rules.set"],
      ["prod", 1, "gate.create"],
    ]);
    expect(history[1].rules).toEqual([STAFF, DE]);
    expect((await runJson(["history", "new-checkout", "--limit", "1"])).length).toBe(1);
    const table = await run(["history", "new-checkout", "--env", "prod"]);
    expect(table.stdout).toMatch(/^ENV\s+VERSION\s+RULES\s+ACTION\s+BY\s+WHEN$/m);
    expect(table.stdout).toMatch(/^prod\s+2\s+1\. everyone → 100%\s+rules\.set\s/m);
    expect(table.stdout).toMatch(/^prod\s+1\s+1\. staff: email ends_with "@acme\.com" → 100%; \S*…\s+create\s/m);
  });

  test("explain: --json is the API's explanation; the human form gives value, deciding rule and why earlier rules failed", async () => {
    await runJson(["set-rules", "new-checkout", "--env", "prod", "--rules", JSON.stringify([STAFF, DE])]);
    const context = { user_id: "user-7", email: "bo@example.com", country: "de", app_version: "2.5.0" };
    const x = await runJson(["explain", "new-checkout", "--env", "prod", "--context", JSON.stringify(context)]);
    const direct = (await ts.api("/api/admin/gates/new-checkout/explain", { body: { env: "prod", context } })).body;
    expect(x).toEqual(direct);
    expect(typeof x.bucket).toBe("number");
    expect(x).toMatchObject({ gate: "new-checkout", env: "prod", version: 3, ruleIndex: 1, reason: "SPLIT" });

    const human = await run(["explain", "new-checkout", "--env", "prod", "--context", JSON.stringify(context)]);
    expect(human.code).toBe(0);
    const onOff = x.value ? "on" : "off";
    expect(human.stdout).toContain(`prod: new-checkout is ${onOff} for this context (version 3)`);
    expect(human.stdout).toContain(
      `Decided by rule 2 (half of DE): country in ["de", "at"] and app_version semver_gte "2.4.0" → 50%. Its conditions hold and the unit's bucket ${x.bucket.toFixed(4)} is ${x.value ? "under" : "not under"} 50%.`,
    );
    expect(human.stdout).toContain('Earlier rules that did not hold:\n  rule 1 (staff):\n    ✗ email ends_with "@acme.com": email is "bo@example.com"');

    const staff = await run(["explain", "new-checkout", "--env", "prod", "--context", '{"email":"ana@acme.com"}']);
    expect(staff.stdout).toContain("prod: new-checkout is on for this context (version 3)");
    expect(staff.stdout).toContain("Decided by rule 1 (staff)");
    expect(staff.stdout).toContain('Decided by rule 1 (staff): email ends_with "@acme.com" → 100%. Its conditions hold and it passes 100%.');
    expect(staff.stdout).not.toContain("did not hold");

    const nobody = await run(["explain", "new-checkout", "--env", "prod", "--context", '{"country":"us"}']);
    expect(nobody.stdout).toContain("prod: new-checkout is off for this context (version 3)");
    expect(nobody.stdout).toContain("No rule held, so it is off (the default).");
    expect(nobody.stdout).toContain("Rules that did not hold:\n  rule 1 (staff):\n    ✗ email ends_with \"@acme.com\": email is not in the context\n  rule 2 (half of DE):\n    ✗ country in");
    expect(nobody.stdout).toContain('✗ app_version semver_gte "2.4.0": app_version is not in the context');

    // No user_id to bucket by: the split rule leaves it out, and says so.
    const noUnit = await run(["explain", "new-checkout", "--env", "prod", "--context", '{"country":"de","app_version":"3.0.0"}']);
    expect(noUnit.stdout).toContain("the context has no user_id to bucket by, so a 50% rollout leaves it out");

    const file = join(box.cwd, "context.json");
    writeFileSync(file, JSON.stringify({ email: "ana@acme.com" }));
    expect((await runJson(["explain", "new-checkout", "--context", `@${file}`])).value).toBe(true);
    expect((await runJson(["explain", "empty", "--env", "dev", "--context", "{}"])).reason).toBe("DEFAULT");
    expect((await run(["explain", "empty", "--env", "dev", "--context", "{}"])).stdout).toContain("It has no rules on this env, so it is off for everyone.");
  });

  test("rollback and delete (no terminal: no question)", async () => {
    const rolled = await runJson(["rollback", "new-checkout", "--env", "dev", "--version", "1"]);
    expect(rolled).toMatchObject({ env: "dev", version: 3, rules: [STAFF, DE] });
    const human = await run(["rollback", "new-checkout", "--env", "dev", "--version", "2"]);
    expect(human.stdout).toBe("dev: new-checkout version 4 (the rules of version 2), 1 rule:\n  1. everyone → 100%\n");
    const missing = await run(["rollback", "new-checkout", "--env", "dev", "--version", "99", "--json"]);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toMatchObject({ code: "NOT_FOUND" });

    expect(await runJson(["delete", "empty"])).toEqual({ name: "empty", deleted: true });
    expect((await ts.api("/api/admin/gates/empty")).status).toBe(404);
  });

  test("usage mistakes exit 2 and send nothing: bad --rules JSON, not a list, missing flags, bad --context", async () => {
    const before = await gate("new-checkout");
    const cases: [string[], RegExp][] = [
      [["set-rules", "new-checkout", "--env", "dev", "--rules", "[{conditions:[]}]"], /--rules must be JSON/],
      [["set-rules", "new-checkout", "--env", "dev", "--rules", '{"a":1}'], /--rules must be a JSON list of rules/],
      [["set-rules", "new-checkout", "--env", "dev", "--rules", "@/nonexistent/rules.json"], /cannot read/],
      [["set-rules", "new-checkout", "--env", "dev"], /--rules JSON is required/],
      [["set-rules", "new-checkout", "--rules", "[]"], /--env dev\|staging\|prod is required/],
      [["set-rules", "new-checkout", "--env", "qa", "--rules", "[]"], /--env must be one of/],
      [["create", "x", "--rules", "nope"], /--rules must be JSON/],
      [["explain", "new-checkout", "--context", "[1]"], /--context must be a JSON object/],
      [["explain", "new-checkout"], /--context JSON is required/],
      [["rollback", "new-checkout", "--env", "dev"], /--version N is required/],
      [["rollback", "new-checkout", "--env", "dev", "--version", "0"], /--version must be a whole number/],
      [["history", "new-checkout", "--limit", "5000"], /--limit must be a whole number from 1 to 1000/],
    ];
    for (const [args, message] of cases) {
      const r = await run([...args, "--json"]);
      expect([args.join(" "), r.code]).toEqual([args.join(" "), 2]);
      const body = JSON.parse(r.stderr);
      expect(body.code).toBe("USAGE");
      expect(body.error).toMatch(message);
    }
    const human = await run(["set-rules", "new-checkout", "--env", "dev", "--rules", "[oops"]);
    expect(human.code).toBe(2);
    expect(human.stderr).toContain("svc gates set-rules: --rules must be JSON");
    expect(human.stderr).toContain("svc help gates set-rules");
    expect((await ts.api("/api/admin/gates")).body.map((g: any) => g.name)).not.toContain("x");
    expect(await gate("new-checkout")).toEqual(before);
  });

  test("a server VALIDATION error shows the rule and the field; unknown names are NOT_FOUND; nothing changes", async () => {
    const before = await gate("new-checkout");
    const bad = JSON.stringify([EVERYONE, { conditions: [{ attr: "age", op: "gt", value: "ten" }], passPercentage: 100 }]);
    const human = await run(["set-rules", "new-checkout", "--env", "dev", "--rules", bad]);
    expect(human.code).toBe(1);
    expect(human.stderr).toContain("svc gates set-rules: Invalid gate rule: gt compares with a number (VALIDATION, HTTP 400)");
    expect(human.stderr).toContain("rules[1].conditions[0].value: gt compares with a number");
    const json = await run(["set-rules", "new-checkout", "--env", "dev", "--rules", JSON.stringify([{ conditions: [{ attr: "x", op: "equals", value: 1 }], passPercentage: 100 }]), "--json"]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr)).toMatchObject({ code: "VALIDATION", status: 400, detail: expect.stringContaining('rules[0].conditions[0].op: unknown operator "equals"') });
    const created = await run(["create", "broken", "--rules", JSON.stringify([{ conditions: [], passPercentage: 101 }]), "--json"]);
    expect(created.code).toBe(1);
    expect(JSON.parse(created.stderr).code).toBe("VALIDATION");
    expect(created.stderr).toContain("passPercentage");

    const unknown = await run(["get", "nope", "--json"]);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr)).toMatchObject({ code: "NOT_FOUND", status: 404 });
    expect(await gate("new-checkout")).toEqual(before);
    expect((await ts.api("/api/admin/gates/broken")).status).toBe(404);
  });
});

const ACME = [{ attr: "email", op: "ends_with", value: "@acme.com" }];
const runTemplates = (args: string[]) => run(["templates", ...args]);
const templatesJson = (args: string[]) => runJson(["templates", ...args]);

describe("svc gates templates", () => {
  test("list and get: --json is the API's answer (built-ins first); the human forms read as conditions", async () => {
    const listed = await templatesJson(["list"]);
    expect(listed).toEqual((await ts.api("/api/admin/gates/templates")).body);
    expect(listed.filter((t: any) => t.builtIn).map((t: any) => t.name)).toEqual(["Internal users", "Percentage rollout", "Country list", "App version at least", "Beta opt-in"]);
    expect((await templatesJson(["list", "--query", "COUNTRY"])).map((t: any) => t.name)).toEqual(["Country list"]);
    const table = await runTemplates(["list"]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^NAME\s+CATEGORY\s+CONDITIONS\s+BUILT-IN\s+DESCRIPTION$/m);
    expect(table.stdout).toMatch(/^Beta opt-in\s+condition\s+beta_opt_in eq true\s+yes\s+People who turned on beta features/m);
    expect(table.stdout).toMatch(/^Country list\s+condition\s+country in \["us", "ca"\]\s+yes\s/m);
    expect(table.stdout).toMatch(/^Percentage rollout\s+rollout\s+everyone\s+yes\s/m);
    expect((await runTemplates(["list", "--query", "nothing"])).stdout.trim()).toBe('No templates match "nothing".');

    const beta = await templatesJson(["get", "Beta opt-in"]);
    expect(beta).toEqual((await ts.api("/api/admin/gates/templates/gtpl_beta_opt_in")).body);
    expect(await templatesJson(["get", "gtpl_beta_opt_in"])).toEqual(beta);
    const shown = await runTemplates(["get", "Beta opt-in"]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toBe(
      "Beta opt-in (gtpl_beta_opt_in), built-in, condition: People who turned on beta features (attribute beta_opt_in = true).\n  beta_opt_in eq true\nStart a gate from it: `svc gates create <name> --template 'Beta opt-in' --percentage N`\n",
    );
    expect((await runTemplates(["get", "Percentage rollout"])).stdout).toContain("  no conditions: everyone\n");
    const unknown = await runTemplates(["get", "nope", "--json"]);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr)).toMatchObject({ code: "NOT_FOUND", status: 404 });
  });

  test("create (--rules inline and @FILE of `templates get --json`); duplicates and built-in names are refused; bad conditions name the field", async () => {
    const created = await templatesJson(["create", "Acme staff", "--rules", JSON.stringify(ACME), "--description", "People at acme.com", "--category", "people"]);
    expect(Object.keys(created).sort()).toEqual(["id", "name"]);
    expect(created.id).toMatch(/^gtpl_/);
    const stored = (await ts.api("/api/admin/gates/templates/Acme%20staff")).body;
    expect(stored).toMatchObject({ id: created.id, name: "Acme staff", description: "People at acme.com", category: "people", rules: ACME, builtIn: false });

    // What `templates get --json` prints is accepted as --rules.
    const file = join(box.cwd, "template.json");
    writeFileSync(file, JSON.stringify(await templatesJson(["get", "Country list"])));
    const human = await runTemplates(["create", "Nordics", "--rules", `@${file}`]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^Created template Nordics \(gtpl_\w+\): country in \["us", "ca"\]\.$/m);
    expect(human.stdout).toContain("svc gates create <name> --template Nordics");
    expect((await templatesJson(["get", "Nordics"])).category).toBe("condition");
    expect((await runTemplates(["create", "Everyone", "--rules", "[]"])).stdout).toContain("no conditions (everyone)");

    const twice = await runTemplates(["create", "Acme staff", "--rules", "[]", "--json"]);
    expect(twice.code).toBe(1);
    expect(JSON.parse(twice.stderr)).toMatchObject({ code: "ALREADY_EXISTS", status: 409 });
    expect((await runTemplates(["create", "Beta opt-in", "--rules", "[]", "--json"])).code).toBe(1);
    const bad = await runTemplates(["create", "Broken", "--rules", JSON.stringify([{ attr: "email", op: "like", value: "%acme%" }]), "--json"]);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr)).toMatchObject({ code: "VALIDATION", detail: expect.stringContaining("rules[0].op") });
    expect((await ts.api("/api/admin/gates/templates/Broken")).status).toBe(404);
  });

  test("gates create --template [--percentage]: one rule of the template's conditions, shown to people", async () => {
    const created = await runJson(["create", "staff-preview", "--template", "Acme staff", "--percentage", "25"]);
    expect(created.name).toBe("staff-preview");
    for (const e of ["dev", "staging", "prod"]) expect((await gate("staff-preview")).envs[e].rules).toEqual([{ name: "Acme staff", conditions: ACME, passPercentage: 25 }]);

    const human = await run(["create", "beta-search", "--template", "gtpl_beta_opt_in", "--description", "Search for beta users"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("Created gate beta-search (gate_");
    expect(human.stdout).toContain("with 1 rule:\n  1. Beta opt-in: beta_opt_in eq true → 100%\n");
    expect(await gate("beta-search")).toMatchObject({ description: "Search for beta users", envs: { prod: { rules: [{ name: "Beta opt-in", passPercentage: 100 }] } } });
    expect((await runJson(["create", "half", "--template", "Percentage rollout", "--percentage", "12.5"])).name).toBe("half");
    expect((await gate("half")).envs.prod.rules).toEqual([{ name: "Percentage rollout", conditions: [], passPercentage: 12.5 }]);

    const missing = await run(["create", "x", "--template", "nope", "--json"]);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toMatchObject({ code: "NOT_FOUND" });
    expect((await ts.api("/api/admin/gates/x")).status).toBe(404);
  });

  test("create --segment: the one-condition template of a segment (issue 29)", async () => {
    expect((await ts.api("/api/admin/segments", { body: { name: "cli-testers", attribute: "account_id", ids: ["a-1"] } })).status).toBe(201);
    const human = await runTemplates(["create", "CLI testers", "--segment", "cli-testers"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("): in segment cli-testers.");
    expect((await ts.api("/api/admin/gates/templates/CLI%20testers")).body).toMatchObject({ category: "segment", rules: [{ attr: "account_id", op: "in_segment", value: "cli-testers" }] });
    const missing = await runTemplates(["create", "Nobody", "--segment", "no-such", "--json"]);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toMatchObject({ code: "VALIDATION", detail: expect.stringContaining("segment: no segment named no-such") });
    expect((await runTemplates(["delete", "CLI testers"])).code).toBe(0);
  });

  test("delete (no terminal: no question); built-ins are read-only; gates made from a template keep their rules", async () => {
    expect(await templatesJson(["delete", "Acme staff"])).toEqual({ name: "Acme staff", deleted: true });
    expect((await ts.api("/api/admin/gates/templates/Acme%20staff")).status).toBe(404);
    expect((await gate("staff-preview")).envs.prod.rules[0].conditions).toEqual(ACME);
    expect((await runTemplates(["delete", "Everyone"])).stdout.trim()).toBe("Deleted template Everyone.");

    const builtIn = await runTemplates(["delete", "Beta opt-in", "--json"]);
    expect(builtIn.code).toBe(1);
    expect(JSON.parse(builtIn.stderr)).toMatchObject({ code: "FORBIDDEN", status: 403 });
    const again = await runTemplates(["delete", "Acme staff", "--json"]);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stderr).code).toBe("NOT_FOUND");
  });

  test("usage mistakes exit 2 and send nothing", async () => {
    const templatesBefore = (await ts.api("/api/admin/gates/templates")).body;
    const gatesBefore = (await ts.api("/api/admin/gates")).body;
    const cases: [string[], RegExp][] = [
      [["templates", "create", "T"], /--rules JSON is required: a list of conditions/],
      [["templates", "create", "T", "--rules", "nope"], /--rules must be JSON/],
      [["templates", "create", "T", "--rules", '{"a":1}'], /--rules must be a JSON list of conditions/],
      [["templates", "create", "T", "--rules", "@/nonexistent/t.json"], /cannot read/],
      [["templates", "create", "T", "--segment", "s", "--rules", "[]"], /--segment and --rules cannot both be given/],
      [["templates", "create", "--rules", "[]"], /expected: svc gates templates create <name>/],
      [["templates", "get"], /expected: svc gates templates get <name>/],
      [["templates", "delete"], /expected: svc gates templates delete <name>/],
      [["templates", "list", "extra"], /takes no arguments/],
      [["templates", "rename", "T"], /unknown subcommand "templates" of `svc gates`/],
      [["create", "x", "--template", "Beta opt-in", "--rules", "[]"], /--template and --rules cannot both be given/],
      [["create", "x", "--percentage", "50"], /--percentage needs --template NAME/],
      [["create", "x", "--template", "Beta opt-in", "--percentage", "150"], /--percentage must be a number from 0 to 100/],
      [["create", "x", "--template", "Beta opt-in", "--percentage", "half"], /--percentage must be a number from 0 to 100/],
      [["create", "x", "--template", ""], /--template must not be empty/],
    ];
    for (const [args, message] of cases) {
      const r = await run([...args, "--json"]);
      expect([args.join(" "), r.code]).toEqual([args.join(" "), 2]);
      const body = JSON.parse(r.stderr);
      expect(body.code).toBe("USAGE");
      expect(body.error).toMatch(message);
    }
    const human = await runTemplates(["create", "T", "--rules", "[oops"]);
    expect(human.code).toBe(2);
    expect(human.stderr).toContain("svc gates templates create: --rules must be JSON");
    expect(human.stderr).toContain("svc help gates templates create");
    expect((await ts.api("/api/admin/gates/templates")).body).toEqual(templatesBefore);
    expect((await ts.api("/api/admin/gates")).body).toEqual(gatesBefore);

    const help = await svc(box, ["help", "gates"], { env });
    for (const sub of ["templates list", "templates get <name>", "templates create <name>", "templates delete <name>"]) expect(help.stdout).toContain(`svc gates ${sub}`);
    const create = await svc(box, ["help", "gates", "create"], { env });
    expect(create.stdout).toMatch(/^\s+--template NAME\s{2,}\S/m);
    expect(create.stdout).toMatch(/^\s+--percentage N\s{2,}\S/m);
  });
});

type TerminalRun = { code: number; output: string };

/** Runs `svc ARGS` on a pseudo-terminal as the signed-in sandbox `person`, answering `reply` to the first `[y/N]` question. */
async function inTerminal(person: Sandbox, args: string[], reply?: string): Promise<TerminalRun> {
  let output = "";
  let replied = false;
  const decoder = new TextDecoder();
  const proc = Bun.spawn([...SVC_SOURCE, ...args], {
    cwd: person.cwd,
    env: envFor(person),
    timeout: 20_000,
    terminal: {
      cols: 200,
      rows: 40,
      data(terminal, data) {
        output += decoder.decode(data, { stream: true });
        if (reply !== undefined && !replied && output.includes("[y/N]")) {
          replied = true;
          terminal.write(`${reply}\r`);
        }
      },
    },
  });
  const code = await proc.exited;
  await Bun.sleep(50);
  proc.terminal?.close();
  return { code, output: output.replaceAll("\r", "") };
}

describe("svc gates in a terminal", () => {
  let person: Sandbox;
  beforeAll(async () => {
    person = sandbox();
    await saveDeviceSignIn(ts, person);
    expect((await ts.api("/api/admin/gates", { body: { name: "careful", rules: [STAFF] } })).status).toBe(201);
  });

  test("prod set-rules shows now and after and asks: no changes nothing (exit 1), yes publishes; other envs and --yes do not ask", async () => {
    const rules = JSON.stringify([EVERYONE]);
    const declined = await inTerminal(person, ["gates", "set-rules", "careful", "--env", "prod", "--rules", rules], "n");
    expect(declined.output).toContain('prod: careful version 1 → 2.\n  now:\n    1. staff: email ends_with "@acme.com" → 100%\n  after:\n    1. everyone → 100%\nPublish these rules to prod? [y/N]');
    expect(declined.code).toBe(1);
    expect(declined.output).toContain("nothing was changed");
    expect((await gate("careful")).envs.prod).toMatchObject({ version: 1, rules: [STAFF] });

    const accepted = await inTerminal(person, ["gates", "set-rules", "careful", "--env", "prod", "--rules", rules], "y");
    expect(accepted.code).toBe(0);
    expect(accepted.output).toContain("prod: careful version 2, 1 rule:");
    expect((await gate("careful")).envs.prod).toMatchObject({ version: 2, rules: [EVERYONE], updatedBy: "owner@example.com" });

    const staging = await inTerminal(person, ["gates", "set-rules", "careful", "--env", "staging", "--rules", rules]);
    expect(staging.code).toBe(0);
    expect(staging.output).not.toContain("[y/N]");
    const yes = await inTerminal(person, ["gates", "rollback", "careful", "--env", "prod", "--version", "1", "--yes"]);
    expect(yes.code).toBe(0);
    expect(yes.output).not.toContain("[y/N]");
    expect((await gate("careful")).envs.prod).toMatchObject({ version: 3, rules: [STAFF] });
  });

  test("prod rollback and delete ask first; no leaves everything as it was", async () => {
    const rollback = await inTerminal(person, ["gates", "rollback", "careful", "--env", "prod", "--version", "2"], "n");
    expect(rollback.code).toBe(1);
    expect(rollback.output).toContain("prod: careful back to the rules of version 2, published as a new version.\n  its rules:\n    1. everyone → 100%\nPublish these rules to prod? [y/N]");
    const deleted = await inTerminal(person, ["gates", "delete", "careful"], "n");
    expect(deleted.code).toBe(1);
    expect(deleted.output).toContain("Delete gate careful and its history on every env?");
    expect((await gate("careful")).envs.prod).toMatchObject({ version: 3, rules: [STAFF] });

    const gone = await inTerminal(person, ["gates", "delete", "careful"], "y");
    expect(gone.code).toBe(0);
    expect(gone.output).toContain("Deleted gate careful.");
    expect((await ts.api("/api/admin/gates/careful")).status).toBe(404);
  });
});

describe("svc gates templates delete in a terminal", () => {
  test("asks first: no keeps the template (exit 1), yes deletes it", async () => {
    const person = sandbox();
    await saveDeviceSignIn(ts, person);
    expect((await ts.api("/api/admin/gates/templates", { body: { name: "Careful", rules: ACME } })).status).toBe(201);
    const declined = await inTerminal(person, ["gates", "templates", "delete", "Careful"], "n");
    expect(declined.code).toBe(1);
    expect(declined.output).toContain("Delete gate template Careful? Gates made from it keep their rules. [y/N]");
    expect(declined.output).toContain("nothing was changed");
    expect((await ts.api("/api/admin/gates/templates/Careful")).status).toBe(200);
    const accepted = await inTerminal(person, ["gates", "templates", "delete", "Careful"], "y");
    expect(accepted.code).toBe(0);
    expect(accepted.output).toContain("Deleted template Careful.");
    expect((await ts.api("/api/admin/gates/templates/Careful")).status).toBe(404);
  });
});
