import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { removeSandboxes, sandbox, startClientTestServer, svc, svcJson, type ClientTestServer, type Sandbox } from "./client-helpers";

// Each test spawns the CLI several times.
setDefaultTimeout(90_000);

let ts: ClientTestServer;
/** A sandbox with a read-write API token (SERVICE_CLI_TOKEN). */
let box: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  ts = await startClientTestServer();
  const minted = await ts.api("/api/admin/tokens", { body: { name: "observability-cli", access: "read-write" } });
  expect(minted.status).toBe(201);
  box = sandbox();
  env = { SERVICE_CLI_TOKEN: minted.body.token, SERVICE_URL: ts.url };
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

const cli = (noun: string) => ({
  run: (args: string[]) => svc(box, [noun, ...args], { env }),
  json: (args: string[]) => svcJson(box, [noun, ...args], { env }),
});
const ingest = (events: unknown[]) => ts.api("/api/sdk/v1/events", { body: { events }, key: ts.serverKey });

/** Runs each case with --json: exit 2, code USAGE, a message matching; then checks nothing changed on the server. */
async function usageMistakes(noun: string, cases: [string[], RegExp][]): Promise<void> {
  for (const [args, message] of cases) {
    const r = await svc(box, [noun, ...args, "--json"], { env });
    expect([args.join(" "), r.code]).toEqual([args.join(" "), 2]);
    const body = JSON.parse(r.stderr);
    expect(body.code).toBe("USAGE");
    expect([args.join(" "), body.error]).toEqual([args.join(" "), expect.stringMatching(message)]);
  }
}

