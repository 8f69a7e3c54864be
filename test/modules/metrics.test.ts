import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import { ApiError } from "../../src/lib/errors";
import { type CatalogEntry, checkAgainstCatalog, checkDefinition, compile, divideRows } from "../../src/modules/metrics/compile";
import { type TestServer, startTestServer } from "../helpers";

let ts: TestServer;

/** Five whole hours ago (epoch seconds): every event of these tests falls in [H, H + 3h), all in the past. */
const H = Math.floor(Date.now() / 3_600_000) * 3600 - 5 * 3600;
const at = (seconds: number) => (H + seconds) * 1000;

const ingest = (events: unknown[]) => ts.api("/api/sdk/v1/events", { body: { events }, key: ts.serverKey });
const series = (metric: string, body: unknown) => ts.api(`/api/admin/metrics/${encodeURIComponent(metric)}/series`, { body });
const createMetric = (body: unknown) => ts.api("/api/admin/metrics", { body });

beforeAll(async () => {
  ts = await startTestServer({ alertsEveryMs: 0 });
  const checkout = await ts.api("/api/admin/events", {
    body: {
      name: "checkout",
      properties: [
        { name: "amount", type: "number" },
        { name: "country", type: "string" },
        { name: "test", type: "boolean" },
      ],
    },
  });
  expect(checkout.status).toBe(201);
  expect((await ts.api("/api/admin/events", { body: { name: "cart.viewed" } })).status).toBe(201);
  const sent = await ingest([
    { name: "cart.viewed", unitId: "u1", ts: at(300) },
    { name: "cart.viewed", unitId: "u2", ts: at(420) },
    { name: "cart.viewed", unitId: "u3", ts: at(480) },
    { name: "checkout", unitId: "u1", ts: at(600), value: 100, properties: { amount: 10, country: "de", test: false } },
    { name: "checkout", unitId: "u2", ts: at(1200), value: 200, properties: { amount: 5, country: "fr", test: false } },
    { name: "cart.viewed", unitId: "u1", ts: at(3660) },
    { name: "checkout", unitId: "u1", ts: at(3900), value: 300, properties: { amount: 7, country: "de", test: false } },
    { name: "checkout", unitId: "u3", ts: at(3960), value: 400, properties: { amount: 3, country: "de", test: true } },
  ]);
  expect(sent.status).toBe(202);
});
afterAll(() => ts.stop());

const catalog: Record<string, CatalogEntry> = {
  checkout: { name: "checkout", properties: [{ name: "amount", type: "number" }, { name: "country", type: "string" }] },
  "cart.viewed": { name: "cart.viewed", properties: [] },
};
const lookup = (name: string) => catalog[name];

function thrown(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error("did not throw");
}

