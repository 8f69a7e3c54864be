import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import { mcpSession, removeSandboxes, sandbox, startClientTestServer, type ClientTestServer, type Sandbox } from "./client-helpers";

// Issue 29 (segments UI, item 3): the segment tools of `svc mcp`, through the MCP SDK's own client against the real server.

setDefaultTimeout(60_000);

let ts: ClientTestServer;
let box: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  ts = await startClientTestServer();
  const minted = await ts.api("/api/admin/tokens", { body: { name: "segments-mcp", access: "read-write" } });
  expect(minted.status).toBe(201);
  box = sandbox();
  env = { SERVICE_CLI_TOKEN: minted.body.token, SERVICE_URL: ts.url };
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

const stored = async (name: string) => (await ts.api(`/api/admin/segments/${encodeURIComponent(name)}`)).body;

describe("svc mcp: segment tools", () => {
  test("list, get (first 100 ids and the count), create, update with addIds / removeIds, delete: on the real server", async () => {
    const s = await mcpSession(box, env);
    try {
      const { tools } = await s.client.listTools();
      const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
      for (const name of ["list_segments", "get_segment"]) expect(byName[name]!.annotations).toMatchObject({ readOnlyHint: true });
      expect(byName.create_segment!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
      expect(byName.update_segment!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
      expect(byName.delete_segment!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
      expect(byName.create_segment!.inputSchema.required).toEqual(["name"]);

      const ids = Array.from({ length: 250 }, (_, i) => `u-${i}`);
      const created = await s.body("create_segment", { name: "beta-testers", description: "Beta programme", ids });
      expect(created).toEqual({ id: expect.stringMatching(/^seg_/), name: "beta-testers" });
      expect((await stored("beta-testers")).idCount).toBe(250);
      await s.body("create_segment", { name: "acme-staff", conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }] });

      const listed = await s.body("list_segments", { q: "PROGRAMME" });
      expect(listed).toEqual([expect.objectContaining({ name: "beta-testers", idCount: 250 })]);
      expect(listed[0].ids).toBeUndefined();
      expect((await s.body("list_segments", {})).map((x: any) => x.name)).toEqual(["acme-staff", "beta-testers"]);

      const got = await s.body("get_segment", { name: "beta-testers" });
      expect(got).toMatchObject({ id: created.id, name: "beta-testers", idCount: 250, idsTruncated: true, attribute: "user_id" });
      expect(got.ids).toEqual(ids.slice(0, 100));
      expect((await s.body("get_segment", { name: "acme-staff" })).idsTruncated).toBe(false);

      const changed = await s.body("update_segment", { name: "beta-testers", removeIds: ["u-0", "u-1"], addIds: ["new-1"], description: "Beta, wave 2" });
      expect(changed).toMatchObject({ idCount: 249, description: "Beta, wave 2", idsTruncated: true });
      expect(changed.ids).toHaveLength(100);
      expect(changed.ids[0]).toBe("u-2");
      const after = await stored("beta-testers");
      expect(after.ids.at(-1)).toBe("new-1");
      expect(after.ids).not.toContain("u-0");
      const audit = (await auditOf(ts.store, ts.projectId, 100)).find((r) => r.action === "segment.update");
      expect(audit!.detail).toMatchObject({ fields: ["description", "ids"], ids: { before: 250, after: 249 } });

      // Refused by the server (naming the field) or by the tool's schema; nothing changes.
      const both = await s.call("update_segment", { name: "beta-testers", ids: ["a"], addIds: ["b"] });
      expect(both.isError).toBe(true);
      expect(both.text).toContain("VALIDATION");
      expect(both.text).toContain("addIds");
      const typo = await s.call("create_segment", { name: "x", conditions: [{ attr: "a", op: "equals", value: 1 }] });
      expect(typo.isError).toBe(true);
      expect(typo.text).toContain("op");
      expect((await s.call("get_segment", { name: "nope" })).text).toContain("NOT_FOUND");
      expect(await stored("beta-testers")).toEqual(after);

      // Used by a gate: delete is refused, naming it; then allowed.
      expect((await ts.api("/api/admin/gates", { body: { name: "beta-gate", rules: [{ conditions: [{ attr: "user_id", op: "in_segment", value: "beta-testers" }], passPercentage: 100 }] } })).status).toBe(201);
      const used = await s.call("delete_segment", { name: "beta-testers" });
      expect(used.isError).toBe(true);
      expect(used.text).toContain("beta-gate");
      expect((await ts.api("/api/admin/gates/beta-gate", { method: "DELETE" })).status).toBe(204);
      expect(await s.body("delete_segment", { name: "beta-testers" })).toEqual({ name: "beta-testers", deleted: true });
      expect((await ts.api("/api/admin/segments/beta-testers")).status).toBe(404);
    } finally {
      await s.close();
    }
  });
});
