import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import { mcpSession, removeSandboxes, sandbox, startClientTestServer, svc, svcJson, type ClientTestServer, type Sandbox } from "./client-helpers";

// The projects module's own surfaces: `svc projects get | update` and the MCP tools get_project / update_project
// (a feature is finished with its CLI noun and tools: settings were reachable over the API and the dashboard only).

// Each test spawns the CLI or the tool server several times.
setDefaultTimeout(120_000);

let ts: ClientTestServer;
let box: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  ts = await startClientTestServer();
  box = sandbox();
  // Settings need the manage permission: the project's admin key.
  env = { SERVICE_CLI_TOKEN: ts.adminKey, SERVICE_URL: ts.url };
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

const run = (args: string[]) => svc(box, ["projects", ...args], { env });
const stored = async () => (await ts.api("/api/admin/projects/current")).body;

describe("svc projects get | update", () => {
  test("get prints the settings; --json is the API's record", async () => {
    const human = await run(["get"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(ts.projectId);
    expect(human.stdout).toMatch(/default env\s+prod/);
    expect(human.stdout).toMatch(/stale after\s+30 days/);
    expect(await svcJson(box, ["projects", "get"], { env })).toEqual(await stored());
  });

  test("update changes exactly the flags given, in one audited write", async () => {
    const before = await stored();
    const out = await svcJson(box, [
      "projects", "update",
      "--allowed-origin", "https://staging.shop.example.com", "--allowed-origin", "http://localhost:5173",
      "--stale-after-days", "45", "--analysis-method", "bayesian", "--significance", "0.1", "--disable", "feedback", "--enable", "public-tickets",
    ], { env });
    const after = await stored();
    expect(out).toEqual(after);
    expect(after).toMatchObject({
      allowedOrigins: ["https://staging.shop.example.com", "http://localhost:5173"],
      staleAfterDays: 45,
      analysis: { ...before.analysis, method: "bayesian", significanceThreshold: 0.1 },
      moduleFeedback: false,
      publicTicketCreation: true,
      name: before.name,
      defaultEnv: before.defaultEnv,
      timezone: before.timezone,
    });
    const audit = (await auditOf(ts.store, ts.projectId, 20)).filter((r) => r.action.startsWith("project."));
    expect(audit.length).toBeGreaterThanOrEqual(1);

    const human = await run(["update", "--clear-allowed-origins", "--default-env", "staging"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("Updated allowedOrigins, defaultEnv");
    expect(await stored()).toMatchObject({ allowedOrigins: [], defaultEnv: "staging", staleAfterDays: 45 });
  });

  test("bad flags are refused before any call, and the server's refusals name the field; nothing changes", async () => {
    const before = await stored();
    for (const [args, words] of [
      [["update"], "nothing to change"],
      [["update", "--stale-after-days", "0"], "--stale-after-days"],
      [["update", "--significance", "1"], "--significance"],
      [["update", "--enable", "gates", "--disable", "gates"], "contradict"],
      [["update", "--enable", "billing"], "--enable"],
      [["update", "--allowed-origin", "https://a.example.com", "--clear-allowed-origins"], "contradict"],
      [["update", "--default-env", "qa"], "--default-env"],
    ] as const) {
      const r = await run([...args]);
      expect([args.join(" "), r.code]).toEqual([args.join(" "), 2]);
      expect(r.stderr).toContain(words);
    }
    // The server's refusal: exit 1 with its code and field.
    const zone = await run(["update", "--timezone", "Mars/Olympus"]);
    expect(zone.code).toBe(1);
    expect(zone.stderr).toContain("VALIDATION");
    expect(zone.stderr).toContain("timezone");
    expect(await stored()).toEqual(before);
  });
});

describe("svc mcp: project tools", () => {
  test("get_project reads the settings; update_project changes only the fields given and refuses a typo", async () => {
    const s = await mcpSession(box, env);
    try {
      const { tools } = await s.client.listTools();
      const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
      expect(byName.get_project!.annotations).toMatchObject({ readOnlyHint: true });
      expect(byName.update_project!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
      expect(byName.create_project!.inputSchema.required).toEqual(["name"]);

      expect(await s.body("get_project", {})).toEqual(await stored());
      const before = await stored();
      const changed = await s.body("update_project", { timezone: "Europe/Berlin", analysis: { minSampleDays: 14 } });
      expect(changed).toEqual(await stored());
      expect(changed).toMatchObject({ timezone: "Europe/Berlin", analysis: { ...before.analysis, minSampleDays: 14 }, staleAfterDays: before.staleAfterDays });

      const typo = await s.call("update_project", { analysis: { significance: 0.2 } });
      expect(typo.isError).toBe(true);
      const refused = await s.call("update_project", { timezone: "Mars/Olympus" });
      expect(refused.isError).toBe(true);
      expect(refused.text).toContain("VALIDATION");
      expect(await stored()).toEqual(changed);

      // An admin key belongs to one project: creating projects is for people.
      const create = await s.call("create_project", { name: "Second shop" });
      expect(create.isError).toBe(true);
      expect(create.text).toContain("FORBIDDEN");
    } finally {
      await s.close();
    }
  });
});