describe("metric definitions (compile.ts)", () => {
  test("shapes: a count/sum/unique names its event, only a sum a property, a ratio only its two parts (no nesting)", () => {
    expect(checkDefinition({ kind: "count", event: "checkout" })).toEqual({ kind: "count", event: "checkout", filters: [] });
    expect(checkDefinition({ kind: "sum", event: "checkout", property: "amount", filters: [{ property: "country", op: "eq", value: "de" }] })).toEqual({
      kind: "sum",
      event: "checkout",
      property: "amount",
      filters: [{ property: "country", op: "eq", value: "de" }],
    });
    const cases: [Parameters<typeof checkDefinition>[0], string][] = [
      [{ kind: "count" }, "event: "],
      [{ kind: "count", event: "$error:abc" }, "event: "],
      [{ kind: "unique", event: "checkout", property: "amount" }, "property: only a sum"],
      [{ kind: "count", event: "checkout", numerator: { kind: "count", event: "checkout" } }, "numerator: only a ratio"],
      [{ kind: "ratio", event: "checkout", numerator: { kind: "count", event: "a" }, denominator: { kind: "count", event: "b" } }, "event: a ratio takes none"],
      [{ kind: "ratio", numerator: { kind: "count", event: "a" } }, "denominator: "],
      [{ kind: "ratio", numerator: { kind: "ratio", event: "a" }, denominator: { kind: "count", event: "b" } }, "numerator.kind: count, sum or unique (ratios do not nest)"],
      [{ kind: "count", event: "checkout", filters: [{ property: "amount", op: "gt", value: "5" }] }, "filters[0].value: gt compares numbers"],
      [{ kind: "count", event: "checkout", filters: [{ property: "amount", op: "like", value: 1 }] }, "filters[0].op: "],
      [{ kind: "count", event: "checkout", filters: [{ property: "a'b", op: "eq", value: 1 }] }, "filters[0].property: "],
      [{ kind: "median", event: "checkout" }, "kind: "],
    ];
    for (const [input, detail] of cases) {
      const err = thrown(() => checkDefinition(input));
      expect(err.status, JSON.stringify(input)).toBe(400);
      expect(err.code).toBe("VALIDATION");
      expect(err.detail, JSON.stringify(input)).toContain(detail);
    }
  });

  test("compiled against the catalog: measures when everything named is catalogued, 400 when saving and 422 when running otherwise", () => {
    const ratio = checkDefinition({
      kind: "ratio",
      numerator: { kind: "sum", event: "checkout", property: "amount", filters: [{ property: "country", op: "neq", value: "fr" }] },
      denominator: { kind: "unique", event: "cart.viewed" },
    });
    expect(compile("conv", ratio, lookup)).toEqual([
      { kind: "sum", event: "checkout", property: "amount", filters: [{ property: "country", op: "neq", value: "fr" }] },
      { kind: "unique", event: "cart.viewed", filters: [] },
    ]);
    expect(compile("value", checkDefinition({ kind: "sum", event: "checkout" }), lookup)).toEqual([{ kind: "sum", event: "checkout", filters: [] }]);

    const gone = checkDefinition({ kind: "count", event: "signup" });
    const saving = thrown(() => checkAgainstCatalog(gone, lookup));
    expect([saving.status, saving.code, saving.detail]).toEqual([400, "VALIDATION", "event: event signup is not in the event catalog"]);
    const running = thrown(() => compile("signups", gone, lookup));
    expect([running.status, running.code]).toEqual([422, "VALIDATION"]);
    expect(running.message).toContain("Metric signups cannot be compiled: event signup is not in the event catalog");
    expect(running.message).toContain("Re-save the metric");

    const badProps = checkDefinition({ kind: "sum", event: "checkout", property: "country", filters: [{ property: "plan", op: "eq", value: "pro" }] });
    expect(thrown(() => checkAgainstCatalog(badProps, lookup)).detail).toBe(
      "property: property country of event checkout is a string; a sum adds up a number; filters[0].property: property plan is not a catalogued property of event checkout",
    );
    expect(thrown(() => compile("x", checkDefinition({ kind: "ratio", numerator: { kind: "count", event: "checkout" }, denominator: { kind: "count", event: "gone" } }), lookup)).detail).toBe(
      "denominator.event: event gone is not in the event catalog",
    );
  });

  test("a ratio divides bucket by bucket, 0 where the denominator is 0", () => {
    expect(divideRows([{ t: 0, v: 2 }, { t: 10, v: 3 }, { t: 20, v: 0 }], [{ t: 0, v: 4 }, { t: 10, v: 0 }, { t: 20, v: 0 }])).toEqual([
      { t: 0, v: 0.5 },
      { t: 10, v: 0 },
      { t: 20, v: 0 },
    ]);
  });
});

