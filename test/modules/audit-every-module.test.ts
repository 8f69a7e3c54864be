import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Browser, MailCapture, deviceLogin } from "../browser";
import { type TestServer, expectErrorShape, startTestServer } from "../helpers";

/**
 * The audit trail answers for a write of every module (issue 16): one write
 * per module through its real endpoint, then GET /api/admin/audit must show
 * its row with the right action, subject and actor. Also the organisation's
 * own rows (members, sign-ins), the filters, and that a refused write leaves
 * no row.
 */

let ts: TestServer;
const mails = new MailCapture();
/** The admin key's actor email (`admin-key:…@keys.local`). */
let keyActor: string;
/** An owner's device-flow access token: members can only be managed by a signed-in owner. */
let ownerToken: string;

type Expected = { action: string; subjectId?: string; subjectName?: string; actorEmail: string; actorType: string; env?: string; organisation?: boolean };
const expected: Expected[] = [];

type Entry = { seq: number; projectId: string | null; action: string; resource: string; subjectId: string | null; subjectName: string | null; env: string | null; actorEmail: string; actorType: string; detail: any; createdAt: string };
const audit = async (query = "", key?: string): Promise<Entry[]> => {
  const res = await ts.api(`/api/admin/audit?limit=500${query ? `&${query}` : ""}`, { key });
  expect(res.status).toBe(200);
  return res.body.entries;
};

async function ok(path: string, init: Parameters<TestServer["api"]>[1] = {}, status = [200, 201, 204]) {
  const res = await ts.api(path, init);
  if (!status.includes(res.status)) throw new Error(`${init.method ?? (init.body ? "POST" : "GET")} ${path}: ${res.status} ${res.text}`);
  return res.body;
}