describe("svc events", () => {
  const events = cli("events");
  const event = async (name: string) => (await ts.api(`/api/admin/events/${name}`)).body;

  test("create: --json is the API's answer; properties as NAME:TYPE[:required], repeated or comma lists", async () => {
    const created = await events.json(["create", "checkout.completed", "--folder", "commerce", "--description", "An order was paid", "--property", "amount:number:required,plan:string", "--property", "coupon:boolean"]);
    expect(created).toEqual({ id: expect.stringMatching(/^evt_/), name: "checkout.completed" });
    expect(await event("checkout.completed")).toMatchObject({
      folder: "commerce",
      description: "An order was paid",
      pending: 0,
      properties: [
        { name: "amount", type: "number", required: true, description: "" },
        { name: "plan", type: "string", required: false, description: "" },
        { name: "coupon", type: "boolean", required: false, description: "" },
      ],
    });

    const human = await events.run(["create", "cart.viewed", "--property", "ns:key:string:optional"]);
    expect(human.code).toBe(0);
    expect(human.stderr).toBe("");
    expect(human.stdout.trim()).toMatch(/^Registered event cart\.viewed \(evt_\w+\) with ns:key: string\.$/);
    expect((await event("cart.viewed")).properties).toEqual([{ name: "ns:key", type: "string", required: false, description: "" }]);

    const twice = await events.run(["create", "cart.viewed", "--json"]);
    expect(twice.code).toBe(1);
    expect(JSON.parse(twice.stderr)).toMatchObject({ code: "ALREADY_EXISTS", status: 409 });
    const badName = await events.run(["create", "has space"]);
    expect(badName.code).toBe(1);
    expect(badName.stderr).toContain("Invalid event name (VALIDATION, HTTP 400)");
  });

  test("list marks pending rows and says how to approve them; approve accepts one; get reads field by field", async () => {
    expect((await ingest([{ name: "signup", unitId: "u1", properties: { plan: "pro", seats: 3 } }])).status).toBe(202);

    const listed = await events.json(["list"]);
    expect(listed).toEqual((await ts.api("/api/admin/events")).body);
    expect(listed.map((e: any) => [e.name, e.pending])).toEqual([
      ["cart.viewed", 0],
      ["checkout.completed", 0],
      ["signup", 1],
    ]);
    expect((await events.json(["list", "--query", "COMMERCE"])).map((e: any) => e.name)).toEqual(["checkout.completed"]);

    const table = await events.run(["list"]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^NAME\s+FOLDER\s+PENDING\s+LAST SEEN\s+PROPERTIES\s+DESCRIPTION$/m);
    expect(table.stdout).toMatch(/^checkout\.completed\s+commerce\s+no\s+never\s+amount, plan, coupon\s+An order was paid$/m);
    expect(table.stdout).toMatch(/^signup\s+-\s+yes\s+\S+ \S+\s+plan, seats\s+-$/m);
    expect(table.stdout).toContain("1 pending event was seen in ingest and not approved yet: approve it with `svc events approve signup`.");
    expect((await events.run(["list", "--query", "nothing"])).stdout.trim()).toBe('No events match "nothing".');

    const pending = await events.run(["get", "signup"]);
    expect(pending.code).toBe(0);
    expect(pending.stdout).toMatch(/^signup \(evt_\w+\): PENDING \(seen in ingest, not approved yet\)$/m);
    expect(pending.stdout).toContain("    plan: string\n    seats: number\n");
    expect(pending.stdout).toContain("Approve it with `svc events approve signup`.");

    const approved = await events.json(["approve", "signup", "--folder", "growth"]);
    expect(approved).toEqual(await event("signup"));
    expect(approved).toMatchObject({ name: "signup", pending: 0, folder: "growth", properties: [{ name: "plan" }, { name: "seats" }] });
    const again = await events.run(["approve", "signup"]);
    expect(again.code).toBe(0);
    expect(again.stdout.trim()).toBe("Event signup is already approved; nothing changed.");
    expect((await events.run(["list"])).stdout).not.toContain("pending event");
    const unknown = await events.run(["approve", "nope", "--json"]);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr)).toMatchObject({ code: "NOT_FOUND", status: 404 });
    expect((await ts.api("/api/admin/events/nope")).status).toBe(404);

    const got = await events.json(["get", "checkout.completed"]);
    expect(got).toEqual(await event("checkout.completed"));
    expect(await events.json(["get", got.id])).toEqual(got);
    const shown = await events.run(["get", "checkout.completed"]);
    expect(shown.stdout).toContain(`checkout.completed (${got.id})\n`);
    expect(shown.stdout).toContain("  folder:      commerce\n");
    expect(shown.stdout).toContain("  description: An order was paid\n");
    expect(shown.stdout).toContain("  last seen:   never\n");
    expect(shown.stdout).toContain("  properties:\n    amount: number, required\n    plan: string\n    coupon: boolean\n");
  });

  test("update changes only the flags given: --property adds or changes one by name, --remove-property drops one", async () => {
    const patched = await ts.api("/api/admin/events/checkout.completed", { method: "PATCH", body: { properties: [{ name: "amount", type: "number", required: true, description: "EUR" }, { name: "plan", type: "string" }, { name: "coupon", type: "boolean" }] } });
    expect(patched.status).toBe(200);
    const updated = await events.json(["update", "checkout.completed", "--property", "amount:number,country:string:required", "--remove-property", "coupon", "--description", "Paid, after 3-D Secure"]);
    expect(updated).toEqual(await event("checkout.completed"));
    expect(updated).toMatchObject({
      folder: "commerce",
      description: "Paid, after 3-D Secure",
      properties: [
        { name: "amount", type: "number", required: false, description: "EUR" },
        { name: "plan", type: "string", required: false },
        { name: "country", type: "string", required: true },
      ],
    });
    const human = await events.run(["update", "checkout.completed", "--folder", ""]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("Updated event checkout.completed:\n  folder:      -\n");
    expect((await event("checkout.completed")).folder).toBe("");

    const missing = await events.run(["update", "checkout.completed", "--remove-property", "nope", "--json"]);
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.stderr).error).toBe("--remove-property: checkout.completed has no property nope (it has: amount, plan, country)");
  });

  test("delete removes the catalog row (with --yes or in a script)", async () => {
    expect((await events.json(["create", "temp.event"])).name).toBe("temp.event");
    const deleted = await events.json(["delete", "temp.event"]);
    expect(deleted).toEqual({ name: "temp.event", deleted: true });
    expect((await ts.api("/api/admin/events/temp.event")).status).toBe(404);
    const gone = await events.run(["delete", "temp.event", "--yes"]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain("(NOT_FOUND, HTTP 404)");
  });

  test("usage mistakes exit 2 and send nothing", async () => {
    const before = (await ts.api("/api/admin/events")).body;
    await usageMistakes("events", [
      [["create", "x", "--property", "amount"], /--property must be NAME:TYPE\[:required\], e\.g\. --property amount:number:required \(got "amount"\)/],
      [["create", "x", "--property", "amount:date"], /the type must be one of string, number, boolean \(got "date"\)/],
      [["create", "x", "--property", "a:string,a:number"], /--property names a twice/],
      [["create"], /expected: svc events create <name>/],
      [["create", "x", "--colour", "red"], /Unknown option '--colour'/],
      [["update", "checkout.completed"], /nothing to change: give at least one of --folder, --description, --property, --remove-property/],
      [["update", "checkout.completed", "--property", "plan:string", "--remove-property", "plan"], /both name plan/],
      [["get"], /expected: svc events get <name>/],
      [["approve"], /expected: svc events approve <name>/],
      [["list", "extra"], /takes no arguments/],
    ]);
    const human = await events.run(["create", "x", "--property", "amount:date"]);
    expect(human.code).toBe(2);
    expect(human.stderr).toContain("svc events create: --property amount:date: the type must be one of");
    expect(human.stderr).toContain("svc help events create");
    expect((await ts.api("/api/admin/events")).body).toEqual(before);
    const page = await svc(box, ["help", "events"], { env });
    expect(page.code).toBe(0);
    for (const sub of ["list", "get <name>", "create <name>", "approve <name>", "update <name>", "delete <name>"]) expect(page.stdout).toContain(`svc events ${sub}`);
    expect((await svc(box, ["events", "create", "--help"], { env })).stdout).toMatch(/^\s+--property NAME:TYPE\[:required\]\s{2,}A property the event carries.*\(repeatable\)$/m);
  });
});

const HOUR = 3600;
/** The start of the hour three hours ago: a window of three whole hours with events in it. */
const H0 = Math.floor(Date.now() / 1000 / HOUR) * HOUR - 3 * HOUR;
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
const at = (seconds: number) => seconds * 1000;

