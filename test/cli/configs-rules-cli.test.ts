import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { mcpSession, removeSandboxes, sandbox, startClientTestServer, svc, svcJson, type ClientTestServer, type Sandbox } from "./client-helpers";

// Targeted configs from the CLI and MCP (issue 29, "Everywhere a feature lives"). Each test spawns the CLI several times.
setDefaultTimeout(60_000);

let ts: ClientTestServer;
/** A sandbox with a read-write API token (SERVICE_CLI_TOKEN): never asks. */
let box: Sandbox;
let env: Record<string, string>;

const STAFF = { name: "staff", conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }], value: "staff preview" };
const SPLIT = { conditions: [], split: [{ value: "a", weight: 50 }, { value: "b", weight: 30 }, { value: "c", weight: 20 }] };

beforeAll(async () => {
  ts = await startClientTestServer();
  const minted = await ts.api("/api/admin/tokens", { body: { name: "configs-cli", access: "read-write" } });
  expect(minted.status).toBe(201);
  box = sandbox();
  env = { SERVICE_CLI_TOKEN: minted.body.token, SERVICE_URL: ts.url };
  for (const name of ["banner", "greeting"]) {
    expect((await ts.api("/api/admin/configs", { body: { name, schema: { type: "string", maxLength: 40 }, value: "plain" } })).status).toBe(201);
  }
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

const config = async (name: string) => (await ts.api(`/api/admin/configs/${name}`)).body;
const run = (args: string[]) => svc(box, ["configs", ...args], { env });
const runJson = (args: string[]) => svcJson(box, ["configs", ...args], { env });
function file(name: string, content: unknown): string {
  const path = join(box.cwd, name);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

describe("svc configs rules", () => {
  test("rules set saves a draft with the rules (default value: the published one); rules shows both as tables; explain --draft previews it", async () => {
    const rulesPath = file("rules.json", [STAFF, SPLIT]);
    const saved = await runJson(["rules", "set", "banner", "--env", "prod", "--file", rulesPath]);
    expect(saved.draft).toMatchObject({ env: "prod", baseVersion: 1 });
    expect(saved.published).toBeUndefined();
    let stored = await config("banner");
    expect(stored.drafts.prod).toMatchObject({ value: "plain", rules: [STAFF, SPLIT], baseVersion: 1 });
    expect(stored.envs.prod).toMatchObject({ value: "plain", rules: [], version: 1 });

    const shown = await runJson(["rules", "banner", "--env", "prod"]);
    expect(shown).toEqual({ id: stored.id, name: "banner", env: "prod", version: 1, value: "plain", rules: [], draft: { value: "plain", rules: [STAFF, SPLIT], baseVersion: 1, updatedAt: stored.drafts.prod.updatedAt } });
    const human = await run(["rules", "banner", "--env", "prod"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("banner on prod (version 1): 0 rules");
    expect(human.stdout).toContain("Unpublished draft (from version 1):");
    expect(human.stdout).toMatch(/^#\s+RULE\s+CONDITIONS\s+SERVES$/m);
    expect(human.stdout).toMatch(/^1\s+staff\s+email ends_with "@acme.com"\s+"staff preview"$/m);
    expect(human.stdout).toMatch(/^2\s+rule-2\s+everyone\s+"a" 50% \/ "b" 30% \/ "c" 20%$/m);
    expect(human.stdout).toMatch(/^-\s+default\s+no rule above holds\s+"plain"$/m);

    const preview = await runJson(["explain", "banner", "--env", "prod", "--context", '{"user_id":"u-1","email":"ada@acme.com"}', "--draft"]);
    expect(preview).toMatchObject({ config: "banner", env: "prod", draft: true, value: "staff preview", variant: "staff", reason: "TARGETING_MATCH", ruleIndex: 0, bucket: null });
    const live = await runJson(["explain", "banner", "--env", "prod", "--context", '{"user_id":"u-1","email":"ada@acme.com"}']);
    expect(live).toMatchObject({ draft: false, value: "plain", variant: "default", reason: "DEFAULT", ruleIndex: null });
    // --json is the API's own answer.
    const direct = (await ts.api("/api/admin/configs/banner/explain", { body: { env: "prod", context: { user_id: "u-1", email: "ada@acme.com" }, draft: true } })).body;
    expect(preview).toEqual(direct);
  });

  test("rules set --publish with --value makes value and rules live as one version; explain says the variant and why", async () => {
    const rulesPath = file("rules.json", { rules: [STAFF, SPLIT] });
    const done = await runJson(["rules", "set", "banner", "--env", "prod", "--file", rulesPath, "--value", '"fallback"', "--publish"]);
    expect(done.published).toMatchObject({ env: "prod", version: 2, value: "fallback" });
    const stored = await config("banner");
    expect(stored.envs.prod).toMatchObject({ value: "fallback", rules: [STAFF, SPLIT], version: 2 });
    expect(stored.drafts).toEqual({});
    expect(stored.envs.staging).toMatchObject({ value: "plain", rules: [], version: 1 });
    const history = (await ts.api("/api/admin/configs/banner/history?env=prod")).body;
    expect(history[0]).toMatchObject({ version: 2, value: "fallback", rules: [STAFF, SPLIT] });

    const x = await runJson(["explain", "banner", "--env", "prod", "--context", '{"user_id":"u-7"}']);
    expect(x.reason).toBe("SPLIT");
    expect(x.ruleIndex).toBe(1);
    expect(["a", "b", "c"]).toContain(x.value);
    expect(x.variant).toBe(`rule-2/${["a", "b", "c"].indexOf(x.value) + 1}`);
    const human = await run(["explain", "banner", "--env", "prod", "--context", '{"user_id":"u-7"}']);
    expect(human.stdout).toContain(`prod: banner serves ${JSON.stringify(x.value)} to this context (version 2)`);
    expect(human.stdout).toContain(`Variant ${x.variant} (SPLIT): decided by rule 2; its conditions hold and the unit's bucket ${x.bucket.toFixed(4)} falls in this value's share.`);
    expect(human.stdout).toContain("Earlier rules that did not decide:\n  rule 1 (staff):\n    ✗ email ends_with:");
    // No unit: the split passes the rule over, and the default is served.
    const noUnit = await run(["explain", "banner", "--env", "prod", "--context", "{}"]);
    expect(noUnit.stdout).toContain('prod: banner serves "fallback" to this context (version 2)');
    expect(noUnit.stdout).toContain("Variant default (DEFAULT): no rule decided, so it serves the default value.");
    expect(noUnit.stdout).toContain("rule 2: its conditions hold, but the context has no unit for its split");
    const shown = await run(["rules", "banner", "--env", "prod"]);
    expect(shown.stdout).toContain("banner on prod (version 2): 2 rules");
    expect(shown.stdout).not.toContain("Unpublished draft");
  });

  test("a draft's own default value is replaced by the published one, with a warning", async () => {
    expect((await ts.api("/api/admin/configs/greeting/drafts", { method: "PUT", body: { env: "dev", value: "hello" }, headers: { "x-project-id": ts.projectId } })).status).toBe(200);
    const r = await run(["rules", "set", "greeting", "--env", "dev", "--file", file("one.json", [STAFF])]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("Saved a draft of greeting on dev with 1 rule (from version 1); publish it with `svc configs publish greeting --env dev`.");
    expect(r.stderr).toContain('warning: the dev draft\'s default value "hello" is replaced by the published one; pass --value to keep another');
    expect((await config("greeting")).drafts.dev).toMatchObject({ value: "plain", rules: [STAFF] });
  });

  test("failures: bad rules (1, naming the field), usage (2), unknown config (1); nothing changes", async () => {
    const before = await config("banner");
    const badWeights = await run(["rules", "set", "banner", "--env", "prod", "--file", file("bad.json", [{ conditions: [], split: [{ value: "a", weight: 50 }, { value: "b", weight: 40 }] }])]);
    expect(badWeights.code).toBe(1);
    expect(badWeights.stderr).toContain("VALIDATION");
    expect(badWeights.stderr).toContain("rules[0].split: the weights sum to 90; they must sum to 100");
    const badValue = await run(["rules", "set", "banner", "--env", "prod", "--json", "--publish", "--file", file("long.json", [{ conditions: [], value: "x".repeat(41) }])]);
    expect(badValue.code).toBe(1);
    expect(JSON.parse(badValue.stderr)).toMatchObject({ code: "VALIDATION", status: 400 });
    expect(JSON.parse(badValue.stderr).detail).toContain("rules[0].value");
    for (const args of [
      ["rules", "set", "banner", "--env", "prod"],
      ["rules", "set", "banner", "--file", file("ok.json", [STAFF])],
      ["rules", "set", "banner", "--env", "prod", "--file", file("obj.json", { value: 1 })],
      ["rules", "set", "banner", "--env", "prod", "--file", file("broken.json", "[{")],
      ["rules", "set", "banner", "--env", "prod", "--file", join(box.cwd, "missing.json")],
      ["rules", "banner", "--env", "qa"],
      ["explain", "banner"],
      ["explain", "banner", "--context", "[1]"],
    ]) {
      const r = await run(args);
      expect([args.join(" "), r.code]).toEqual([args.join(" "), 2]);
    }
    const missing = await run(["rules", "nope", "--json"]);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toMatchObject({ code: "NOT_FOUND", status: 404 });
    const noDraft = await run(["explain", "banner", "--env", "dev", "--context", "{}", "--draft", "--json"]);
    expect(noDraft.code).toBe(1);
    expect(JSON.parse(noDraft.stderr)).toMatchObject({ code: "NOT_FOUND" });
    expect(await config("banner")).toEqual(before);
  });

  test("help names the new subcommands", async () => {
    const help = await run(["--help"]);
    expect(help.stdout).toContain("svc configs rules <name> [flags]");
    expect(help.stdout).toContain("svc configs rules set <name> [flags]");
    expect(help.stdout).toContain("svc configs explain <name> [flags]");
  });
});

describe("MCP: get_config_rules, save_config_rules, explain_config", () => {
  test("save_config_rules saves a draft (publishing only when asked), get_config_rules shows it, explain_config previews and explains", async () => {
    expect((await ts.api("/api/admin/configs", { body: { name: "mcp-banner", schema: { type: "string", maxLength: 40 }, value: "plain" } })).status).toBe(201);
    const s = await mcpSession(box, env);
    try {
      const { tools } = await s.client.listTools();
      const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
      expect(byName.get_config_rules!.annotations).toMatchObject({ readOnlyHint: true });
      expect(byName.explain_config!.annotations).toMatchObject({ readOnlyHint: true });
      expect(byName.save_config_rules!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
      expect(byName.save_config_rules!.inputSchema.required!.sort()).toEqual(["env", "name", "rules"]);
      expect(byName.explain_config!.inputSchema.required!.sort()).toEqual(["context", "name"]);

      const saved = await s.body("save_config_rules", { name: "mcp-banner", env: "staging", rules: [STAFF, SPLIT] });
      expect(saved).toMatchObject({ draft: { env: "staging", baseVersion: 1 }, published: null });
      let stored = await config("mcp-banner");
      expect(stored.drafts.staging).toMatchObject({ value: "plain", rules: [STAFF, SPLIT] });
      expect(stored.envs.staging).toMatchObject({ rules: [], version: 1 });

      const shown = await s.body("get_config_rules", { name: "mcp-banner", env: "staging" });
      expect(shown).toMatchObject({ name: "mcp-banner", env: "staging", version: 1, value: "plain", rules: [], draft: { value: "plain", rules: [STAFF, SPLIT], baseVersion: 1 } });
      expect((await s.body("get_config_rules", { name: "mcp-banner" })).env).toBe("prod");

      const preview = await s.body("explain_config", { name: "mcp-banner", env: "staging", context: { email: "ada@acme.com" }, draft: true });
      expect(preview).toMatchObject({ value: "staff preview", variant: "staff", reason: "TARGETING_MATCH", ruleIndex: 0, draft: true });
      expect(await s.body("explain_config", { name: "mcp-banner", env: "staging", context: { email: "ada@acme.com" } })).toMatchObject({ value: "plain", reason: "DEFAULT", variant: "default" });

      const published = await s.body("save_config_rules", { name: "mcp-banner", env: "staging", rules: [SPLIT], value: "fallback", publish: true });
      expect(published).toMatchObject({ draft: { env: "staging" }, published: { env: "staging", version: 2, value: "fallback" } });
      stored = await config("mcp-banner");
      expect(stored.envs.staging).toMatchObject({ value: "fallback", rules: [SPLIT], version: 2 });
      expect(stored.drafts).toEqual({});
      const split = await s.body("explain_config", { name: "mcp-banner", env: "staging", context: { user_id: "u-9" } });
      expect(split.reason).toBe("SPLIT");
      expect(split.variant).toBe(`rule-1/${["a", "b", "c"].indexOf(split.value) + 1}`);

      // Mistakes are refused by name and change nothing; a misspelt field is refused by the tool's own schema.
      const bad = await s.call("save_config_rules", { name: "mcp-banner", env: "staging", rules: [{ conditions: [], split: [{ value: "a", weight: 60 }] }], publish: true });
      expect(bad.isError).toBe(true);
      expect(bad.text).toContain("VALIDATION");
      expect(bad.text).toContain("rules[0].split");
      expect((await s.call("save_config_rules", { name: "mcp-banner", env: "staging", rules: [{ conditions: [], valeu: "x" }] })).isError).toBe(true);
      expect((await s.call("explain_config", { name: "mcp-banner", env: "prod", context: {}, draft: true })).text).toContain("NOT_FOUND");
      expect(await config("mcp-banner")).toEqual(stored);
    } finally {
      await s.close();
    }
  });
});
