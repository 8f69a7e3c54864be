import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import { type TestServer, expectErrorShape, startTestServer } from "../helpers";

// Config rules naming a gate (passes_gate / fails_gate) cost what that gate costs (DECISIONS "Limits that keep one
// request from stalling the server"): priced when the config's rules are published, and again when the gate's rules
// grow or the gate goes, so no later publish of the gate can take a config's evaluation over the bound or leave its
// rules naming a gate that is gone.

let ts: TestServer;

beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.stop();
});

// An RE2 program of 113 instructions: 1 + 113 × 64 = 7,233 units a condition (bound: 20,000 an evaluation).
const COSTLY = { attr: "code", op: "regex", value: "(ab|cd|ef|gh){1,8}" };
const setRules = (name: string, rules: unknown[], env = "prod") => ts.api(`/api/admin/gates/${name}/rules`, { method: "PUT", body: { env, rules } });
// A draft is saved for one project, named by the header (as the dashboard sends it).
const saveDraft = (name: string, body: unknown) => ts.api(`/api/admin/configs/${name}/drafts`, { method: "PUT", body, headers: { "X-Project-Id": ts.projectId } });
const prodRules = async (name: string) => (await ts.api(`/api/admin/gates/${name}`)).body.envs.prod.rules;

describe("a gate that config rules name", () => {
  test("growing its rules is refused when a config naming it would go over the bound; the config is named, nothing changes", async () => {
    expect((await ts.api("/api/admin/gates", { body: { name: "costly-base" } })).status).toBe(201);
    expect((await setRules("costly-base", [{ conditions: [COSTLY], passPercentage: 100 }])).status).toBe(200);
    expect((await ts.api("/api/admin/configs", { body: { name: "costly-banner", schema: { type: "string" }, value: "plain" } })).status).toBe(201);
    // 1 + 7,233 (the gate) + 7,233 = 14,467: within the bound.
    const rules = [{ conditions: [{ attr: "user_id", op: "passes_gate", value: "costly-base" }, COSTLY], value: "fancy" }];
    expect((await saveDraft("costly-banner", { env: "prod", value: "plain", rules })).status).toBe(200);
    expect((await ts.api("/api/admin/configs/costly-banner/publish", { body: { env: "prod" } })).status).toBe(200);

    // The gate alone stays within the bound (14,466), but the config would cost 21,700.
    const before = await prodRules("costly-base");
    const auditsBefore = (await auditOf(ts.store, ts.projectId, 1000)).length;
    const grown = await setRules("costly-base", [{ conditions: [COSTLY, { ...COSTLY, attr: "promo" }], passPercentage: 100 }]);
    expect(grown.status).toBe(400);
    expectErrorShape(grown.body);
    expect(grown.body.code).toBe("VALIDATION");
    expect(grown.body.error).toContain("costly-banner");
    expect(grown.body.detail).toContain("20000");
    expect(await prodRules("costly-base")).toEqual(before);
    expect((await auditOf(ts.store, ts.projectId, 1000)).length).toBe(auditsBefore);

    // On another env no config names it: the same rules publish.
    expect((await setRules("costly-base", [{ conditions: [COSTLY, { ...COSTLY, attr: "promo" }], passPercentage: 100 }], "staging")).status).toBe(200);
  });

  test("deleting it is refused while a config's published rules name it, naming the config and env", async () => {
    const removed = await ts.api("/api/admin/gates/costly-base", { method: "DELETE" });
    expect(removed.status).toBe(400);
    expectErrorShape(removed.body);
    expect(removed.body.code).toBe("VALIDATION");
    expect(removed.body.error).toContain("config costly-banner (prod)");
    expect((await ts.api("/api/admin/gates/costly-base")).status).toBe(200);

    // Once the config's rules no longer name it, it goes.
    expect((await saveDraft("costly-banner", { env: "prod", value: "plain", rules: [] })).status).toBe(200);
    expect((await ts.api("/api/admin/configs/costly-banner/publish", { body: { env: "prod" } })).status).toBe(200);
    expect((await ts.api("/api/admin/gates/costly-base", { method: "DELETE" })).status).toBe(204);
  });
});
