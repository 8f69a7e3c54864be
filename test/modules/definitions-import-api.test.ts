import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { auditOf } from "../../src/lib/audit";
import { IMPORTERS, type Tool } from "../../src/modules/definitions/importers";
import { type TestServer, startTestServer } from "../helpers";

// `POST /api/admin/import/{tool}` (issue 31): another tool's export converted on the server by the same
// importers `svc import` runs locally; conversion only, so nothing is stored and no audit row is written.

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.stop();
});

const dir = join(import.meta.dir, "..", "fixtures", "imports");
const fixture = (name: string) => JSON.parse(readFileSync(join(dir, `${name}.json`), "utf8"));
const expected = (name: string) => JSON.parse(readFileSync(join(dir, "expected", `${name}.json`), "utf8"));

/** What the project holds: its whole export and its audit trail. */
const state = async () => ({ exported: (await ts.api("/api/admin/export")).body, audit: (await auditOf(ts.store, ts.projectId, 1000)).length });

describe("POST /api/admin/import/{tool}", () => {
  const cases: [Tool, string][] = [
    ["unleash", "unleash"],
    ["growthbook", "growthbook-payload"],
    ["growthbook", "growthbook-api"],
    ["launchdarkly", "launchdarkly"],
    ["flagsmith", "flagsmith"],
  ];
  for (const [tool, name] of cases) {
    test(`${name}: the same document, unmapped parts and re-bucketed rollouts as svc import's conversion, nothing stored`, async () => {
      const before = await state();
      const res = await ts.api(`/api/admin/import/${tool}`, { body: fixture(name) });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(IMPORTERS[tool](fixture(name)));
      expect(res.body).toEqual(expected(name));
      expect(await state()).toEqual(before);
    });
  }

  test("the options svc import takes: env, envMap and keepExact", async () => {
    const mapped = await ts.api("/api/admin/import/unleash?envMap=qa%3Dstaging&keepExact=true", { body: fixture("unleash") });
    expect(mapped.status).toBe(200);
    expect(mapped.body).toEqual(IMPORTERS.unleash(fixture("unleash"), { envMap: { qa: "staging" }, keepExact: true }));
    const staged = await ts.api("/api/admin/import/growthbook?env=staging", { body: fixture("growthbook-payload") });
    expect(staged.body).toEqual(IMPORTERS.growthbook(fixture("growthbook-payload"), { env: "staging" }));
    expect(Object.keys(staged.body.document.gates[0].envs)).toEqual(["staging"]);
  });

  test("a bad body, an unknown tool or bad options get VALIDATION naming the field, and change nothing", async () => {
    const before = await state();
    const refused = async (path: string, body: unknown, detail: RegExp) => {
      const res = await ts.api(path, { body });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: "VALIDATION" });
      expect(res.body.detail).toMatch(detail);
    };
    await refused("/api/admin/import/unleash", [1, 2], /body/);
    await refused("/api/admin/import/unleash", "features", /body/);
    // Nothing of it maps: the importer's reason is the detail, as `svc import` says it.
    await refused("/api/admin/import/unleash", { hello: "world" }, /Unleash/);
    await refused("/api/admin/import/flagsmith", fixture("unleash"), /Flagsmith environment document/);
    await refused("/api/admin/import/statsig", fixture("unleash"), /tool/);
    await refused("/api/admin/import/unleash?env=live", fixture("unleash"), /env/);
    await refused("/api/admin/import/unleash?envMap=qa", fixture("unleash"), /envMap/);
    await refused("/api/admin/import/unleash?keepExact=yes", fixture("unleash"), /keepExact/);
    expect(await state()).toEqual(before);
  });

  test("the converted document plans and applies as it is (the client's next steps)", async () => {
    const { document } = (await ts.api("/api/admin/import/growthbook", { body: fixture("growthbook-payload") })).body;
    const plan = await ts.api("/api/admin/apply?dryRun=true", { body: document });
    expect(plan.status).toBe(200);
    expect(plan.body.summary.create).toBeGreaterThan(0);
    expect(plan.body.applied).toBe(false);
  });
});

// The dashboard shows and takes the YAML `svc export` writes: the server writes and reads it (no YAML library in the browser).
describe("YAML over the API", () => {
  test("export?format=yaml is svc export's text; apply reads it back as application/yaml", async () => {
    expect((await ts.api("/api/admin/killswitches", { body: { name: "yaml-switch", description: "Read from YAML" } })).status).toBe(201);
    const yaml = await ts.api("/api/admin/export?format=yaml&only=killswitches");
    expect(yaml.status).toBe(200);
    expect(yaml.headers.get("content-type")).toContain("application/yaml");
    expect(yaml.text.startsWith("# svc definitions: svc plan FILE")).toBe(true);
    expect(Bun.YAML.parse(yaml.text)).toEqual((await ts.api("/api/admin/export?only=killswitches")).body);
    const edited = yaml.text.replace("Read from YAML", "Edited in YAML");
    const plan = await ts.api("/api/admin/apply?dryRun=true", { rawBody: edited, headers: { "content-type": "application/yaml" } });
    expect(plan.status).toBe(200);
    expect(plan.body.changes).toEqual([{ section: "killswitches", name: "yaml-switch", action: "update", changes: [{ field: "description", before: "Read from YAML", after: "Edited in YAML" }] }]);
    // text/plain (what a browser's typed client sends a string as) reads as YAML too, unless it opens as JSON does.
    expect((await ts.api("/api/admin/apply?dryRun=true", { rawBody: edited, headers: { "content-type": "text/plain" } })).body.changes).toEqual(plan.body.changes);
    expect(await ts.api("/api/admin/apply?dryRun=true", { rawBody: "{version: 1", headers: { "content-type": "text/plain" } })).toMatchObject({ status: 400, body: { code: "BAD_REQUEST", detail: "body: expected valid JSON" } });
    const applied = await ts.api("/api/admin/apply", { rawBody: edited, headers: { "content-type": "application/yaml" } });
    expect(applied.body).toMatchObject({ applied: true, summary: { create: 0, update: 1, delete: 0 } });
    expect((await ts.api("/api/admin/killswitches/yaml-switch")).body.description).toBe("Edited in YAML");
  });

  test("YAML that is not a document, or nests deeper than a JSON body may, is refused and changes nothing", async () => {
    const before = await state();
    const send = (rawBody: string) => ts.api("/api/admin/apply", { rawBody, headers: { "content-type": "application/yaml" } });
    expect(await send("version: [1")).toMatchObject({ status: 400, body: { code: "BAD_REQUEST", error: "Malformed request body" } });
    expect(await send("- version: 1")).toMatchObject({ status: 400, body: { code: "VALIDATION", detail: "(body): expected an object, got an array" } });
    const deep = `version: 1\nsegments:\n${Array.from({ length: 80 }, (_, i) => `${" ".repeat(2 * i + 2)}a${i}:`).join("\n")} 1\n`;
    expect(await send(deep)).toMatchObject({ status: 400, body: { code: "BAD_REQUEST", detail: expect.stringContaining("levels") } });
    expect(await send("version: 1\nkillswitches: [{name: 'x', description: 3}]")).toMatchObject({ status: 400, body: { code: "VALIDATION" } });
    expect(await state()).toEqual(before);
  });
});