beforeAll(async () => {
  // The audit hook's target is on 127.0.0.1 (never called: it hears no events), so private targets are allowed here.
  ts = await startTestServer({ signIn: { mailer: mails }, alertsEveryMs: 0, experimentsEveryMs: 0, connectors: { allowPrivateTargets: true } });
  keyActor = (await ok("/api/admin/me")).user.email;
  ownerToken = await ts.accessTokenFor("owner@example.com");
  const byKey = (e: Omit<Expected, "actorEmail" | "actorType">) => expected.push({ ...e, actorEmail: keyActor, actorType: "key" });

  // Killswitches.
  const ks = await ok("/api/admin/killswitches", { body: { name: "audit-ks" } });
  byKey({ action: "killswitch.create", subjectId: ks.id, subjectName: "audit-ks" });
  await ok("/api/admin/killswitches/audit-ks/toggle", { body: { env: "staging" } });
  byKey({ action: "killswitch.toggle", subjectId: ks.id, subjectName: "audit-ks", env: "staging" });
  // Configs, gates, attributes.
  const config = await ok("/api/admin/configs", { body: { name: "audit-limit", schema: { type: "integer" }, value: 1 } });
  byKey({ action: "config.create", subjectId: config.id, subjectName: "audit-limit" });
  const gate = await ok("/api/admin/gates", { body: { name: "audit-gate" } });
  byKey({ action: "gate.create", subjectId: gate.id, subjectName: "audit-gate" });
  const attribute = await ok("/api/admin/attributes", { body: { name: "tier", type: "string" } });
  byKey({ action: "attribute.create", subjectId: attribute.id, subjectName: "tier" });
  // Universes, the event catalog, metrics, experiments, alert rules.
  const universe = await ok("/api/admin/universes", { body: { name: "audit-web" }, headers: { "x-project-id": ts.projectId } });
  byKey({ action: "universe.create", subjectId: universe.id, subjectName: "audit-web" });
  const event = await ok("/api/admin/events", { body: { name: "audit.purchase", properties: [{ name: "amount", type: "number" }] } });
  byKey({ action: "event.create", subjectId: (event.event ?? event).id, subjectName: "audit.purchase" });
  const metric = await ok("/api/admin/metrics", { body: { name: "audit-purchases", kind: "count", event: "audit.purchase" } });
  byKey({ action: "metric.create", subjectId: metric.id, subjectName: "audit-purchases" });
  const variants = [
    { key: "control", weight: 50, value: "blue" },
    { key: "green", weight: 50, value: "green" },
  ];
  const experiment = await ok("/api/admin/experiments", { body: { name: "audit-exp", universe: "audit-web", variants, allocation: [0, 1000] } });
  byKey({ action: "experiment.create", subjectId: experiment.id, subjectName: "audit-exp" });
  const rule = await ok("/api/admin/alert-rules", { body: { name: "audit-alert", metricId: "audit-purchases", threshold: 5, comparator: "gt" } });
  byKey({ action: "alert_rule.create", subjectId: rule.id, subjectName: "audit-alert" });
  // Tracked errors: one reported by an SDK, then resolved by an admin.
  await ok("/api/sdk/v1/errors", { body: { errors: [{ type: "AuditError", message: "audit trail test" }] }, key: ts.serverKey }, [200, 202]);
  const [tracked] = await ok("/api/admin/errors?q=audit%20trail");
  await ok(`/api/admin/errors/${tracked.id}`, { method: "PATCH", body: { status: "resolved" } });
  byKey({ action: "error.status", subjectId: tracked.id });
  // The ops queue, connectors (no events: nothing is ever delivered), translations.
  const item = await ok("/api/admin/ops", { body: { type: "bug", title: "Audit every write" } });
  byKey({ action: "ops.create", subjectId: item.id });
  const connector = await ok("/api/admin/connectors", { body: { provider: "webhook", name: "audit hook", events: [], config: { url: "http://127.0.0.1:9/audit" } } });
  byKey({ action: "connector.create", subjectId: connector.id, subjectName: "audit hook" });
  const profile = await ok("/api/admin/i18n/profiles", { body: { name: "audit-en", locale: "en" } });
  byKey({ action: "i18n_profile.create", subjectId: profile.id, subjectName: "audit-en" });
  await ok("/api/admin/i18n/keys", { body: { profile_id: "audit-en", keys: [{ key: "audit.title", value: "Audit" }] } });
  byKey({ action: "i18n_key.push" });
  // SDK keys and API tokens, minted and revoked.
  const key = await ok("/api/admin/keys", { body: { type: "server", name: "audit key" } });
  await ok(`/api/admin/keys/${key.id}`, { method: "DELETE" });
  byKey({ action: "key.mint", subjectId: key.id, subjectName: "audit key" });
  byKey({ action: "key.revoke", subjectId: key.id, subjectName: "audit key" });
  const token = await ok("/api/admin/tokens", { body: { name: "audit token", access: "read-only" } });
  await ok(`/api/admin/tokens/${token.id}`, { method: "DELETE" });
  byKey({ action: "token.create", subjectId: token.id, subjectName: "audit token" });
  byKey({ action: "token.revoke", subjectId: token.id, subjectName: "audit token" });
  // Project settings.
  await ok("/api/admin/projects/current", { method: "PATCH", body: { timezone: "Europe/Berlin" } });
  byKey({ action: "project.update", subjectId: ts.projectId });

  // People: an owner (signed in through the device flow) invites, re-roles and removes.
  const owner = { actorEmail: "owner@example.com", actorType: "user", organisation: true };
  expected.push({ action: "device.approve", subjectName: "test", ...owner }, { action: "device.token.mint", subjectName: "test", ...owner });
  await ok("/api/admin/invites", { body: { email: "Invited@Example.com", role: "viewer" }, key: ownerToken });
  expected.push({ action: "member.invite", subjectName: "invited@example.com", ...owner });
  await ok("/api/admin/members/invited@example.com", { method: "PATCH", body: { role: "editor" }, key: ownerToken });
  expected.push({ action: "member.role", subjectName: "invited@example.com", ...owner });
  // The invited person accepts (the invitation's link), signs in a CLI, signs it out, and signs out of the browser.
  const invitee = { actorEmail: "invited@example.com", actorType: "user", subjectName: "invited@example.com", organisation: true };
  const browser = new Browser(ts.url);
  await browser.get("/signin");
  const link = new URL(mails.lastTo("invited@example.com")!.url).searchParams.get("token")!;
  await browser.get(`/auth/magic?token=${link}`);
  expect((await browser.postForm("/auth/magic", { token: link, csrf: browser.csrf })).status).toBe(303);
  expected.push({ action: "session.signin", ...invitee }, { action: "member.join", ...invitee });
  const pair = await deviceLogin(ts, browser);
  expected.push({ action: "device.approve", ...invitee, subjectName: "test" }, { action: "device.token.mint", ...invitee, subjectName: "test" });
  expect((await ts.api("/auth/device/revoke", { key: null, body: { token: pair.access_token } })).body).toEqual({ revoked: true });
  expected.push({ action: "device.token.revoke", ...invitee, subjectName: "test" });
  // A plain sign-out (like a plain sign-in) opens no organisation in particular: the person's own row, in no trail (issue 25).
  expect((await browser.postJson("/auth/logout", { csrf: browser.csrf })).status).toBe(200);
  await ok("/api/admin/members/invited@example.com", { method: "DELETE", key: ownerToken });
  expected.push({ action: "member.remove", subjectName: "invited@example.com", ...owner });
});
afterAll(async () => {
  await ts.stop();
});