describe("svc metrics", () => {
  const metrics = cli("metrics");
  const metric = async (name: string) => (await ts.api(`/api/admin/metrics/${name}`)).body;
  const window = ["--from", iso(H0), "--to", iso(H0 + 3 * HOUR), "--bucket", "1h"];

  beforeAll(async () => {
    for (const body of [
      { name: "order.paid", properties: [{ name: "amount", type: "number" }, { name: "country", type: "string" }, { name: "test", type: "boolean" }] },
      { name: "page.viewed" },
    ]) {
      expect((await ts.api("/api/admin/events", { body })).status).toBe(201);
    }
    const sent = await ingest([
      { name: "order.paid", unitId: "u1", ts: at(H0 + 60), properties: { amount: 10, country: "de", test: false } },
      { name: "order.paid", unitId: "u2", ts: at(H0 + 120), properties: { amount: 5, country: "fr", test: false } },
      { name: "order.paid", unitId: "u1", ts: at(H0 + 2 * HOUR + 10), properties: { amount: 20, country: "de", test: true } },
      { name: "page.viewed", unitId: "u1", ts: at(H0 + 30) },
      { name: "page.viewed", unitId: "u2", ts: at(H0 + 31) },
      { name: "page.viewed", unitId: "u3", ts: at(H0 + 32) },
      { name: "page.viewed", unitId: "u1", ts: at(H0 + 2 * HOUR + 5) },
    ]);
    expect(sent.status).toBe(202);
  });

  test("create each kind: --json is the API's record; filters and ratio parts read as written", async () => {
    const orders = await metrics.json(["create", "orders", "--kind", "count", "--event", "order.paid", "--description", "Paid orders"]);
    expect(orders).toEqual(await metric("orders"));
    expect(orders).toMatchObject({ name: "orders", kind: "count", event: "order.paid", property: null, filters: [], numerator: null, denominator: null, description: "Paid orders" });

    const revenue = await metrics.json(["create", "revenue-de", "--kind", "sum", "--event", "order.paid", "--property", "amount", "--filter", "country eq de", "--filter", "test != true"]);
    expect(revenue).toMatchObject({ kind: "sum", property: "amount", filters: [{ property: "country", op: "eq", value: "de" }, { property: "test", op: "neq", value: true }] });

    const human = await metrics.run(["create", "conversion", "--kind", "ratio", "--numerator", "unique order.paid", "--numerator-filter", "amount>=1", "--denominator", "unique page.viewed"]);
    expect(human.code).toBe(0);
    expect(human.stderr).toBe("");
    expect(human.stdout).toMatch(/^Created metric conversion \(met_\w+\): \(unique units of order\.paid where amount gte 1\) \/ \(unique units of page\.viewed\)\.$/m);
    expect(human.stdout).toContain("`svc metrics series conversion`");
    expect(await metric("conversion")).toMatchObject({
      kind: "ratio",
      event: null,
      numerator: { kind: "unique", event: "order.paid", property: null, filters: [{ property: "amount", op: "gte", value: 1 }] },
      denominator: { kind: "unique", event: "page.viewed", property: null, filters: [] },
    });

    // The server checks names against the catalog: exit 1, its message naming the field.
    const unknown = await metrics.run(["create", "ghost", "--kind", "count", "--event", "no.such.event", "--json"]);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr)).toMatchObject({ code: "VALIDATION", status: 400, detail: expect.stringContaining("event no.such.event is not in the event catalog") });
    const twice = await metrics.run(["create", "orders", "--kind", "count", "--event", "order.paid", "--json"]);
    expect(JSON.parse(twice.stderr)).toMatchObject({ code: "ALREADY_EXISTS", status: 409 });
  });

  test("list and get: a table of what each measures; get reads field by field", async () => {
    const listed = await metrics.json(["list"]);
    expect(listed).toEqual((await ts.api("/api/admin/metrics")).body);
    expect(listed.map((m: any) => m.name).sort()).toEqual(["conversion", "orders", "revenue-de"]);
    const table = await metrics.run(["list"]);
    expect(table.stdout).toMatch(/^NAME\s+KIND\s+MEASURES\s+DESCRIPTION$/m);
    expect(table.stdout).toMatch(/^orders\s+count\s+count of order\.paid\s+Paid orders$/m);
    expect(table.stdout).toMatch(/^revenue-de\s+sum\s+sum of order\.paid amount where country eq "de" and test neq true\s+-$/m);
    expect((await metrics.run(["list", "--query", "nothing"])).stdout.trim()).toBe('No metrics match "nothing".');

    const got = await metrics.json(["get", "orders"]);
    expect(await metrics.json(["get", got.id])).toEqual(got);
    const shown = await metrics.run(["get", "revenue-de"]);
    expect(shown.stdout).toMatch(/^revenue-de \(met_\w+\)$/m);
    expect(shown.stdout).toContain("  kind:        sum (a numeric property, or the event's value)\n");
    expect(shown.stdout).toContain('  measures:    sum of order.paid amount where country eq "de" and test neq true\n');
    expect(shown.stdout).toContain("  description: -\n");
    const missing = await metrics.run(["get", "nope"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("(NOT_FOUND, HTTP 404)");
  });

  test("series: --json is the server's {sql, rows}; people get a table of buckets and a sparkline", async () => {
    const raw = await metrics.json(["series", "orders", ...window]);
    expect(raw).toEqual((await ts.api("/api/admin/metrics/orders/series", { body: { from: H0, to: H0 + 3 * HOUR, bucket: HOUR } })).body);
    expect(raw.sql).toEqual(expect.any(String));
    expect(raw.rows).toEqual([
      { t: H0, v: 2 },
      { t: H0 + HOUR, v: 0 },
      { t: H0 + 2 * HOUR, v: 1 },
    ]);
    expect((await metrics.json(["series", "revenue-de", ...window])).rows.map((r: any) => r.v)).toEqual([10, 0, 0]);
    const ratio = (await metrics.json(["series", "conversion", ...window])).rows.map((r: any) => r.v);
    expect(ratio[0]).toBeCloseTo(2 / 3);
    expect(ratio.slice(1)).toEqual([0, 1]);

    const human = await metrics.run(["series", "orders", ...window]);
    expect(human.code).toBe(0);
    const day = (t: number) => iso(t).slice(0, 16).replace("T", " ");
    expect(human.stdout).toContain(`orders (count of order.paid): 3 buckets of 1h, ${day(H0)} to ${day(H0 + 3 * HOUR)} UTC\n`);
    expect(human.stdout).toMatch(/^BUCKET \(UTC\)\s+VALUE$/m);
    expect(human.stdout).toContain(`${day(H0)}  2\n${day(H0 + HOUR)}  0\n${day(H0 + 2 * HOUR)}  1\n`);
    expect(human.stdout).toContain("█▁▅  min 0, max 2, total 3");
    // A ratio's values are fractions, and adding them up means nothing.
    const conversion = await metrics.run(["series", "conversion", ...window]);
    expect(conversion.stdout).toContain(`${day(H0)}  0.6667\n`);
    expect(conversion.stdout).toMatch(/min 0, max 1$/m);

    // The default: the last 24 hours, hourly, the current hour last.
    const hourBefore = Math.floor(Date.now() / 1000 / HOUR) * HOUR;
    const last = await metrics.json(["series", "orders"]);
    expect(last.rows.length).toBe(24);
    // The current hour (the clock may just have turned).
    expect([hourBefore, Math.floor(Date.now() / 1000 / HOUR) * HOUR]).toContain(last.rows.at(-1).t);
    expect(last.rows.reduce((s: number, r: any) => s + r.v, 0)).toBe(3);
    // Back from now, daily: whole UTC days.
    const days = await metrics.json(["series", "orders", "--from", "2d", "--bucket", "1d"]);
    expect(days.rows.length).toBe(2);
    expect(days.rows.every((r: any) => r.t % 86_400 === 0)).toBe(true);
  });

  test("update changes only the flags given; a metric whose catalog entry changed answers 422 with how to fix it", async () => {
    const updated = await metrics.json(["update", "orders", "--filter", "test = false", "--description", ""]);
    expect(updated).toEqual(await metric("orders"));
    expect(updated).toMatchObject({ kind: "count", event: "order.paid", filters: [{ property: "test", op: "eq", value: false }], description: null });
    expect((await metrics.json(["update", "orders", "--clear-filters"])).filters).toEqual([]);
    const ratio = await metrics.json(["update", "conversion", "--numerator", "count order.paid"]);
    expect(ratio.numerator).toEqual({ kind: "count", event: "order.paid", property: null, filters: [] });
    expect(ratio.denominator).toMatchObject({ kind: "unique", event: "page.viewed" });
    const renamed = await metrics.run(["update", "orders", "--rename", "purchases"]);
    expect(renamed.code).toBe(0);
    expect(renamed.stdout).toContain("Updated metric purchases:\n  kind:        count (events)\n");
    expect((await metrics.json(["update", "purchases", "--kind", "unique", "--event", "order.paid", "--rename", "orders"]))).toMatchObject({ name: "orders", kind: "unique", event: "order.paid" });

    // The catalog loses the property a metric filters on: its series is 422, and the message says what to run.
    expect((await svc(box, ["events", "update", "order.paid", "--remove-property", "country"], { env })).code).toBe(0);
    const broken = await metrics.run(["series", "revenue-de", ...window]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain("Metric revenue-de cannot be compiled");
    expect(broken.stderr).toContain("(VALIDATION, HTTP 422)");
    expect(broken.stderr).toContain("`svc metrics update revenue-de`");
    expect((await svc(box, ["events", "update", "order.paid", "--property", "country:string"], { env })).code).toBe(0);
    expect((await metrics.json(["series", "revenue-de", ...window])).rows.map((r: any) => r.v)).toEqual([10, 0, 0]);

    // A filter that no longer fits the catalog is refused by the server, naming the field.
    const bad = await metrics.run(["update", "revenue-de", "--filter", "nope eq 1", "--json"]);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr)).toMatchObject({ code: "VALIDATION", detail: expect.stringContaining("filters[0].property") });
  });

  test("delete removes a metric", async () => {
    expect((await metrics.json(["create", "temp", "--kind", "count", "--event", "page.viewed"])).name).toBe("temp");
    expect(await metrics.json(["delete", "temp"])).toEqual({ name: "temp", deleted: true });
    expect((await ts.api("/api/admin/metrics/temp")).status).toBe(404);
  });

  test("usage mistakes exit 2 and send nothing", async () => {
    const before = (await ts.api("/api/admin/metrics")).body;
    await usageMistakes("metrics", [
      [["create", "x"], /^--kind is required: one of count, sum, unique, ratio$/],
      [["create", "x", "--kind", "avg"], /--kind must be one of count, sum, unique, ratio \(got "avg"\)/],
      [["create", "x", "--kind", "count"], /--event EVENT is required/],
      [["create", "x", "--kind", "ratio", "--numerator", "unique a"], /a ratio needs --numerator 'KIND EVENT \[PROPERTY\]' and --denominator/],
      [["create", "x", "--kind", "ratio", "--event", "a"], /a ratio takes --numerator and --denominator, not --event/],
      [["create", "x", "--kind", "count", "--event", "a", "--numerator", "unique a"], /--numerator is for --kind ratio only/],
      [["create", "x", "--kind", "count", "--event", "a", "--property", "p"], /--property is for --kind sum only/],
      [["create", "x", "--kind", "count", "--event", "a", "--filter", "country ~ de"], /unknown operator "~"/],
      [["create", "x", "--kind", "count", "--event", "a", "--filter", "amount gt ten"], /gt compares numbers, and "ten" is not one/],
      [["create", "x", "--kind", "count", "--event", "a", "--filter", "country"], /a property, an operator and a value are needed; write it as 'PROPERTY OP VALUE'/],
      [["create", "x", "--kind", "ratio", "--numerator", "avg a", "--denominator", "count b"], /--numerator must be 'KIND EVENT \[PROPERTY\]', KIND one of count, sum, unique/],
      [["create", "x", "--kind", "ratio", "--numerator", "unique a b", "--denominator", "count b"], /only a sum adds up a property/],
      [["create", "x", "--kind", "ratio", "--numerator-filter", "a = 1", "--denominator", "count b"], /--numerator-filter needs --numerator/],
      [["update", "orders"], /nothing to change/],
      [["update", "orders", "--filter", "a = 1", "--clear-filters"], /cannot both be given/],
      [["series", "orders", "--bucket", "0"], /--bucket must be a width such as 1h/],
      [["series", "orders", "--bucket", "hourly"], /--bucket must be a width such as 1h/],
      [["series", "orders", "--from", "yesterday"], /--from must be an ISO time \(2026-11-23T09:00Z\), epoch seconds, now, or a time back from now such as 24h or 7d \(got "yesterday"\)/],
      [["series", "orders", "--from", "2026-11-02", "--to", "2026-11-01"], /--to must be after --from \(got 2026-11-02T00:00:00Z to 2026-11-01T00:00:00Z\)/],
      [["series", "orders", "--from", "30d", "--bucket", "1m"], /that is \d+ buckets of 1m; at most 10000: widen --bucket or shorten --from\/--to/],
      [["series"], /expected: svc metrics series <name>/],
    ]);
    expect((await ts.api("/api/admin/metrics")).body).toEqual(before);
    const page = await svc(box, ["help", "metrics"], { env });
    for (const sub of ["list", "get <name>", "create <name>", "update <name>", "delete <name>", "series <name>"]) expect(page.stdout).toContain(`svc metrics ${sub}`);
  });
});