describe("/api/admin/metrics", () => {
  let countId = "";

  test("create answers the full record and is audited; 409 on a taken name; names are not ids; unknown fields are refused", async () => {
    const created = await createMetric({ name: "checkouts", description: "Completed checkouts", kind: "count", event: "checkout" });
    expect(created.status).toBe(201);
    countId = created.body.id;
    expect(countId).toMatch(/^met_/);
    expect(created.body).toMatchObject({
      name: "checkouts",
      description: "Completed checkouts",
      kind: "count",
      event: "checkout",
      property: null,
      filters: [],
      numerator: null,
      denominator: null,
    });
    expect(typeof created.body.createdAt).toBe("string");
    const audit = (await auditOf(ts.store, ts.projectId)).find((r) => r.action === "metric.create" && r.subjectId === countId);
    expect(audit?.detail).toEqual({ kind: "count", events: ["checkout"] });

    const again = await createMetric({ name: "checkouts", kind: "unique", event: "checkout" });
    expect([again.status, again.body.code]).toEqual([409, "ALREADY_EXISTS"]);
    const idLike = await createMetric({ name: "met_abc", kind: "count", event: "checkout" });
    expect([idLike.status, idLike.body.code]).toEqual([400, "VALIDATION"]);
    expect(idLike.body.detail).toContain("name");
    const extra = await createMetric({ name: "extra", kind: "count", event: "checkout", window: 5 });
    expect([extra.status, extra.body.code]).toEqual([400, "VALIDATION"]);
    expect(extra.body.detail).toContain("window");
    const nested = await createMetric({ name: "nested", kind: "ratio", numerator: { kind: "ratio", event: "checkout" }, denominator: { kind: "count", event: "checkout" } });
    expect(nested.status).toBe(400);
  });

  test("the catalog is checked when saving: 400 naming the field", async () => {
    const cases: [unknown, string][] = [
      [{ name: "m1", kind: "count", event: "never.registered" }, "event: event never.registered is not in the event catalog"],
      [{ name: "m2", kind: "sum", event: "checkout", property: "discount" }, "property: property discount is not a catalogued property of event checkout"],
      [{ name: "m3", kind: "sum", event: "checkout", property: "country" }, "property: property country of event checkout is a string"],
      [{ name: "m4", kind: "count", event: "checkout", filters: [{ property: "coupon", op: "eq", value: "X" }] }, "filters[0].property: property coupon is not a catalogued property"],
      [{ name: "m5", kind: "ratio", numerator: { kind: "count", event: "checkout" }, denominator: { kind: "count", event: "gone" } }, "denominator.event: event gone is not"],
    ];
    for (const [body, detail] of cases) {
      const r = await createMetric(body);
      expect([r.status, r.body.code], JSON.stringify(body)).toEqual([400, "VALIDATION"]);
      expect(r.body.detail).toContain(detail);
    }
    expect((await ts.api("/api/admin/metrics")).body.map((m: any) => m.name)).toEqual(["checkouts"]);
  });

  test("get by id, unique id prefix or name; list with q; 404 otherwise", async () => {
    for (const ref of [countId, countId.slice(0, 10), "checkouts"]) expect((await ts.api(`/api/admin/metrics/${ref}`)).body.id).toBe(countId);
    expect((await ts.api("/api/admin/metrics/met_")).status).toBe(404);
    expect((await ts.api("/api/admin/metrics/nope")).status).toBe(404);
    expect((await ts.api("/api/admin/metrics?q=COMPLETED")).body.map((m: any) => m.id)).toEqual([countId]);
    expect((await ts.api("/api/admin/metrics?q=zzz")).body).toEqual([]);
    // Another project's metric is not visible.
    const other = await ts.newProject("Other");
    expect((await ts.api(`/api/admin/metrics/${countId}`, { key: other.adminKey })).status).toBe(404);
  });

  test("series: count, sum of a property and of the value, filters, unique units, a ratio; every bucket present", async () => {
    const window = { from: H, to: H + 3 * 3600, bucket: 3600 };
    const hours = [H, H + 3600, H + 7200];
    const expectRows = (r: any, values: number[]) => {
      expect(r.status, r.text).toBe(200);
      expect(typeof r.body.sql).toBe("string");
      expect(r.body.rows).toEqual(hours.map((t, i) => ({ t, v: values[i] })));
    };
    expectRows(await series("checkouts", window), [2, 2, 0]);
    expect((await createMetric({ name: "revenue", kind: "sum", event: "checkout", property: "amount" })).status).toBe(201);
    expectRows(await series("revenue", window), [15, 10, 0]);
    expect((await createMetric({ name: "value", kind: "sum", event: "checkout" })).status).toBe(201);
    expectRows(await series("value", window), [300, 700, 0]);
    expect((await createMetric({ name: "revenue-de", kind: "sum", event: "checkout", property: "amount", filters: [{ property: "country", op: "eq", value: "de" }] })).status).toBe(201);
    expectRows(await series("revenue-de", window), [10, 10, 0]);
    expect((await createMetric({ name: "big", kind: "count", event: "checkout", filters: [{ property: "amount", op: "gt", value: 5 }, { property: "test", op: "eq", value: false }] })).status).toBe(201);
    expectRows(await series("big", window), [1, 1, 0]);
    expect((await createMetric({ name: "buyers", kind: "unique", event: "checkout" })).status).toBe(201);
    expectRows(await series("buyers", window), [2, 2, 0]);
    const ratio = await createMetric({ name: "conversion", kind: "ratio", numerator: { kind: "unique", event: "checkout" }, denominator: { kind: "unique", event: "cart.viewed" } });
    expect(ratio.status).toBe(201);
    expect(ratio.body).toMatchObject({ kind: "ratio", event: null, numerator: { kind: "unique", event: "checkout", property: null, filters: [] }, denominator: { kind: "unique", event: "cart.viewed" } });
    const r = await series("conversion", window);
    expectRows(r, [2 / 3, 2, 0]);
    expect(r.body.sql.split(";\n").length).toBe(2);
    // Minute buckets over a window that is not whole hours (the raw events).
    const minutes = await series("checkouts", { from: H + 540, to: H + 1260, bucket: 60 });
    expect(minutes.status).toBe(200);
    expect(minutes.body.rows.length).toBe(12);
    expect(minutes.body.rows.filter((x: any) => x.v > 0)).toEqual([
      { t: H + 600, v: 1 },
      { t: H + 1200, v: 1 },
    ]);
  });

  test("a filter value is a value, never SQL", async () => {
    const hostile = "de' OR '1'='1";
    expect((await createMetric({ name: "hostile", kind: "count", event: "checkout", filters: [{ property: "country", op: "eq", value: hostile }] })).status).toBe(201);
    const r = await series("hostile", { from: H, to: H + 3 * 3600, bucket: 3600 });
    expect(r.status).toBe(200);
    expect(r.body.rows.map((x: any) => x.v)).toEqual([0, 0, 0]);
    expect(r.body.sql).not.toContain(hostile);
  });

  test("series windows: to after from, a bucket of at least a second, at most 10,000 buckets, integers only", async () => {
    const cases: [unknown, string][] = [
      [{ from: H, to: H, bucket: 60 }, "to"],
      [{ from: H, to: H - 60, bucket: 60 }, "to"],
      [{ from: H, to: H + 10_001, bucket: 1 }, "bucket"],
      [{ from: H, to: H + 3600, bucket: 0 }, "bucket"],
      [{ from: H + 0.5, to: H + 3600, bucket: 60 }, "from"],
      [{ from: String(H), to: H + 3600, bucket: 60 }, "from"],
      [{ from: H, to: H + 3600 }, "bucket"],
      [{ from: H, to: H + 3600, bucket: 60, env: "prod" }, "env"],
    ];
    for (const [body, field] of cases) {
      const r = await series("checkouts", body);
      expect([r.status, r.body.code], JSON.stringify(body)).toEqual([400, "VALIDATION"]);
      expect(r.body.detail, JSON.stringify(body)).toContain(field);
    }
    expect((await series("checkouts", { from: H, to: H + 10_000, bucket: 1 })).status).toBe(200);
    expect((await series("nope", { from: H, to: H + 60, bucket: 60 })).status).toBe(404);
  });

  test("PATCH: partial, checked again; another kind starts afresh; audited", async () => {
    const renamed = await ts.api("/api/admin/metrics/revenue-de", { method: "PATCH", body: { name: "revenue-germany", filters: [{ property: "country", op: "eq", value: "de" }, { property: "test", op: "eq", value: false }] } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: "revenue-germany", kind: "sum", property: "amount", filters: [{ property: "country" }, { property: "test" }] });
    expect((await series("revenue-germany", { from: H, to: H + 3 * 3600, bucket: 3600 })).body.rows.map((x: any) => x.v)).toEqual([10, 7, 0]);
    expect((await ts.api("/api/admin/metrics/revenue-germany", { method: "PATCH", body: { name: "checkouts" } })).status).toBe(409);
    const bad = await ts.api("/api/admin/metrics/revenue-germany", { method: "PATCH", body: { property: "country" } });
    expect([bad.status, bad.body.code]).toEqual([400, "VALIDATION"]);
    expect(bad.body.detail).toContain("property: property country of event checkout is a string");
    // count → ratio: the count's event does not carry over.
    const toRatio = await ts.api("/api/admin/metrics/big", {
      method: "PATCH",
      body: { kind: "ratio", numerator: { kind: "count", event: "checkout" }, denominator: { kind: "count", event: "cart.viewed" } },
    });
    expect(toRatio.status).toBe(200);
    expect(toRatio.body).toMatchObject({ kind: "ratio", event: null, filters: [], numerator: { event: "checkout" } });
    // Clearing the summed property sums the value.
    const cleared = await ts.api("/api/admin/metrics/revenue-germany", { method: "PATCH", body: { property: null, description: "Value, DE" } });
    expect(cleared.body).toMatchObject({ property: null, description: "Value, DE" });
    expect((await ts.api("/api/admin/metrics/revenue-germany", { method: "PATCH", body: { event: "x", bogus: 1 } })).status).toBe(400);
    const audit = (await auditOf(ts.store, ts.projectId)).filter((r) => r.action === "metric.update");
    expect(audit.length).toBe(3);
  });

  test("a metric whose event or property left the catalog: series 422 saying so, until re-saved", async () => {
    expect((await createMetric({ name: "revenue-eur", kind: "sum", event: "checkout", property: "amount", filters: [{ property: "test", op: "eq", value: false }] })).status).toBe(201);
    // The catalog drops the summed property.
    const edited = await ts.api("/api/admin/events/checkout", { method: "PATCH", body: { properties: [{ name: "country", type: "string" }, { name: "test", type: "boolean" }] } });
    expect(edited.status).toBe(200);
    const broken = await series("revenue-eur", { from: H, to: H + 3600, bucket: 3600 });
    expect([broken.status, broken.body.code]).toEqual([422, "VALIDATION"]);
    expect(broken.body.error).toContain("Metric revenue-eur cannot be compiled: property amount is not a catalogued property of event checkout");
    expect(broken.body.error).toContain("Re-save");
    expect(broken.body.detail).toBe("property: property amount is not a catalogued property of event checkout");
    // Saving it as it is says what to change; saving it changed compiles again.
    const same = await ts.api("/api/admin/metrics/revenue-eur", { method: "PATCH", body: {} });
    expect([same.status, same.body.code]).toEqual([400, "VALIDATION"]);
    expect(same.body.detail).toContain("property");
    expect((await ts.api("/api/admin/metrics/revenue-eur", { method: "PATCH", body: { property: null } })).status).toBe(200);
    expect((await series("revenue-eur", { from: H, to: H + 3 * 3600, bucket: 3600 })).body.rows.map((x: any) => x.v)).toEqual([300, 300, 0]);
    // The event itself leaves the catalog.
    expect((await ts.api("/api/admin/events/cart.viewed", { method: "DELETE" })).status).toBe(204);
    const gone = await series("conversion", { from: H, to: H + 3600, bucket: 3600 });
    expect([gone.status, gone.body.code]).toEqual([422, "VALIDATION"]);
    expect(gone.body.detail).toBe("denominator.event: event cart.viewed is not in the event catalog");
    expect((await ts.api("/api/admin/metrics/conversion")).status).toBe(200);
  });

  test("DELETE: 204 and audited; a metric an alert rule uses is refused naming the rule", async () => {
    expect((await ts.api("/api/admin/alert-rules", { body: { name: "too-many-buyers", metricId: "buyers", threshold: 100, comparator: "gt" } })).status).toBe(201);
    const refused = await ts.api("/api/admin/metrics/buyers", { method: "DELETE" });
    expect([refused.status, refused.body.code]).toEqual([400, "VALIDATION"]);
    expect(refused.body.error).toContain("too-many-buyers");
    expect((await ts.api("/api/admin/metrics/buyers")).status).toBe(200);
    const removed = await ts.api("/api/admin/metrics/hostile", { method: "DELETE" });
    expect(removed.status).toBe(204);
    expect((await ts.api("/api/admin/metrics/hostile")).status).toBe(404);
    expect((await ts.api("/api/admin/metrics/hostile", { method: "DELETE" })).status).toBe(404);
    expect((await auditOf(ts.store, ts.projectId)).some((r) => r.action === "metric.delete" && r.subjectName === "hostile")).toBe(true);
  });

  test("concurrent creates of one name: exactly one is made, the others are 409", async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => createMetric({ name: "race", kind: "count", event: "checkout" })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    const row = await ts.store.one<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM metrics WHERE project_id = ? AND name = ?", ts.projectId, "race");
    expect(Number(row?.n)).toBe(1);
    expect((await auditOf(ts.store, ts.projectId)).filter((r) => r.action === "metric.create" && r.subjectName === "race").length).toBe(1);
  });

  test("a read-only token may read a series but not define metrics", async () => {
    const token = await ts.api("/api/admin/tokens", { body: { name: "ro", access: "read-only" } });
    expect(token.status).toBe(201);
    const secret = token.body.token as string;
    expect((await ts.api("/api/admin/metrics/checkouts/series", { body: { from: H, to: H + 3600, bucket: 3600 }, key: secret })).status).toBe(200);
    expect((await ts.api("/api/admin/metrics", { body: { name: "ro", kind: "count", event: "checkout" }, key: secret })).status).toBe(403);
  });
});

