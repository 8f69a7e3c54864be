import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliLogin, envFor, removeSandboxes, sandbox, startClientTestServer, svc, svcJson, type ClientTestServer, type Sandbox } from "./client-helpers";
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
    await cliLogin(ts, person);
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