describe("a write of every module has its audit row", () => {
  test("each with its action, subject and actor; the organisation's rows have no project", async () => {
    const entries = await audit();
    const missing: string[] = [];
    for (const e of expected) {
      const row = entries.find(
        (r) =>
          r.action === e.action &&
          r.actorEmail === e.actorEmail &&
          (e.subjectId === undefined || r.subjectId === e.subjectId) &&
          (e.subjectName === undefined || r.subjectName === e.subjectName),
      );
      if (!row) {
        missing.push(`${e.action} ${e.subjectName ?? e.subjectId ?? ""} by ${e.actorEmail}`);
        continue;
      }
      expect(row).toMatchObject({ actorType: e.actorType, resource: e.action.split(".")[0]!, projectId: e.organisation ? null : ts.projectId });
      if (e.env) expect(row.env).toBe(e.env);
    }
    expect(missing).toEqual([]);
    // What a sign-in row says, and that no secret is in any row.
    const signIn = entries.find((r) => r.action === "session.signin")!;
    expect(signIn.detail).toEqual({ method: "magic-link" });
    expect(entries.find((r) => r.action === "device.token.revoke")!.detail).toMatchObject({ reason: "sign-out" });
    const text = JSON.stringify(entries);
    expect(text).not.toContain(ownerToken);
    expect(text).not.toContain("svc_at_");
    expect(text).not.toContain("svc_rt_");
  });

  test("the organisation's rows show in each of its projects; another organisation sees none of them", async () => {
    const { projects, keys } = ts.server.ctx.services;
    const sibling = await projects.createProject(ts.organisationId, { name: "Sibling", ownerEmail: "owner@example.com" });
    const siblingKey = (await keys.mint(sibling.id, { type: "admin" })).key;
    const theirs = await audit("", siblingKey);
    expect(theirs.some((r) => r.action === "member.invite" && r.subjectName === "invited@example.com")).toBe(true);
    expect(theirs.some((r) => r.action === "session.signin" && r.actorEmail === "invited@example.com")).toBe(true);
    // …but not the first project's own rows.
    expect(theirs.some((r) => r.action === "killswitch.create")).toBe(false);
    const stranger = await ts.newProject("Stranger");
    const strangers = await audit("", stranger.adminKey);
    expect(strangers.some((r) => r.projectId === null && r.actorEmail !== "system@svc.local")).toBe(false);
    expect(strangers.some((r) => r.action === "killswitch.create" || r.action === "member.invite")).toBe(false);
  });

  test("a refused write leaves no row", async () => {
    const before = await audit();
    for (const [path, init] of [
      ["/api/admin/killswitches", { body: { name: "" } }],
      ["/api/admin/projects/current", { method: "PATCH", body: { timezone: "Mars/Olympus" } }],
      ["/api/admin/configs", { body: { name: "audit-bad", schema: { type: "integer" }, value: "not a number" } }],
      ["/api/admin/keys", { body: { type: "client", scopes: ["admin"] } }],
      ["/api/admin/invites", { body: { email: "not an email" }, key: ownerToken }],
    ] as const) {
      const res = await ts.api(path, init);
      expect(res.status).toBe(400);
      expectErrorShape(res.body);
    }
    expect(await audit()).toEqual(before);
  });
});