describe("an analytics upstream that cannot be reached", () => {
  test("series passes its 503 through (Retry-After); windows are still checked first; alert rules on it are skipped", async () => {
    const down = await startTestServer({ alertsEveryMs: 0, analyticsUrl: "postgres://svc@127.0.0.1:9/analytics" });
    try {
      expect((await down.api("/api/admin/events", { body: { name: "checkout" } })).status).toBe(201);
      expect((await down.api("/api/admin/metrics", { body: { name: "checkouts", kind: "count", event: "checkout" } })).status).toBe(201);
      const r = await down.api("/api/admin/metrics/checkouts/series", { body: { from: H, to: H + 3600, bucket: 3600 } });
      expect(r.status).toBe(503);
      expect(r.body).toEqual({ error: "Unavailable" });
      expect(r.headers.get("retry-after")).not.toBeNull();
      expect((await down.api("/api/admin/metrics/checkouts/series", { body: { from: H, to: H, bucket: 3600 } })).status).toBe(400);
      // An alert rule on it is skipped (state unchanged), not failed.
      expect((await down.api("/api/admin/alert-rules", { body: { name: "no-checkouts", metricId: "checkouts", threshold: 1, comparator: "lt" } })).status).toBe(201);
      const report = await down.server.ctx.services.alerts.evaluateDue(Date.now());
      expect([report.checked, report.skipped, report.transitions.length]).toEqual([0, 1, 0]);
      expect((await down.api("/api/admin/alert-rules/no-checkouts")).body).toMatchObject({ state: "ok", lastCheckedAt: null });
    } finally {
      await down.stop();
    }
  });
});
