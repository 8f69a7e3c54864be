import { treaty } from "@elysiajs/eden";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import type { AlertTransition } from "../../src/modules/alerts/service";
import { meets, windowAt } from "../../src/modules/alerts/evaluator";
import { Browser, MailCapture, signInWithMagicLink } from "../browser";
import { type TestServer, startTestServer } from "../helpers";

let ts: TestServer;
const mails = new MailCapture();
let owner: Browser;
/** Transitions delivered (the notifier connectors will plug into), in order. */
const delivered: AlertTransition[] = [];
/** Log lines the server wrote, by message. */
const logged: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];

/** Four hours ago, on a whole minute (epoch seconds): every event and evaluation time below is relative to it, all in the past. */
const B = Math.floor(Date.now() / 60_000) * 60 - 4 * 3600;
const ms = (seconds: number) => (B + seconds) * 1000;

const ingest = (name: string, seconds: number[], extra: Record<string, unknown> = {}) =>
  ts.api("/api/sdk/v1/events", { body: { events: seconds.map((s, i) => ({ name, unitId: `u${i}`, ts: ms(s), ...extra })) }, key: ts.serverKey });
const createRule = (body: unknown) => ts.api("/api/admin/alert-rules", { body });
const patchRule = (ref: string, body: unknown, key?: string | null) => ts.api(`/api/admin/alert-rules/${encodeURIComponent(ref)}`, { method: "PATCH", body, key });
const rule = async (ref: string) => (await ts.api(`/api/admin/alert-rules/${encodeURIComponent(ref)}`)).body;
const auditRows = async (action: string, subjectName?: string) =>
  (await auditOf(ts.store, ts.projectId, 1000)).filter((r) => r.action === action && (subjectName === undefined || r.subjectName === subjectName));

