import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, startTestServer } from "../helpers";

// Issue 27, item 15: a key or token that acted is shown by its name, not `admin-key:key_…@keys.local`.
let ts: TestServer;
let named: { id: string; key: string };

beforeAll(async () => {
  ts = await startTestServer();
  const minted = await ts.api("/api/admin/keys", { body: { type: "admin", name: "deploy-bot" } });
  expect(minted.status).toBe(201);
  named = { id: minted.body.id, key: minted.body.key };
  expect((await ts.api("/api/admin/configs", { body: { name: "limits", schema: { type: "integer" }, value: 1 } })).status).toBe(201);
  expect((await ts.api("/api/admin/configs/limits", { method: "PATCH", key: named.key, body: { dev: 2 } })).status).toBe(200);
  const token = await ts.api("/api/admin/tokens", { body: { name: "CI pipeline", access: "read-write" } });
  expect(token.status).toBe(201);
  expect((await ts.api("/api/admin/killswitches", { key: token.body.token, body: { name: "checkout" } })).status).toBe(201);
});
afterAll(async () => {
  await ts.stop();
});

describe("the actor's name of a key or token", () => {
  test("audit entries carry actorName: the key's or token's name (a person has none); the raw actor stays", async () => {
    const res = await ts.api("/api/admin/audit");
    expect(res.status).toBe(200);
    const byAction = (action: string) => res.body.entries.find((e: any) => e.action === action);
    expect(byAction("config.update")).toMatchObject({ actorEmail: `admin-key:${named.id}@keys.local`, actorName: "deploy-bot", actorType: "key" });
    expect(byAction("killswitch.create")).toMatchObject({ actorEmail: expect.stringMatching(/^api-token:tok_\w+@tokens\.local$/), actorName: "CI pipeline", actorType: "token" });
    // A key minted without a name is called after its type.
    expect(byAction("config.create")).toMatchObject({ actorEmail: expect.stringContaining("admin-key:"), actorName: "admin key" });
  });

  test("a revoked key keeps its name in the trail", async () => {
    expect((await ts.api(`/api/admin/keys/${named.id}`, { method: "DELETE" })).status).toBe(204);
    const entries = (await ts.api("/api/admin/audit?action=config.update")).body.entries;
    expect(entries.map((e: any) => e.actorName)).toEqual(["deploy-bot"]);
  });

  test("config activity carries actorName too", async () => {
    const res = await ts.api("/api/admin/configs/limits/activity", { headers: { "x-project-id": ts.projectId } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.map((a: any) => [a.action, a.actorName])).toEqual([
      ["config.update", "deploy-bot"],
      ["config.create", "admin key"],
    ]);
  });
});
