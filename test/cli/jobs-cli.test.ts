import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { mcpSession, removeSandboxes, sandbox, startClientTestServer, svc, svcJson, type ClientTestServer, type Sandbox } from "./client-helpers";

// Jobs that needed the API (issue 27, item 11), from the CLI and MCP: a config's schema and rollback, and what
// events arrived.
setDefaultTimeout(60_000);

let ts: ClientTestServer;
let box: Sandbox;
let env: Record<string, string>;
const now = Date.now();

beforeAll(async () => {
  ts = await startClientTestServer();
  const minted = await ts.api("/api/admin/tokens", { body: { name: "jobs-cli", access: "read-write" } });
  expect(minted.status).toBe(201);
  box = sandbox();
  env = { SERVICE_CLI_TOKEN: minted.body.token, SERVICE_URL: ts.url };
  expect((await ts.api("/api/admin/configs", { body: { name: "limits", schema: { type: "object" }, value: { max: 1 } } })).status).toBe(201);
  expect((await ts.api("/api/admin/configs/limits", { method: "PATCH", body: { prod: { max: 2 } } })).status).toBe(200);
  const events = [
    { name: "checkout.done", ts: now - 60_000, unitId: "user-1", value: 12.5, properties: { plan: "pro" } },
    { name: "checkout.done", ts: now - 120_000, unitId: "user-\u001b[31mred", properties: { note: "\u001b]0;title\u0007" } },
    { name: "checkout.done", ts: now - 3 * 86_400_000, unitId: "user-3" },
  ];
  expect((await ts.api("/api/sdk/v1/events", { key: ts.serverKey, body: { events } })).status).toBe(202);
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

describe("svc configs schema and rollback", () => {
  test("schema get prints the schema; schema set --file replaces it; a schema a value breaks is refused and changes nothing", async () => {
    const got = await svc(box, ["configs", "schema", "get", "limits"], { env });
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout)).toEqual({ type: "object" });
    const file = join(box.root, "limits.schema.json");
    const schema = { type: "object", properties: { max: { type: "integer", minimum: 1 } }, required: ["max"] };
    writeFileSync(file, JSON.stringify(schema));
    const set = await svcJson(box, ["configs", "schema", "set", "limits", "--file", file], { env });
    expect(set).toMatchObject({ name: "limits", schema });
    expect((await ts.api("/api/admin/configs/limits")).body.schema).toEqual(schema);
    const human = await svc(box, ["configs", "schema", "set", "limits", "--schema", JSON.stringify(schema)], { env });
    expect(human.stdout).toContain("Replaced the JSON Schema of limits");

    writeFileSync(file, JSON.stringify({ type: "object", properties: { max: { type: "integer", minimum: 5 } } }));
    const refused = await svc(box, ["configs", "schema", "set", "limits", "--file", file], { env });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("must be >= 5");
    expect((await ts.api("/api/admin/configs/limits")).body.schema).toEqual(schema);
    const usage = await svc(box, ["configs", "schema", "set", "limits"], { env });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--file");
  });

  test("history lists versions; rollback publishes an earlier value as a new version; MCP does both jobs", async () => {
    const history = await svcJson(box, ["configs", "history", "limits", "--env", "prod"], { env });
    expect(history.map((h: any) => [h.version, h.value])).toEqual([
      [2, { max: 2 }],
      [1, { max: 1 }],
    ]);
    const rolled = await svcJson(box, ["configs", "rollback", "limits", "--env", "prod", "--version", "1", "--yes"], { env });
    expect(rolled).toMatchObject({ env: "prod", version: 3, value: { max: 1 } });
    expect((await ts.api("/api/admin/configs/limits")).body.envs.prod).toMatchObject({ version: 3, value: { max: 1 } });
    const human = await svc(box, ["configs", "rollback", "limits", "--env", "staging", "--version", "1"], { env });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain("staging: limits version 2 (the value of version 1)");
    const missing = await svc(box, ["configs", "rollback", "limits", "--env", "prod"], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--version N is required");

    const mcp = await mcpSession(box, env);
    try {
      expect(await mcp.body("rollback_config", { name: "limits", env: "prod", version: 2 })).toMatchObject({ env: "prod", version: 4, value: { max: 2 } });
      const unknown = await mcp.call("rollback_config", { name: "limits", env: "prod", version: 99 });
      expect(unknown.isError).toBe(true);
      expect(unknown.text).toContain("no version 99");
      const schema = { type: "object", properties: { max: { type: "integer" } } };
      expect(await mcp.body("set_config_schema", { name: "limits", schema })).toMatchObject({ name: "limits", schema });
      const refused = await mcp.call("set_config_schema", { name: "limits", schema: { type: "string" } });
      expect(refused.isError).toBe(true);
      expect((await ts.api("/api/admin/configs/limits")).body.schema).toEqual(schema);
    } finally {
      await mcp.close();
    }
  });
});

describe("svc events counts and recent", () => {
  test("counts per name; recent shows units and properties with control characters escaped, pages with --before", async () => {
    const counts = await svcJson(box, ["events", "counts"], { env });
    expect(counts.counts).toEqual([{ name: "checkout.done", last24h: 2, last7d: 3 }]);
    const table = await svc(box, ["events", "counts"], { env });
    expect(table.stdout).toMatch(/checkout\.done\s+2\s+3/);

    const page = await svcJson(box, ["events", "recent", "checkout.done", "--limit", "2"], { env });
    expect(page.events.map((e: any) => e.unitId)).toEqual(["user-1", "user-\u001b[31mred"]);
    expect(page.events[0]).toMatchObject({ value: 12.5, properties: { plan: "pro" } });
    expect(page.next).toEqual(expect.any(String));
    const older = await svcJson(box, ["events", "recent", "checkout.done", "--limit", "2", "--before", page.next], { env });
    expect(older).toMatchObject({ events: [{ unitId: "user-3" }], next: null });

    const human = await svc(box, ["events", "recent", "checkout.done", "--limit", "2"], { env });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).not.toContain("\u001b");
    expect(human.stdout).not.toContain("\u0007");
    expect(human.stdout).toContain("user-\\u001b[31mred");
    expect(human.stdout).toContain(`--before ${page.next}`);
    expect((await svc(box, ["events", "recent", "checkout.done", "--limit", "0"], { env })).code).toBe(2);
  });

  test("MCP event_counts and recent_events answer as untrusted data", async () => {
    const mcp = await mcpSession(box, env);
    try {
      const counts = await mcp.body("event_counts", {});
      expect(counts.untrusted).toBe(true);
      expect(counts.untrustedData.counts).toEqual([{ name: "checkout.done", last24h: 2, last7d: 3 }]);
      const recent = await mcp.body("recent_events", { name: "checkout.done", limit: 1 });
      expect(recent.untrusted).toBe(true);
      expect(recent.untrustedData.events[0]).toMatchObject({ unitId: "user-1", properties: { plan: "pro" } });
      const next = await mcp.body("recent_events", { name: "checkout.done", limit: 5, before: recent.untrustedData.next });
      expect(next.untrustedData.events.map((e: any) => e.unitId)).toEqual(["user-\u001b[31mred", "user-3"]);
    } finally {
      await mcp.close();
    }
  });
});