describe("time windows, filters and sparklines (in process)", () => {
  test("windowFlags: defaults and times back from now are whole buckets; ISO and epoch times are taken as given", async () => {
    const { windowFlags } = await import("../../src/modules/metrics/cli");
    const now = Date.UTC(2026, 10, 23, 13, 25) / 1000;
    const h = (hh: number, day = 23) => Date.UTC(2026, 10, day, hh) / 1000;
    expect(windowFlags({}, now)).toEqual({ from: h(14, 22), to: h(14), bucket: 3600 });
    expect(windowFlags({ from: "7d", bucket: "1d" }, now)).toEqual({ from: h(0, 17), to: h(0, 24), bucket: 86_400 });
    expect(windowFlags({ from: "6h", to: "now" }, now)).toEqual({ from: h(8), to: h(14), bucket: 3600 });
    expect(windowFlags({ from: "2026-11-23T10:30", bucket: "15m" }, now)).toEqual({ from: h(10) + 1800, to: h(13) + 1800, bucket: 900 });
    expect(windowFlags({ from: "2026-11-20", to: "2026-11-21 12:00", bucket: "1d" }, now)).toEqual({ from: h(0, 20), to: h(12, 21), bucket: 86_400 });
    expect(windowFlags({ to: String(h(6)) }, now)).toEqual({ from: h(6, 22), to: h(6), bucket: 3600 });
    expect(windowFlags({ from: "1h", bucket: "600" }, now)).toEqual({ from: h(12) + 1800, to: h(13) + 1800, bucket: 600 });
  });

  test("filterOf reads words and symbols; sparkline spans 0 to the largest value", async () => {
    const { filterOf, sparkline } = await import("../../src/modules/metrics/cli");
    expect(filterOf("country eq de", "filter")).toEqual({ property: "country", op: "eq", value: "de" });
    expect(filterOf("amount>=10.5", "filter")).toEqual({ property: "amount", op: "gte", value: 10.5 });
    expect(filterOf('plan != "42"', "filter")).toEqual({ property: "plan", op: "neq", value: "42" });
    expect(filterOf("beta = true", "filter")).toEqual({ property: "beta", op: "eq", value: true });
    expect(filterOf("city eq New York", "filter")).toEqual({ property: "city", op: "eq", value: "New York" });
    expect(sparkline([0, 1, 2, 3, 4, 5, 6, 7])).toBe("▁▂▃▄▅▆▇█");
    expect(sparkline([0, 0, 0])).toBe("▁▁▁");
    expect(sparkline(Array.from({ length: 1000 }, (_, i) => i)).length).toBeLessThanOrEqual(120);
  });
});

