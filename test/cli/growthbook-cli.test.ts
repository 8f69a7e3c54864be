import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mcpSession, removeSandboxes, sandbox, startClientTestServer, svc, svcJson, type ClientTestServer, type Sandbox } from "./client-helpers";

// GrowthBook's finished surfaces (CLI): `svc growthbook status` prints what GrowthBook's SDKs get on an env
// and a table of what does not map, as GET /api/admin/growthbook answers it.

// Each test spawns the CLI several times.
setDefaultTimeout(120_000);

let ts: ClientTestServer;
let box: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  ts = await startClientTestServer();
  // A read-only token: the status is a read.
  const minted = await ts.api("/api/admin/tokens", { body: { name: "growthbook-cli", access: "read-only" } });
  expect(minted.status).toBe(201);
  box = sandbox();
  env = { SERVICE_CLI_TOKEN: minted.body.token, SERVICE_URL: ts.url };
  expect((await ts.api("/api/admin/gates", { body: { name: "new-nav", rules: [{ conditions: [{ attr: "country", op: "in", value: ["DE"] }], passPercentage: 25 }] } })).status).toBe(201);
  expect((await ts.api("/api/admin/killswitches", { body: { name: "checkout", value: true } })).status).toBe(201);
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

const run = (args: string[]) => svc(box, ["growthbook", ...args], { env });
const runJson = (args: string[]) => svcJson(box, ["growthbook", ...args], { env });

describe("svc growthbook status", () => {
  test("everything maps: the counts and 'Everything maps'; --json is the API's answer", async () => {
    const human = await run(["status", "--env", "prod"]);
    expect(human.stderr).toBe("");
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^GrowthBook SDKs on prod \(revision \d+\): 2 features, 0 saved groups, [\d,]+ bytes$/m);
    expect(human.stdout).toContain("/api/features/{key}");
    expect(human.stdout).toContain("Everything maps");
    const json = await runJson(["status", "--env", "prod"]);
    expect(json).toEqual((await ts.api("/api/admin/growthbook?env=prod")).body);
    expect(json).toMatchObject({ env: "prod", features: 2, savedGroups: 0, unmapped: [] });
  });

  test("what does not map is a table of feature, construct and what is served instead; a bad --env is a usage error", async () => {
    expect((await ts.api("/api/admin/gates", { body: { name: "letters", rules: [{ conditions: [{ attr: "name", op: "regex", value: "^\\pL+$" }], passPercentage: 100 }] } })).status).toBe(201);
    const human = await run(["status"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^GrowthBook SDKs on prod \(revision \d+\): 3 features, 0 saved groups/m);
    expect(human.stdout).toMatch(/^FEATURE\s+CONSTRUCT\s+SERVED INSTEAD$/m);
    expect(human.stdout).toMatch(/^letters\s+regex \/\^\\pL\+\$\/ uses RE2-only syntax\s+false to every unit \(the gate is off\)$/m);
    expect(human.stdout).not.toContain("Everything maps");
    const json = await runJson(["status", "--env", "dev"]);
    expect(json.unmapped).toEqual([{ feature: "letters", construct: "regex /^\\pL+$/ uses RE2-only syntax", served: "false to every unit (the gate is off)" }]);

    const bad = await run(["status", "--env", "qa"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--env must be one of dev, staging, prod");
  });
});

describe("growthbook_status (svc mcp)", () => {
  test("a read-only tool answering what the route answers, for a read-only token", async () => {
    const s = await mcpSession(box, env);
    try {
      const { tools } = await s.client.listTools();
      expect(tools.find((t) => t.name === "growthbook_status")?.annotations).toMatchObject({ readOnlyHint: true });
      const status = await s.body("growthbook_status", { env: "prod" });
      expect(status).toEqual((await ts.api("/api/admin/growthbook?env=prod")).body);
      expect(status.paths).toEqual({ features: "/api/features/{key}", stream: "/sub/{key}" });
    } finally {
      await s.close();
    }
  });
});