/** What the dashboard's own page script sends: the session cookie, Origin and the CSRF header. */
async function dashboardFetch(path: string, method: string) {
  const headers: Record<string, string> = {
    cookie: [...owner.cookies].map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("; "),
    "x-project-id": ts.projectId,
    origin: ts.url,
    "x-csrf-token": owner.csrf,
  };
  const res = await fetch(ts.url + path, { method, headers });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

beforeAll(async () => {
  // No timer: these tests evaluate at times they choose (`evaluateDue`).
  ts = await startTestServer({ alertsEveryMs: 0, signIn: { mailer: mails } });
  owner = await signInWithMagicLink(ts, mails, "owner@example.com");
  ts.server.ctx.services.alerts.addNotifier((t) => {
    delivered.push(t);
  });
  const log = ts.server.ctx.log;
  for (const level of ["info", "warn"] as const) {
    const original = log[level];
    log[level] = (msg, fields) => {
      logged.push({ level, msg, fields });
      original(msg, fields);
    };
  }
  expect((await ts.api("/api/admin/events", { body: { name: "job.failed", properties: [{ name: "duration", type: "number" }] } })).status).toBe(201);
  expect((await ts.api("/api/admin/metrics", { body: { name: "failures", kind: "count", event: "job.failed" } })).status).toBe(201);
});
afterAll(() => ts.stop());

describe("comparisons and windows", () => {
  test("meets and windowAt", () => {
    expect([meets(6, "gt", 5), meets(5, "gt", 5), meets(5, "gte", 5), meets(4, "lt", 5), meets(5, "lt", 5), meets(5, "lte", 5)]).toEqual([true, false, true, true, false, true]);
    expect(windowAt(7_200_999, 1)).toEqual({ from: 3600, to: 7200 });
  });
});

describe("/api/admin/alert-rules", () => {
  let id = "";

  test("create answers {id, name}, with defaults, audited; the metric by id or name", async () => {
    const created = await createRule({ name: "failing-jobs", metricId: "failures", threshold: 5, comparator: "gt" });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(["id", "name"]);
    id = created.body.id;
    expect(id).toMatch(/^ar_/);
    const metric = (await ts.api("/api/admin/metrics/failures")).body;
    expect(await rule(id)).toMatchObject({
      id,
      name: "failing-jobs",
      metricId: metric.id,
      threshold: 5,
      comparator: "gt",
      windowHours: 1,
      enabled: true,
      notify: null,
      state: "ok",
      lastValue: null,
      lastCheckedAt: null,
      lastTransitionAt: null,
    });
    expect((await rule("failing-jobs")).id).toBe(id);
    const byId = await createRule({ name: "failing-jobs-daily", metricId: metric.id, threshold: 100, comparator: "gte", windowHours: 24, enabled: false, notify: { channel: "#ops", webhookUrl: "https://hooks.example.com/a" } });
    expect(byId.status).toBe(201);
    expect(await rule("failing-jobs-daily")).toMatchObject({ windowHours: 24, enabled: false, notify: { channel: "#ops", webhookUrl: "https://hooks.example.com/a" } });
    expect((await auditRows("alert_rule.create", "failing-jobs"))[0]?.detail).toEqual({ metricId: metric.id, comparator: "gt", threshold: 5, windowHours: 1, enabled: true });
    expect((await ts.api("/api/admin/alert-rules?q=DAILY")).body.map((r: any) => r.name)).toEqual(["failing-jobs-daily"]);
    expect((await ts.api("/api/admin/alert-rules")).body.map((r: any) => r.name)).toEqual(["failing-jobs", "failing-jobs-daily"]);
  });

  test("create refuses a taken name (409), a missing metric, and bad fields (400 naming each)", async () => {
    const base = { name: "r", metricId: "failures", threshold: 1, comparator: "gt" };
    expect((await createRule({ ...base, name: "failing-jobs" })).status).toBe(409);
    // A metric the project does not have is NOT_FOUND, naming the field.
    const missing = await createRule({ ...base, metricId: "no-such-metric" });
    expect([missing.status, missing.body.code]).toEqual([404, "NOT_FOUND"]);
    expect(missing.body.detail).toContain("metricId");
    const cases: [unknown, string][] = [
      [{ ...base, comparator: "eq" }, "comparator"],
      [{ ...base, windowHours: 0 }, "windowHours"],
      [{ ...base, windowHours: 721 }, "windowHours"],
      [{ ...base, windowHours: 1.5 }, "windowHours"],
      [{ ...base, threshold: "5" }, "threshold"],
      [{ name: "r", metricId: "failures", comparator: "gt" }, "threshold"],
      [{ ...base, state: "firing" }, "state"],
      [{ ...base, name: "ar_x" }, "name"],
      [{ ...base, notify: {} }, "notify"],
      [{ ...base, notify: { webhookUrl: "ftp://example.com/x" } }, "notify.webhookUrl"],
      [{ ...base, notify: { webhookUrl: "https://user:secret@example.com/x" } }, "notify.webhookUrl"],
      [{ ...base, notify: { webhookUrl: "not a url" } }, "notify.webhookUrl"],
      [{ ...base, notify: { email: "a@b.c" } }, "notify"],
      [{ ...base, notify: { channel: "#ops\u0000" } }, "notify.channel"],
    ];
    for (const [body, field] of cases) {
      const r = await createRule(body);
      expect([r.status, r.body.code], JSON.stringify(body)).toEqual([400, "VALIDATION"]);
      expect(r.body.detail, JSON.stringify(body)).toContain(field);
    }
    expect((await ts.api("/api/admin/alert-rules")).body.length).toBe(2);
  });

  test("references name resources of the caller's project: another project's metric or connector is NOT_FOUND; a connector in use is not deleted", async () => {
    const connector = async (server: { adminKey: string }, routineId: string) => {
      const r = await ts.api("/api/admin/connectors", { key: server.adminKey, body: { provider: "claude_trigger", config: { routineId } } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body.id as string;
    };
    const other = await ts.newProject("Other alerts project");
    const theirs = await connector(other, "trig_theirs");
    expect((await ts.api("/api/admin/events", { key: other.adminKey, body: { name: "job.failed" } })).status).toBe(201);
    const theirMetric = (await ts.api("/api/admin/metrics", { key: other.adminKey, body: { name: "their-failures", kind: "count", event: "job.failed" } })).body.id as string;
    const rulesBefore = (await ts.api("/api/admin/alert-rules")).body.length;
    // Disabled: the evaluation tests below count every transition.
    const base = { name: "cross-project", metricId: "failures", threshold: 1, comparator: "gt", enabled: false };
    for (const [body, field] of [
      [{ ...base, notify: { connectorId: theirs } }, "notify.connectorId"],
      [{ ...base, notify: { connectorId: "con_doesnotexist" } }, "notify.connectorId"],
      [{ ...base, metricId: theirMetric }, "metricId"],
    ] as const) {
      const r = await createRule(body);
      expect([r.status, r.body.code], JSON.stringify(body)).toEqual([404, "NOT_FOUND"]);
      expect(r.body.detail).toContain(field);
      // The answer is the same for another project's id as for none: nothing to learn about other projects.
      expect(r.body.error).not.toContain("project");
    }
    expect((await ts.api("/api/admin/alert-rules")).body.length).toBe(rulesBefore);

    // Its own connector is taken; a PATCH to another project's is NOT_FOUND and changes nothing.
    const mine = await connector(ts, "trig_mine");
    expect((await createRule({ ...base, notify: { connectorId: mine } })).status).toBe(201);
    const refused = await patchRule("cross-project", { notify: { connectorId: theirs }, threshold: 99 });
    expect([refused.status, refused.body.code]).toEqual([404, "NOT_FOUND"]);
    expect(refused.body.detail).toContain("notify.connectorId");
    expect(await rule("cross-project")).toMatchObject({ notify: { connectorId: mine }, threshold: 1 });

    // A connector a rule delivers through is not deleted until the rule points elsewhere.
    const inUse = await ts.api(`/api/admin/connectors/${mine}`, { method: "DELETE" });
    expect([inUse.status, inUse.body.code]).toEqual([400, "VALIDATION"]);
    expect(inUse.body.detail).toContain("cross-project");
    expect((await patchRule("cross-project", { notify: null })).status).toBe(200);
    expect((await ts.api(`/api/admin/connectors/${mine}`, { method: "DELETE" })).status).toBe(204);

    // A delete racing a rule that names the connector never leaves the rule pointing at nothing.
    for (let i = 0; i < 6; i++) {
      const id = await connector(ts, `trig_race_${i}`);
      const [created, deleted] = await Promise.all([
        createRule({ ...base, name: `connector-race-${i}`, notify: { connectorId: id } }),
        ts.api(`/api/admin/connectors/${id}`, { method: "DELETE" }),
      ]);
      const survives = (await ts.store.one("SELECT id FROM connectors WHERE id = ?", id)) !== undefined;
      if (created.status === 201) expect([i, survives, deleted.status]).toEqual([i, true, 400]);
      else expect([i, created.status, survives, deleted.status]).toEqual([i, 404, false, 204]);
    }
  });

  test("PATCH by id or name: partial, answers {id}, audited; metricId in any form is 409 IMMUTABLE_FIELD; unknown fields 400", async () => {
    const r = await patchRule("failing-jobs-daily", { threshold: 50, comparator: "gt", windowHours: 720, notify: null });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: (await rule("failing-jobs-daily")).id });
    expect(await rule("failing-jobs-daily")).toMatchObject({ threshold: 50, comparator: "gt", windowHours: 720, notify: null, enabled: false });
    expect((await auditRows("alert_rule.update", "failing-jobs-daily"))[0]?.detail).toEqual({ fields: ["threshold", "comparator", "windowHours", "notify"] });
    const metricId = (await rule(id)).metricId;
    for (const body of [{ metricId }, { metricId: "met_other" }, { metricId: null }, { metricId: "x", threshold: "not a number" }, { threshold: 3, metricId: 1 }]) {
      const refused = await patchRule(id, body);
      expect([refused.status, refused.body.code], JSON.stringify(body)).toEqual([409, "IMMUTABLE_FIELD"]);
    }
    // Credentials still come first.
    expect((await patchRule(id, { metricId }, null)).status).toBe(401);
    const readOnly = (await ts.api("/api/admin/tokens", { body: { name: "ro", access: "read-only" } })).body.token as string;
    expect((await patchRule(id, { metricId }, readOnly)).status).toBe(403);
    for (const body of [{ name: "renamed" }, { state: "ok" }, { windowHours: 0 }, { comparator: "ne" }, { notify: { webhookUrl: "javascript:alert(1)" } }]) {
      const refused = await patchRule(id, body);
      expect([refused.status, refused.body.code], JSON.stringify(body)).toEqual([400, "VALIDATION"]);
    }
    expect((await patchRule("nope", { threshold: 1 })).status).toBe(404);
    expect(await rule(id)).toMatchObject({ threshold: 5, comparator: "gt", windowHours: 1 });
  });

  test("DELETE only from the dashboard: keys and tokens get 403 saying so; a session deletes (204), audited", async () => {
    expect((await createRule({ name: "doomed", metricId: "failures", threshold: 1, comparator: "lt" })).status).toBe(201);
    const byKey = await ts.api("/api/admin/alert-rules/doomed", { method: "DELETE" });
    expect([byKey.status, byKey.body.code]).toEqual([403, "FORBIDDEN"]);
    expect(byKey.body.error).toContain("dashboard");
    const token = await ts.accessTokenFor("owner@example.com");
    expect((await ts.api("/api/admin/alert-rules/doomed", { method: "DELETE", key: token })).status).toBe(403);
    expect((await ts.api("/api/admin/alert-rules/no-such-rule", { method: "DELETE" })).status).toBe(404);
    expect((await rule("doomed")).name).toBe("doomed");
    const bySession = await dashboardFetch("/api/admin/alert-rules/doomed", "DELETE");
    expect(bySession.status).toBe(204);
    expect((await ts.api("/api/admin/alert-rules/doomed")).status).toBe(404);
    const audit = await auditRows("alert_rule.delete", "doomed");
    expect(audit.length).toBe(1);
    expect(audit[0]!.actorEmail).toBe("owner@example.com");
  });
});

describe("evaluation", () => {
  const evaluate = (seconds: number) => ts.server.ctx.services.alerts.evaluateDue(ms(seconds));
  const fires = (name: string) => auditRows("alert.fire", name);
  const resolves = (name: string) => auditRows("alert.resolve", name);
  const deliveredFor = (name: string) => delivered.filter((t) => t.rule.name === name).map((t) => t.kind);

  test("gt 5 over 1 h: ok below, firing once above (one notification, one audit row), ok once the window moves past", async () => {
    expect((await ingest("job.failed", [600, 700, 800])).status).toBe(202);
    // t1: 3 failures in [B - 30 min, B + 30 min).
    let report = await evaluate(1800);
    expect(report.transitions).toEqual([]);
    expect(await rule("failing-jobs")).toMatchObject({ state: "ok", lastValue: 3, lastCheckedAt: new Date(ms(1800)).toISOString(), lastTransitionAt: null });

    expect((await ingest("job.failed", [2400, 2500, 2600, 2700])).status).toBe(202);
    // t2: 7 failures in the last hour.
    report = await evaluate(3000);
    expect(report.transitions.map((t) => [t.rule.name, t.kind, t.value])).toEqual([["failing-jobs", "fire", 7]]);
    expect(await rule("failing-jobs")).toMatchObject({ state: "firing", lastValue: 7, lastTransitionAt: new Date(ms(3000)).toISOString() });
    expect(deliveredFor("failing-jobs")).toEqual(["fire"]);
    const fired = await fires("failing-jobs");
    expect(fired.length).toBe(1);
    expect(fired[0]).toMatchObject({ actorEmail: "system@svc.local", actorType: "system" });
    expect(fired[0]!.detail).toMatchObject({ value: 7, comparator: "gt", threshold: 5, windowHours: 1, from: B + 3000 - 3600, to: B + 3000 });
    expect(logged.filter((l) => l.msg === "alert firing" && l.fields?.rule === "failing-jobs").length).toBe(1);

    // A minute later: still firing, nothing new.
    report = await evaluate(3060);
    expect(report.transitions).toEqual([]);
    expect(await rule("failing-jobs")).toMatchObject({ state: "firing", lastValue: 7, lastCheckedAt: new Date(ms(3060)).toISOString(), lastTransitionAt: new Date(ms(3000)).toISOString() });
    expect(deliveredFor("failing-jobs")).toEqual(["fire"]);
    expect((await fires("failing-jobs")).length).toBe(1);

    // The window has moved past the last failure (B + 2700): resolved, once.
    report = await evaluate(6400);
    expect(report.transitions.map((t) => [t.rule.name, t.kind, t.value])).toEqual([["failing-jobs", "resolve", 0]]);
    expect((await evaluate(6460)).transitions).toEqual([]);
    expect(await rule("failing-jobs")).toMatchObject({ state: "ok", lastValue: 0 });
    expect(deliveredFor("failing-jobs")).toEqual(["fire", "resolve"]);
    expect((await resolves("failing-jobs")).length).toBe(1);
    expect(logged.filter((l) => l.msg === "alert resolved" && l.fields?.rule === "failing-jobs").length).toBe(1);

    // An evaluation for an earlier time arriving late never moves the state back.
    expect((await evaluate(3000)).transitions).toEqual([]);
    expect(await rule("failing-jobs")).toMatchObject({ state: "ok", lastCheckedAt: new Date(ms(6460)).toISOString() });
    // The disabled rule was never evaluated.
    expect(await rule("failing-jobs-daily")).toMatchObject({ state: "ok", lastCheckedAt: null });
  });

  test("two evaluations at once make exactly one transition, one audit row and one notification", async () => {
    expect((await ingest("job.failed", [7000, 7010, 7020, 7030, 7040, 7050, 7060])).status).toBe(202);
    const before = { fires: (await fires("failing-jobs")).length, delivered: delivered.length };
    const reports = await Promise.all([evaluate(7200), evaluate(7200), evaluate(7200)]);
    expect(reports.flatMap((r) => r.transitions).map((t) => t.kind)).toEqual(["fire"]);
    expect((await fires("failing-jobs")).length).toBe(before.fires + 1);
    expect(delivered.length).toBe(before.delivered + 1);
    expect(await rule("failing-jobs")).toMatchObject({ state: "firing", lastValue: 7 });
  });

  test("disabling a firing rule puts it back to ok without a notification; enabled again, the next evaluation decides", async () => {
    const count = delivered.length;
    expect((await patchRule("failing-jobs", { enabled: false })).status).toBe(200);
    expect(await rule("failing-jobs")).toMatchObject({ state: "ok", enabled: false });
    expect((await evaluate(7260)).transitions).toEqual([]);
    expect(delivered.length).toBe(count);
    expect((await patchRule("failing-jobs", { enabled: true, threshold: 10 })).status).toBe(200);
    // 7 is not above 10 any more.
    expect((await evaluate(7320)).transitions).toEqual([]);
    expect(await rule("failing-jobs")).toMatchObject({ state: "ok", lastValue: 7 });
    expect((await patchRule("failing-jobs", { comparator: "lte" })).status).toBe(200);
    expect((await evaluate(7380)).transitions.map((t) => t.kind)).toEqual(["fire"]);
    expect((await patchRule("failing-jobs", { enabled: false })).status).toBe(200);
  });

  test("a rule whose metric no longer compiles is skipped and logged once, its state unchanged; it runs again once the metric is re-saved", async () => {
    expect((await ts.api("/api/admin/metrics", { body: { name: "slow-time", kind: "sum", event: "job.failed", property: "duration" } })).status).toBe(201);
    expect((await createRule({ name: "slow", metricId: "slow-time", threshold: 100, comparator: "gt" })).status).toBe(201);
    expect((await ingest("job.failed", [9000, 9010], { properties: { duration: 80 } })).status).toBe(202);
    expect((await evaluate(9100)).transitions.map((t) => [t.rule.name, t.kind, t.value])).toEqual([["slow", "fire", 160]]);
    // The catalog drops the property the metric adds up.
    expect((await ts.api("/api/admin/events/job.failed", { method: "PATCH", body: { properties: [] } })).status).toBe(200);
    for (const at of [9200, 9260, 9320]) {
      const report = await evaluate(at);
      expect(report.transitions).toEqual([]);
      expect(report.skipped).toBe(1);
    }
    expect(await rule("slow")).toMatchObject({ state: "firing", lastValue: 160, lastCheckedAt: new Date(ms(9100)).toISOString() });
    const skipped = logged.filter((l) => l.msg === "alert rule skipped: its metric no longer compiles" && l.fields?.rule === "slow");
    expect(skipped.length).toBe(1);
    expect(String(skipped[0]!.fields?.error)).toContain("property duration is not a catalogued property of event job.failed");
    // Re-saved as a count, it runs again: 9 in the window (7 at B + 7000.., 2 at B + 9000..), not above 100.
    expect((await ts.api("/api/admin/metrics/slow-time", { method: "PATCH", body: { kind: "count", event: "job.failed" } })).status).toBe(200);
    expect((await evaluate(9400)).transitions.map((t) => [t.rule.name, t.kind, t.value])).toEqual([["slow", "resolve", 9]]);
  });

  test("metrics a rule uses cannot be deleted until the rule is (in the dashboard)", async () => {
    const refused = await ts.api("/api/admin/metrics/slow-time", { method: "DELETE" });
    expect([refused.status, refused.body.code]).toEqual([400, "VALIDATION"]);
    expect(refused.body.detail).toBe("id: used by alert rule slow");
    expect((await dashboardFetch("/api/admin/alert-rules/slow", "DELETE")).status).toBe(204);
    expect((await ts.api("/api/admin/metrics/slow-time", { method: "DELETE" })).status).toBe(204);
  });

  test("concurrent rule creates and a metric delete: rules end up only on a metric that exists", async () => {
    expect((await ts.api("/api/admin/metrics", { body: { name: "short-lived", kind: "count", event: "job.failed" } })).status).toBe(201);
    const results = await Promise.all([
      ts.api("/api/admin/metrics/short-lived", { method: "DELETE" }),
      ...Array.from({ length: 5 }, (_, i) => createRule({ name: `race-${i}`, metricId: "short-lived", threshold: 1, comparator: "gt" })),
    ]);
    const [deleted, ...created] = results;
    const made = created.filter((r) => r.status === 201).length;
    expect(created.every((r) => r.status === 201 || (r.status === 404 && r.body.detail.startsWith("metricId")))).toBe(true);
    if (deleted!.status === 204) {
      expect(made).toBe(0);
    } else {
      expect([deleted!.status, made]).toEqual([400, 5]);
    }
    const orphans = await ts.store.one<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM alert_rules r LEFT JOIN metrics m ON m.id = r.metric_id WHERE m.id IS NULL");
    expect(Number(orphans?.n)).toBe(0);
  });
});

describe("the timer", () => {
  test("evaluates every alertsEveryMs with the injected clock, on the server holding the lease", async () => {
    const now = ms(3000);
    const other = await startTestServer({ alertsEveryMs: 100, clock: () => now });
    try {
      const got: AlertTransition[] = [];
      other.server.ctx.services.alerts.addNotifier((t) => {
        got.push(t);
      });
      const api = other.api;
      expect((await api("/api/admin/events", { body: { name: "job.failed" } })).status).toBe(201);
      expect((await api("/api/admin/metrics", { body: { name: "failures", kind: "count", event: "job.failed" } })).status).toBe(201);
      expect((await api("/api/admin/alert-rules", { body: { name: "any-failure", metricId: "failures", threshold: 0, comparator: "gt" } })).status).toBe(201);
      expect((await api("/api/sdk/v1/events", { body: { events: [{ name: "job.failed", ts: ms(2000) }] }, key: other.serverKey })).status).toBe(202);
      const deadline = Date.now() + 10_000;
      while (got.length === 0 && Date.now() < deadline) await Bun.sleep(50);
      expect(got.map((t) => [t.rule.name, t.kind, t.at])).toEqual([["any-failure", "fire", new Date(now).toISOString()]]);
      await Bun.sleep(300);
      expect(got.length).toBe(1);
      expect((await api("/api/admin/alert-rules/any-failure")).body).toMatchObject({ state: "firing", lastValue: 1, lastCheckedAt: new Date(now).toISOString() });
    } finally {
      await other.stop();
    }
  });
});

describe("MCP tools", () => {
  /** The tools' calls go to this server with the admin key, as `svc mcp` would send them. */
  const open = () => ({
    serverUrl: ts.url,
    projectSource: "test",
    credentialSource: "test",
    async request(method: string, path: string, options?: { body?: unknown }) {
      const r = await ts.api(path, { method, body: options?.body === undefined ? undefined : JSON.parse(JSON.stringify(options.body)) });
      if (r.status >= 400) throw new Error(`${r.status} ${r.text}`);
      return r.body;
    },
    // The typed client the tools call (SvcClient.api's shape): Eden over the routes, failures thrown as they come.
    api() {
      const fetcher = async (url: RequestInfo | URL, init?: RequestInit) => {
        const r = await fetch(url, init);
        if (r.status >= 400) throw new Error(`${r.status} ${await r.text()}`);
        return r;
      };
      return treaty(ts.url, { parseDate: false, headers: { authorization: `Bearer ${ts.adminKey}` }, fetcher: fetcher as typeof fetch });
    },
  });
  const tool = async (name: string) => (await import("../../src/modules/alerts/mcp-tools")).alertTools.find((t) => t.name === name)!;

  test("list_alert_rules, get_alert_rule and update_alert_rule act on the real server; there is no delete tool", async () => {
    const { alertTools } = await import("../../src/modules/alerts/mcp-tools");
    expect(alertTools.map((t) => t.name)).toEqual(["list_alert_rules", "get_alert_rule", "update_alert_rule"]);
    const listed = (await (await tool("list_alert_rules")).run({ q: "failing" }, open as never)) as any[];
    expect(listed.map((r) => r.name)).toEqual(["failing-jobs", "failing-jobs-daily"]);
    expect(((await (await tool("get_alert_rule")).run({ name: "failing-jobs" }, open as never)) as any).comparator).toBe("lte");
    const updated = (await (await tool("update_alert_rule")).run({ name: "failing-jobs-daily", window_hours: 48, notify: { channel: "#ops" } }, open as never)) as any;
    expect(updated.id).toMatch(/^ar_/);
    expect(await rule("failing-jobs-daily")).toMatchObject({ windowHours: 48, notify: { channel: "#ops" }, threshold: 50 });
  });

  test("list_metrics, get_metric and metric_series", async () => {
    const { metricTools } = await import("../../src/modules/metrics/mcp-tools");
    const run = (name: string, args: Record<string, unknown>) => metricTools.find((t) => t.name === name)!.run(args as never, open as never) as Promise<any>;
    expect((await run("list_metrics", { q: "fail" })).map((m: any) => m.name)).toEqual(["failures"]);
    expect((await run("get_metric", { name: "failures" })).kind).toBe("count");
    const series = await run("metric_series", { name: "failures", from: B, to: B + 3600, bucket: 3600 });
    expect(series.rows).toEqual([{ t: B, v: 7 }]);
  });
});