describe("svc errors", () => {
  const errors = cli("errors");
  const report = (items: unknown[]) => ts.api("/api/sdk/v1/errors", { body: { errors: items }, key: ts.serverKey });
  const stack = "TypeError: Cannot read properties of undefined (reading 'total')\n    at chargeCard (/srv/app/lib/checkout.js:42:17)\n    at handleCheckout (/srv/app/routes/checkout.js:18:5)";
  let timeout: any;
  let typeError: any;

  beforeAll(async () => {
    const sent = await report([
      { message: "Payment provider timed out after 30000 ms", type: "TimeoutError", fingerprint: "payment-timeout", unitId: "u1", ts: at(H0 + 10) },
      { message: "Payment provider timed out after 30000 ms", type: "TimeoutError", fingerprint: "payment-timeout", unitId: "u2", ts: at(H0 + 20) },
      { message: "Payment provider timed out after 30000 ms", type: "TimeoutError", fingerprint: "payment-timeout", unitId: "u1", ts: at(H0 + 2 * HOUR + 1) },
      { message: "Cannot read properties of undefined (reading 'total')", type: "TypeError", stack, unitId: "u3", ts: at(H0 + 100) },
    ]);
    expect(sent.status).toBe(202);
    const all = (await ts.api("/api/admin/errors")).body as any[];
    timeout = all.find((e) => e.type === "TimeoutError");
    typeError = all.find((e) => e.type === "TypeError");
  });

  test("list and get: --json is the API's answer; people get a table, most recently seen first, and a record", async () => {
    const listed = await errors.json(["list"]);
    expect(listed).toEqual((await ts.api("/api/admin/errors")).body);
    expect(listed.map((e: any) => e.type)).toEqual(["TimeoutError", "TypeError"]);
    expect((await errors.json(["list", "--query", "PROPERTIES"])).map((e: any) => e.id)).toEqual([typeError.id]);
    expect(await errors.json(["list", "--status", "resolved"])).toEqual([]);

    const table = await errors.run(["list"]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^ID\s+STATUS\s+COUNT\s+UNITS\s+LAST SEEN\s+ERROR$/m);
    expect(table.stdout).toMatch(new RegExp(`^${timeout.id}\\s+unresolved\\s+3\\s+2\\s+\\S+ \\S+\\s+TimeoutError: Payment provider timed out after 30000 ms$`, "m"));
    expect(table.stdout).toMatch(new RegExp(`^${typeError.id}\\s+unresolved\\s+1\\s+1\\s+\\S+ \\S+\\s+TypeError: Cannot read properties of undefined \\(reading 'total'\\)$`, "m"));
    expect((await errors.run(["list", "--status", "ignored"])).stdout.trim()).toBe("No ignored errors.");
    expect((await errors.run(["list", "--status", "ignored", "--query", "x"])).stdout.trim()).toBe('No ignored errors match "x".');

    // --json is the API's answer: the error as listed, plus every kept occurrence with its frames (issue 27, item 2).
    const got = await errors.json(["get", typeError.id.slice(0, 10)]);
    expect(got).toEqual((await ts.api(`/api/admin/errors/${typeError.id}`)).body);
    const { occurrences, ...listedPart } = got;
    expect(listedPart).toEqual(typeError);
    expect(occurrences).toHaveLength(1);
    expect(occurrences[0]).toMatchObject({ unitId: "u3", kept: "recent", frames: [{ function: "chargeCard", filename: "/srv/app/lib/checkout.js", lineno: 42, colno: 17, inApp: true }, { function: "handleCheckout" }] });
    expect(await errors.json(["get", timeout.fingerprint])).toMatchObject({ id: timeout.id });
    const shown = await errors.run(["get", typeError.id]);
    expect(shown.stdout).toContain(`${typeError.id}: TypeError: Cannot read properties of undefined (reading 'total')\n`);
    expect(shown.stdout).toContain("  status:      unresolved\n");
    expect(shown.stdout).toContain("  culprit:     chargeCard (/srv/app/lib/checkout.js:42)\n");
    expect(shown.stdout).toContain("  occurrences: 1\n  units:       1\n");
    expect(shown.stdout).toContain(`  fingerprint: ${typeError.fingerprint}\n`);
    // People get the latest occurrence's top in-app frames.
    expect(shown.stdout).toMatch(/^ {2}latest: {6}\S+ \S+, unit u3$/m);
    expect(shown.stdout).toContain("  in-app frames of the latest occurrence, innermost first:\n    at chargeCard (/srv/app/lib/checkout.js:42:17)\n    at handleCheckout (/srv/app/routes/checkout.js:18:5)\n");
    const missing = await errors.run(["get", "err_nope", "--json"]);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toMatchObject({ code: "NOT_FOUND", status: 404 });
  });

  test("resolve, ignore and reopen set the status; a resolved error that happens again is regressed", async () => {
    const resolved = await errors.json(["resolve", timeout.id]);
    expect(resolved).toEqual((await ts.api(`/api/admin/errors/${timeout.id}`)).body);
    expect(resolved).toMatchObject({ status: "resolved", statusChangedBy: expect.any(String) });
    expect((await errors.json(["list", "--status", "resolved"])).map((e: any) => e.id)).toEqual([timeout.id]);
    expect((await report([{ message: "Payment provider timed out after 31000 ms", type: "TimeoutError", fingerprint: "payment-timeout" }])).status).toBe(202);
    const regressed = await errors.run(["list", "--status", "regressed"]);
    expect(regressed.stdout).toMatch(new RegExp(`^${timeout.id}\\s+regressed\\s+4\\s`, "m"));
    expect((await errors.run(["get", timeout.id])).stdout).toMatch(/^ {2}status: {6}regressed \(since \S+ \S+ by system@svc\.local\)$/m);

    const ignored = await errors.run(["ignore", timeout.id]);
    expect(ignored.code).toBe(0);
    expect(ignored.stdout.trim()).toBe(`Ignored ${timeout.id} (TimeoutError: Payment provider timed out after 31000 ms): it is ignored now.`);
    const reopened = await errors.run(["reopen", timeout.fingerprint]);
    expect(reopened.stdout.trim()).toBe(`Reopened ${timeout.id} (TimeoutError: Payment provider timed out after 31000 ms): it is unresolved now.`);
    expect((await ts.api(`/api/admin/errors/${timeout.id}`)).body.status).toBe("unresolved");
  });

  test("series: --json is the server's {sql, rows}; people get the occurrences per bucket and a sparkline", async () => {
    const raw = await errors.json(["series", typeError.id, ...["--from", iso(H0), "--to", iso(H0 + 3 * HOUR), "--bucket", "1h"]]);
    expect(raw).toEqual((await ts.api(`/api/admin/errors/${typeError.id}/series`, { body: { from: H0, to: H0 + 3 * HOUR, bucket: HOUR } })).body);
    expect(raw.rows.map((r: any) => r.v)).toEqual([1, 0, 0]);
    const human = await errors.run(["series", timeout.fingerprint, "--from", iso(H0), "--to", iso(H0 + 3 * HOUR), "--bucket", "1h"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`${timeout.id} (TimeoutError: Payment provider timed out after 31000 ms): 3 buckets of 1h`);
    expect(human.stdout).toContain("█▁▅  min 0, max 2, total 3");
    // The default window, the last 24 hours, holds every occurrence: the one sent without a time, too.
    expect((await errors.json(["series", timeout.id])).rows.reduce((s: number, r: any) => s + r.v, 0)).toBe(4);
  });

  test("usage mistakes exit 2 and send nothing", async () => {
    await usageMistakes("errors", [
      [["list", "--status", "open"], /--status must be one of unresolved, resolved, ignored, regressed \(got "open"\)/],
      [["get"], /expected: svc errors get <id>/],
      [["resolve"], /expected: svc errors resolve <id>/],
      [["resolve", "a", "b"], /expected: svc errors resolve <id>/],
      [["ignore", "a", "--status", "ignored"], /Unknown option '--status'/],
      [["series", timeout.id, "--bucket", "1y"], /--bucket must be a width such as 1h/],
      [["series", timeout.id, "--to", "tomorrow"], /--to must be an ISO time/],
    ]);
    expect((await ts.api(`/api/admin/errors/${timeout.id}`)).body.status).toBe("unresolved");
    const page = await svc(box, ["help", "errors"], { env });
    for (const sub of ["list", "get <id>", "resolve <id>", "ignore <id>", "reopen <id>", "series <id>"]) expect(page.stdout).toContain(`svc errors ${sub}`);
  });
});

describe("svc alerts", () => {
  const alerts = cli("alerts");
  const rule = async (name: string) => (await ts.api(`/api/admin/alert-rules/${name}`)).body;
  let ticks: any;

  beforeAll(async () => {
    expect((await ts.api("/api/admin/events", { body: { name: "alert.tick" } })).status).toBe(201);
    ticks = (await ts.api("/api/admin/metrics", { body: { name: "ticks", kind: "count", event: "alert.tick" } })).body;
    expect(ticks.id).toMatch(/^met_/);
  });

  test("create: --json is the API's answer; comparators as words or symbols, windows in hours or days", async () => {
    const created = await alerts.json(["create", "ticks-high", "--metric", "ticks", "--comparator", "gt", "--threshold", "50"]);
    expect(created).toEqual({ id: expect.stringMatching(/^ar_/), name: "ticks-high" });
    expect(await rule("ticks-high")).toMatchObject({ metricId: ticks.id, comparator: "gt", threshold: 50, windowHours: 1, enabled: true, notify: null, state: "ok" });

    const human = await alerts.run(["create", "ticks-low", "--metric", ticks.id, "--comparator", "<", "--threshold", "0.5", "--window", "2d", "--disabled", "--webhook", "https://hooks.example.com/alerts"]);
    expect(human.code).toBe(0);
    expect(human.stderr).toBe("");
    expect(human.stdout.trim()).toMatch(new RegExp(`^Created alert rule ticks-low \\(ar_\\w+\\): fires when ${ticks.id} < 0\\.5 over 2d; disabled\\.$`));
    expect(await rule("ticks-low")).toMatchObject({ comparator: "lt", threshold: 0.5, windowHours: 48, enabled: false, notify: { webhookUrl: "https://hooks.example.com/alerts" } });

    const twice = await alerts.run(["create", "ticks-high", "--metric", "ticks", "--comparator", "gt", "--threshold", "1", "--json"]);
    expect(twice.code).toBe(1);
    expect(JSON.parse(twice.stderr)).toMatchObject({ code: "ALREADY_EXISTS", status: 409 });
    const noMetric = await alerts.run(["create", "ghost", "--metric", "no-such-metric", "--comparator", "gt", "--threshold", "1", "--json"]);
    expect(noMetric.code).toBe(1);
    expect(JSON.parse(noMetric.stderr)).toMatchObject({ code: "NOT_FOUND", status: 404, detail: expect.stringContaining("metricId") });
  });

  test("list and get show the condition with the metric's name, the state and the last value", async () => {
    const listed = await alerts.json(["list"]);
    expect(listed).toEqual((await ts.api("/api/admin/alert-rules")).body);
    expect(listed.map((r: any) => r.name).sort()).toEqual(["ticks-high", "ticks-low"]);
    const table = await alerts.run(["list"]);
    expect(table.stdout).toMatch(/^NAME\s+FIRES WHEN\s+STATE\s+LAST VALUE\s+LAST CHECKED$/m);
    expect(table.stdout).toMatch(/^ticks-high\s+ticks > 50 over 1h\s+ok\s+-\s+-$/m);
    expect(table.stdout).toMatch(/^ticks-low\s+ticks < 0\.5 over 2d\s+disabled\s+-\s+-$/m);
    expect((await alerts.run(["list", "--query", "nothing"])).stdout.trim()).toBe('No alert rules match "nothing".');

    const got = await alerts.json(["get", "ticks-low"]);
    expect(got).toEqual(await rule("ticks-low"));
    expect(await alerts.json(["get", got.id])).toEqual(got);
    const shown = await alerts.run(["get", "ticks-low"]);
    expect(shown.stdout).toContain(`ticks-low (${got.id})\n`);
    expect(shown.stdout).toContain("  fires when:   ticks < 0.5 over 2d (checked every minute)\n");
    expect(shown.stdout).toContain(`  metric:       ticks (${ticks.id})\n`);
    expect(shown.stdout).toContain("  state:        disabled\n");
    expect(shown.stdout).toContain("  last value:   - (not checked yet)\n");
    expect(shown.stdout).toContain("  notifies:     webhook https://hooks.example.com/alerts\n");
  });

  test("update changes only the flags given and prints the rule as it is now", async () => {
    const updated = await alerts.json(["update", "ticks-low", "--enable", "--threshold", "2", "--comparator", "lte", "--notify-default"]);
    expect(updated).toEqual(await rule("ticks-low"));
    expect(updated).toMatchObject({ enabled: true, threshold: 2, comparator: "lte", windowHours: 48, notify: null });
    const human = await alerts.run(["update", "ticks-low", "--window", "12", "--disable"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("Updated alert rule ticks-low:\n  fires when:   ticks <= 2 over 12h (checked every minute)\n");
    expect(human.stdout).toContain("  state:        disabled\n");
    expect(await rule("ticks-low")).toMatchObject({ windowHours: 12, enabled: false });
    const missing = await alerts.run(["update", "nope", "--enable", "--json"]);
    expect(JSON.parse(missing.stderr)).toMatchObject({ code: "NOT_FOUND", status: 404 });
  });

  test("delete sends nothing: it says the dashboard deletes rules, and how to stop one from here", async () => {
    const r = await alerts.run(["delete", "ticks-high"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("svc alerts delete: alert rules are deleted in the dashboard only; ticks-high was not deleted (nothing was sent)");
    expect(r.stderr).toContain(`hint: sign in to the dashboard at ${ts.url} and delete ticks-high there, or stop it now with \`svc alerts update ticks-high --disable\`.`);
    const json = await alerts.run(["delete", "ticks-high", "--json"]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr)).toMatchObject({ code: "DASHBOARD_ONLY" });
    expect((await ts.api("/api/admin/alert-rules/ticks-high")).status).toBe(200);
    // A metric a rule watches cannot be deleted either: the server names the rules.
    const metric = await svc(box, ["metrics", "delete", "ticks", "--json"], { env });
    expect(metric.code).toBe(1);
    expect(JSON.parse(metric.stderr)).toMatchObject({ code: "VALIDATION" });
  });

  test("usage mistakes exit 2 and send nothing", async () => {
    const before = (await ts.api("/api/admin/alert-rules")).body;
    await usageMistakes("alerts", [
      [["create", "x"], /--metric METRIC, --comparator gt\|gte\|lt\|lte, --threshold N are required/],
      [["create", "x", "--metric", "ticks", "--comparator", "gt"], /^--threshold N is required/],
      [["create", "x", "--metric", "ticks", "--comparator", "eq", "--threshold", "1"], /--comparator must be one of gt, gte, lt, lte \(or > >= < <=\) \(got "eq"\)/],
      [["create", "x", "--metric", "ticks", "--comparator", "gt", "--threshold", "many"], /--threshold must be a number/],
      [["create", "x", "--metric", "ticks", "--comparator", "gt", "--threshold", "1", "--window", "90m"], /--window must be whole hours from 1h to 720h/],
      [["create", "x", "--metric", "ticks", "--comparator", "gt", "--threshold", "1", "--window", "31d"], /--window must be whole hours/],
      [["create", "x", "--metric", "ticks", "--comparator", "gt", "--threshold", "1", "--webhook", "hooks.example.com"], /--webhook must be an http\(s\) URL/],
      [["update", "ticks-high"], /nothing to change/],
      [["update", "ticks-high", "--enable", "--disable"], /--enable and --disable cannot both be given/],
      [["update", "ticks-high", "--metric", "other"], /an alert rule's metric never changes: create a new rule/],
      [["delete"], /expected: svc alerts delete <name>/],
    ]);
    expect((await ts.api("/api/admin/alert-rules")).body).toEqual(before);
    const page = await svc(box, ["help", "alerts"], { env });
    for (const sub of ["list", "get <name>", "create <name>", "update <name>", "delete <name>"]) expect(page.stdout).toContain(`svc alerts ${sub}`);
  });
});
