import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { removeSandboxes, sandbox, svc, svcJson } from "../cli/client-helpers";
import { type TestServer, expectErrorShape, startTestServer } from "../helpers";

let ts: TestServer;

beforeAll(async () => {
  ts = await startTestServer();
  expect((await ts.api("/api/admin/killswitches", { body: { name: "checkout" } })).status).toBe(201);
  for (const env of ["prod", "staging", "prod"]) expect((await ts.api("/api/admin/killswitches/checkout/toggle", { body: { env } })).status).toBe(200);
  expect((await ts.api("/api/admin/configs", { body: { name: "limits_100%", schema: { type: "integer" }, value: 1 } })).status).toBe(201);
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

describe("GET /api/admin/audit", () => {
  test("every write has its row, newest first, with who, what, subject and env", async () => {
    const res = await ts.api("/api/admin/audit");
    expect(res.status).toBe(200);
    const actions = res.body.entries.map((e: any) => e.action);
    expect(actions.slice(0, 5)).toEqual(["config.create", "killswitch.toggle", "killswitch.toggle", "killswitch.toggle", "killswitch.create"]);
    const toggle = res.body.entries[1];
    expect(toggle).toMatchObject({ subjectName: "checkout", env: "prod", actorType: "key", actorEmail: expect.stringContaining("admin-key:") });
    const seqs = res.body.entries.map((e: any) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a: number, b: number) => b - a));
    expect(res.body.nextBefore).toBeNull();
  });

  test("filters: one action, an action prefix, a name or email substring (wildcards are plain text)", async () => {
    const exact = (await ts.api("/api/admin/audit?action=killswitch.toggle")).body.entries;
    expect(exact.length).toBe(3);
    const prefix = (await ts.api("/api/admin/audit?action=killswitch.")).body.entries;
    expect(prefix.map((e: any) => e.action).sort()).toEqual(["killswitch.create", "killswitch.toggle", "killswitch.toggle", "killswitch.toggle"]);
    expect((await ts.api("/api/admin/audit?action=killswitch")).body.entries).toEqual([]);
    expect((await ts.api("/api/admin/audit?q=LIMITS_100%25")).body.entries.map((e: any) => e.subjectName)).toEqual(["limits_100%"]);
    // '%' and '_' match themselves, not anything.
    expect((await ts.api("/api/admin/audit?q=_100%25")).body.entries.map((e: any) => e.subjectName)).toEqual(["limits_100%"]);
    expect((await ts.api("/api/admin/audit?q=c_eckout")).body.entries).toEqual([]);
  });

  test("pages with before/nextBefore cover every row once", async () => {
    const all = (await ts.api("/api/admin/audit?limit=500")).body.entries.map((e: any) => e.seq);
    const seen: number[] = [];
    let before: number | null | undefined;
    do {
      const page = (await ts.api(`/api/admin/audit?limit=2${before ? `&before=${before}` : ""}`)).body;
      expect(page.entries.length).toBeLessThanOrEqual(2);
      seen.push(...page.entries.map((e: any) => e.seq));
      before = page.nextBefore;
    } while (before);
    expect(seen).toEqual(all);
  });

  test("bad limit or before: VALIDATION naming it; another project's rows are never shown", async () => {
    for (const [query, field] of [["limit=0", "limit"], ["limit=501", "limit"], ["limit=abc", "limit"], ["before=-1", "before"], ["before=x", "before"]] as const) {
      const res = await ts.api(`/api/admin/audit?${query}`);
      expect(res.status).toBe(400);
      expect(expectErrorShape(res.body).detail).toContain(field);
    }
    const other = await ts.newProject("Other");
    expect((await ts.api("/api/admin/killswitches", { body: { name: "theirs" }, key: other.adminKey })).status).toBe(201);
    const ours = (await ts.api("/api/admin/audit?limit=500")).body.entries;
    expect(ours.some((e: any) => e.subjectName === "theirs")).toBe(false);
    const theirs = (await ts.api("/api/admin/audit", { key: other.adminKey })).body.entries;
    expect(theirs[0]).toMatchObject({ action: "killswitch.create", subjectName: "theirs" });
    expect(theirs.some((e: any) => e.subjectName === "checkout")).toBe(false);
  });

  test("a read-only API token reads it; svc audit list prints it, and --json is the API's page", async () => {
    const minted = await ts.api("/api/admin/tokens", { body: { name: "auditor", access: "read-only" } });
    expect(minted.status).toBe(201);
    const box = sandbox();
    const env = { SERVICE_CLI_TOKEN: minted.body.token, SERVICE_URL: ts.url };
    const page = await svcJson(box, ["audit", "list", "--action", "killswitch.toggle", "--limit", "2"], { env });
    expect(page.entries.map((e: any) => e.action)).toEqual(["killswitch.toggle", "killswitch.toggle"]);
    expect(page.nextBefore).toBe(page.entries[1].seq);
    const human = await svc(box, ["audit", "list", "--action", "killswitch.toggle", "--limit", "2"], { env });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("checkout");
    expect(human.stdout).toContain(`svc audit list --before ${page.nextBefore}`);
    const bad = await svc(box, ["audit", "list", "--limit", "0"], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--limit");
  });
});
