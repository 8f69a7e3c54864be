import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { removeSandboxes, sandbox, startClientTestServer, svc, svcJson, type ClientTestServer, type Sandbox } from "./client-helpers";

// Each test spawns the CLI several times.
setDefaultTimeout(60_000);

let ts: ClientTestServer;
/** A sandbox with a read-write API token (SERVICE_CLI_TOKEN). */
let box: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  ts = await startClientTestServer();
  const minted = await ts.api("/api/admin/tokens", { body: { name: "attributes-cli", access: "read-write" } });
  expect(minted.status).toBe(201);
  box = sandbox();
  env = { SERVICE_CLI_TOKEN: minted.body.token, SERVICE_URL: ts.url };
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

const attribute = async (name: string) => (await ts.api(`/api/admin/attributes/${name}`)).body;
const run = (args: string[]) => svc(box, ["attributes", ...args], { env });
const runJson = (args: string[]) => svcJson(box, ["attributes", ...args], { env });

describe("svc attributes", () => {
  test("create: --json is the API's record; the human form names type and values; an only-seen attribute becomes declared", async () => {
    const plan = await runJson(["create", "plan", "--type", "enum", "--enum", "free, pro,,enterprise", "--required", "--description", "Billing plan", "--sdk-path", "account.plan"]);
    expect(plan.id).toMatch(/^attr_/);
    expect(plan).toEqual(await attribute("plan"));
    expect(plan).toMatchObject({ name: "plan", type: "enum", enumValues: ["free", "pro", "enterprise"], required: 1, description: "Billing plan", sdkPath: "account.plan", source: "manual", deprecated: 0, lastSeenAt: null });

    const human = await run(["create", "app_version", "--type", "semver"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^Declared attribute app_version \(attr_\w+\): semver\.$/m);
    expect(human.stderr).toBe("");
    expect(await attribute("app_version")).toMatchObject({ type: "semver", required: 0, description: null, sdkPath: null });

    // Seen in an evaluation context first (auto), then declared: same id, now manual.
    ts.server.ctx.services.attributes.noteContext(ts.projectId, { country: "de" });
    await ts.server.ctx.services.attributes.flush();
    const seen = await attribute("country");
    expect(seen).toMatchObject({ source: "auto", type: "string" });
    const declared = await runJson(["create", "country", "--type", "string", "--description", "ISO country"]);
    expect(declared).toMatchObject({ id: seen.id, source: "manual", lastSeenAt: seen.lastSeenAt, description: "ISO country" });

    // A declared name twice: the server's 409, exit 1.
    const twice = await run(["create", "plan", "--type", "string", "--json"]);
    expect(twice.code).toBe(1);
    expect(JSON.parse(twice.stderr)).toMatchObject({ code: "ALREADY_EXISTS", status: 409 });
  });

  test("list and get: --json is the API's answer; the human list is a table, get reads field by field", async () => {
    ts.server.ctx.services.attributes.noteContext(ts.projectId, { beta_opt_in: true });
    await ts.server.ctx.services.attributes.flush();
    const listed = await runJson(["list"]);
    expect(listed).toEqual((await ts.api("/api/admin/attributes")).body);
    expect(listed.map((a: any) => a.name)).toEqual(["app_version", "beta_opt_in", "country", "plan"]);
    expect((await runJson(["list", "--query", "BILLING"])).map((a: any) => a.name)).toEqual(["plan"]);

    const table = await run(["list"]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^NAME\s+TYPE\s+SOURCE\s+LAST SEEN\s+DEPRECATED$/m);
    expect(table.stdout).toMatch(/^plan\s+enum \(free, pro, enterprise\)\s+declared\s+never\s+no$/m);
    expect(table.stdout).toMatch(/^beta_opt_in\s+boolean\s+seen\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+no$/m);
    expect(table.stdout).toMatch(/^country\s+string\s+declared\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+no$/m);
    expect((await run(["list", "--query", "nothing"])).stdout.trim()).toBe('No attributes match "nothing".');

    const got = await runJson(["get", "plan"]);
    expect(got).toEqual(await attribute("plan"));
    expect(await runJson(["get", got.id])).toEqual(got);
    const shown = await run(["get", "plan"]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`plan (${got.id})\n`);
    expect(shown.stdout).toContain("  type:        enum (free, pro, enterprise)\n");
    expect(shown.stdout).toContain("  source:      declared (manual)\n");
    expect(shown.stdout).toContain("  required:    yes\n");
    expect(shown.stdout).toContain("  description: Billing plan\n");
    expect(shown.stdout).toContain("  SDK path:    account.plan\n");
    expect(shown.stdout).toContain("  last seen:   never\n");

    const unknown = await run(["get", "nope", "--json"]);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr)).toMatchObject({ code: "NOT_FOUND", status: 404 });
  });

  test("update changes only the flags given; --optional, empty text clears, a non-enum --type drops the values", async () => {
    const updated = await runJson(["update", "plan", "--enum", "free,pro,team", "--optional", "--description", "", "--sdk-path", "user.plan"]);
    expect(updated).toMatchObject({ type: "enum", enumValues: ["free", "pro", "team"], required: 0, description: null, sdkPath: "user.plan" });
    expect(updated).toEqual(await attribute("plan"));

    const human = await run(["update", "plan", "--type", "string", "--required"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("Updated attribute plan:\n  type:        string\n");
    expect(human.stdout).toContain("  required:    yes\n");
    expect(await attribute("plan")).toMatchObject({ type: "string", enumValues: null, required: 1, sdkPath: "user.plan" });

    // An enum without values: the server says what is missing; nothing changes.
    const before = await attribute("country");
    const noValues = await run(["update", "country", "--type", "enum", "--json"]);
    expect(noValues.code).toBe(1);
    expect(JSON.parse(noValues.stderr)).toMatchObject({ code: "VALIDATION", detail: expect.stringContaining("enumValues") });
    expect(await attribute("country")).toEqual(before);
  });

  test("deprecate (and --undo); gate rules naming a deprecated attribute get a warning", async () => {
    const deprecated = await runJson(["deprecate", "country"]);
    expect(deprecated).toMatchObject({ name: "country", deprecated: 1 });
    const table = await run(["list", "--query", "country"]);
    expect(table.stdout).toMatch(/^country\s+string\s+declared\s+\S+ \S+\s+yes$/m);
    expect((await run(["get", "country"])).stdout).toMatch(/^country \(attr_\w+\): deprecated$/m);
    const gate = await ts.api("/api/admin/gates", { body: { name: "de-only", rules: [{ conditions: [{ attr: "country", op: "eq", value: "de" }], passPercentage: 100 }] } });
    expect(gate.status).toBe(201);
    expect(gate.body.warnings).toEqual([expect.stringContaining("country is deprecated")]);

    const human = await run(["deprecate", "country", "--undo"]);
    expect(human.code).toBe(0);
    expect(human.stdout.trim()).toBe("Attribute country is no longer deprecated.");
    expect((await attribute("country")).deprecated).toBe(0);
    expect((await run(["deprecate", "app_version"])).stdout.trim()).toBe("Deprecated attribute app_version: gate rules naming it now come back with a warning.");
  });

  test("usage mistakes exit 2 and send nothing", async () => {
    const before = (await ts.api("/api/admin/attributes")).body;
    const cases: [string[], RegExp][] = [
      [["create", "tier"], /--type is required: one of string, number, boolean, enum, semver, date/],
      [["create", "tier", "--type", "text"], /--type must be one of string, number/],
      [["create"], /expected: svc attributes create <name>/],
      [["create", "tier", "--type", "string", "--colour", "red"], /Unknown option '--colour'/],
      [["update", "plan"], /nothing to change/],
      [["update", "plan", "--required", "--optional"], /--required and --optional cannot both be given/],
      [["update", "plan", "--type", "list"], /--type must be one of/],
      [["get"], /expected: svc attributes get <name>/],
      [["get", "a", "b"], /expected: svc attributes get <name>/],
      [["deprecate"], /expected: svc attributes deprecate <name>/],
      [["list", "extra"], /takes no arguments/],
    ];
    for (const [args, message] of cases) {
      const r = await run([...args, "--json"]);
      expect([args.join(" "), r.code]).toEqual([args.join(" "), 2]);
      const body = JSON.parse(r.stderr);
      expect(body.code).toBe("USAGE");
      expect(body.error).toMatch(message);
    }
    const human = await run(["create", "tier", "--type", "text"]);
    expect(human.code).toBe(2);
    expect(human.stderr).toContain("svc attributes create: --type must be one of");
    expect(human.stderr).toContain("svc help attributes create");
    const noun = await run(["frobnicate"]);
    expect(noun.code).toBe(2);
    expect(noun.stderr).toContain('unknown subcommand "frobnicate" of `svc attributes`');
    expect((await ts.api("/api/admin/attributes")).body).toEqual(before);
  });

  test("help explains every subcommand", async () => {
    const page = await svc(box, ["help", "attributes"], { env });
    expect(page.code).toBe(0);
    for (const sub of ["list", "get <name>", "create <name>", "update <name>", "deprecate <name>"]) expect(page.stdout).toContain(`svc attributes ${sub}`);
    const create = await svc(box, ["attributes", "create", "--help"], { env });
    expect(create.stdout).toMatch(/^\s+--type TYPE\s{2,}string \(text\), number/m);
    expect(create.stdout).toMatch(/^\s+--enum LIST\s{2,}\S/m);
    expect(create.stdout).toMatch(/^\s+--sdk-path PATH\s{2,}\S/m);
  });
});