describe("filters of GET /api/admin/audit", () => {
  test("actor: the whole email, ignoring case; never a substring", async () => {
    const owner = await audit("actor=OWNER%40Example.com");
    expect(owner.length).toBeGreaterThan(0);
    expect(new Set(owner.map((r) => r.actorEmail))).toEqual(new Set(["owner@example.com"]));
    expect(owner.map((r) => r.action)).toContain("member.invite");
    const byKey = await audit(`actor=${encodeURIComponent(keyActor)}`);
    expect(byKey.every((r) => r.actorEmail === keyActor && r.actorType === "key")).toBe(true);
    expect(byKey.map((r) => r.action)).toContain("killswitch.toggle");
    expect(await audit("actor=owner")).toEqual([]);
  });

  test("resource: a type (the action's first part), or one subject's id", async () => {
    const switches = await audit("resource=killswitch");
    expect(switches.map((r) => r.action).sort()).toEqual(["killswitch.create", "killswitch.toggle"]);
    expect(new Set((await audit("resource=member")).map((r) => r.action))).toEqual(new Set(["member.invite", "member.role", "member.join", "member.remove"]));
    expect((await audit("resource=alert_rule")).map((r) => r.action)).toEqual(["alert_rule.create"]);
    // Types ignore case; the keys the test server made first are there too.
    const keys = await audit("resource=KEY");
    expect(keys[0]!.action).toBe("key.revoke");
    expect(new Set(keys.map((r) => r.resource))).toEqual(new Set(["key"]));
    const id = switches[0]!.subjectId!;
    const one = await audit(`resource=${id}`);
    expect(one.length).toBe(2);
    expect(one.every((r) => r.subjectId === id)).toBe(true);
    expect((await audit(`resource=${ts.projectId}`)).map((r) => r.action)).toContain("project.update");
    expect(await audit("resource=nothing")).toEqual([]);
    for (const bad of ["kill switch", "ksw_", "-x", "a".repeat(41)]) {
      const res = await ts.api(`/api/admin/audit?resource=${encodeURIComponent(bad)}`);
      expect(res.status).toBe(400);
      expect(expectErrorShape(res.body)).toMatchObject({ code: "VALIDATION", detail: expect.stringContaining("resource") });
    }
  });

  test("since (inclusive) and until (exclusive): ISO 8601 with Z, an offset or a date alone", async () => {
    const all = await audit();
    const pivot = all[Math.floor(all.length / 2)]!;
    const since = await audit(`since=${pivot.createdAt}`);
    const until = await audit(`until=${pivot.createdAt}`);
    expect(since.map((r) => r.seq)).toEqual(all.filter((r) => r.createdAt >= pivot.createdAt).map((r) => r.seq));
    expect(until.map((r) => r.seq)).toEqual(all.filter((r) => r.createdAt < pivot.createdAt).map((r) => r.seq));
    expect(since.some((r) => r.seq === pivot.seq)).toBe(true);
    expect(since.length + until.length).toBe(all.length);
    // The same instant two hours east, with its '+' encoded, or unencoded (it arrives as a space).
    const ms = Date.parse(pivot.createdAt) + 2 * 3600_000;
    const east = `${new Date(ms).toISOString().slice(0, 23)}+02:00`;
    expect((await audit(`since=${encodeURIComponent(east)}`)).map((r) => r.seq)).toEqual(since.map((r) => r.seq));
    expect((await audit(`since=${east}`)).map((r) => r.seq)).toEqual(since.map((r) => r.seq));
    expect((await audit("since=2000-01-01")).length).toBe(all.length);
    expect(await audit("until=2000-01-01")).toEqual([]);
    expect(await audit(`since=${pivot.createdAt}&until=${pivot.createdAt}`)).toEqual([]);
    for (const [query, field] of [
      ["since=yesterday", "since"],
      ["since=2026-02-30", "since"],
      ["until=2026-11-23T10:15", "until"],
      ["until=2026-11-23T25:00Z", "until"],
      ["since=2026-11-24&until=2026-11-23", "until"],
    ] as const) {
      const res = await ts.api(`/api/admin/audit?${query}`);
      expect(res.status).toBe(400);
      expect(expectErrorShape(res.body)).toMatchObject({ code: "VALIDATION", detail: expect.stringContaining(field) });
    }
  });

  test("every filter combines with the others and with paging", async () => {
    const all = await audit();
    const pivot = all.find((r) => r.action === "member.role")!;
    const query = `actor=owner%40example.com&resource=member&since=${pivot.createdAt}&q=invited&action=member.`;
    const expectedSeqs = all
      .filter((r) => r.actorEmail === "owner@example.com" && r.resource === "member" && r.createdAt >= pivot.createdAt && r.subjectName?.includes("invited"))
      .map((r) => r.seq);
    expect(expectedSeqs.length).toBeGreaterThanOrEqual(2);
    expect((await audit(query)).map((r) => r.seq)).toEqual(expectedSeqs);
    // One row a page: the pages are the same rows, organisation rows and project rows merged by seq.
    const seen: number[] = [];
    let before: number | null = null;
    do {
      const page: { entries: Entry[]; nextBefore: number | null } = (await ts.api(`/api/admin/audit?limit=1&${query}${before ? `&before=${before}` : ""}`)).body;
      seen.push(...page.entries.map((r) => r.seq));
      before = page.nextBefore;
    } while (before);
    expect(seen).toEqual(expectedSeqs);
    const mixed: number[] = [];
    before = null;
    do {
      const page: { entries: Entry[]; nextBefore: number | null } = (await ts.api(`/api/admin/audit?limit=7${before ? `&before=${before}` : ""}`)).body;
      mixed.push(...page.entries.map((r) => r.seq));
      before = page.nextBefore;
    } while (before);
    expect(mixed).toEqual(all.map((r) => r.seq));
  });
});
