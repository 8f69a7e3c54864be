// One file past 400 lines: the payload, the 10,000-context differential, remote evaluation and the stream share one server and its published flags.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { GrowthBook, clearCache, configureCache, setPolyfills } from "@growthbook/growthbook";
import { type Client, createClient, readEventStream } from "../../src/sdk";
import { evaluateAll } from "../../src/modules/delivery/ofrep";
import type { Snapshot } from "../../src/modules/delivery/snapshot";
import { GATE_RULES_PREFIX, mapSnapshot } from "../../src/modules/growthbook/mapping";
import { type TestServer, expectErrorShape, startTestServer } from "../helpers";
import { seededRandom } from "../seeded-random";

// GrowthBook's SDK protocol (issue 28, part 2): the real @growthbook/growthbook SDK loads svc's payload from
// the server and answers, for 10,000 random contexts, what svc's own SDK and OFREP answer.

let ts: TestServer;
let pricing: { id: string; name: string };
let nav: { id: string; name: string };
const clients: Client[] = [];

const GATES: Record<string, unknown[]> = {
  beta: [
    { conditions: [{ attr: "email", op: "ends_with", value: "@example.com" }], passPercentage: 100 },
    { conditions: [{ attr: "country", op: "in", value: ["DE", "FR", 7] }], passPercentage: 30 },
    { conditions: [{ attr: "plan", op: "neq", value: "free" }, { attr: "plan", op: "exists" }], passPercentage: 15 },
  ],
  "text-ops": [
    { conditions: [{ attr: "email", op: "contains", value: "+test" }], passPercentage: 100 },
    { conditions: [{ attr: "name", op: "starts_with", value: "Dr. " }], passPercentage: 50 },
    { conditions: [{ attr: "email", op: "regex", value: "^[a-c][a-z0-9.]*@corp\\.io$" }], passPercentage: 100 },
    { conditions: [{ attr: "plan", op: "eq", value: "pro" }], passPercentage: 100 },
    { conditions: [{ attr: "plan", op: "not_in", value: ["free", "pro", "team"] }, { attr: "nickname", op: "not_exists" }], passPercentage: 40 },
    { conditions: [{ attr: "vip", op: "eq", value: true }], passPercentage: 100 },
    { conditions: [{ attr: "name", op: "regex", value: "(?i)^zed" }], passPercentage: 100 },
  ],
  "number-ops": [
    { conditions: [{ attr: "age", op: "gte", value: 65 }], passPercentage: 100 },
    { conditions: [{ attr: "age", op: "lt", value: 18 }], passPercentage: 0 },
    { conditions: [{ attr: "age", op: "gt", value: 30 }, { attr: "age", op: "lte", value: 40 }], passPercentage: 60 },
    { conditions: [{ attr: "level", op: "eq", value: 3 }], passPercentage: 100 },
    { conditions: [{ attr: "level", op: "in", value: [5, "6"] }], passPercentage: 100 },
    { conditions: [{ attr: "level", op: "neq", value: 10 }, { attr: "level", op: "exists" }], passPercentage: 20, unit: "account_id" },
  ],
  "version-date-ops": [
    { conditions: [{ attr: "app_version", op: "semver_gte", value: "2.0.0" }, { attr: "app_version", op: "semver_lt", value: "3.0.0-beta.2" }], passPercentage: 100 },
    { conditions: [{ attr: "app_version", op: "semver_eq", value: "1.4.2" }], passPercentage: 100 },
    { conditions: [{ attr: "app_version", op: "semver_gt", value: "1.9.0" }], passPercentage: 50 },
    { conditions: [{ attr: "app_version", op: "semver_lte", value: "1.0.0" }], passPercentage: 25 },
    { conditions: [{ attr: "signup", op: "before", value: "2024-03-01T12:30:00.500Z" }], passPercentage: 70 },
    { conditions: [{ attr: "signup", op: "after", value: "2025-06-15" }], passPercentage: 100 },
  ],
  chain: [
    { conditions: [{ attr: "x", op: "passes_gate", value: "beta" }, { attr: "x", op: "fails_gate", value: "text-ops" }], passPercentage: 50, unit: "account_id" },
    { conditions: [{ attr: "x", op: "passes_gate", value: "number-ops" }], passPercentage: 100 },
  ],
  // Segments (issue 29): an id list (a saved group), conditions (inlined), both (`$or`), on user_id and another attribute.
  segments: [
    { conditions: [{ attr: "user_id", op: "in_segment", value: "gb-members" }, { attr: "user_id", op: "not_in_segment", value: "gb-staff" }], passPercentage: 100 },
    { conditions: [{ attr: "team", op: "in_segment", value: "gb-teams" }], passPercentage: 50, unit: "account_id" },
    { conditions: [{ attr: "email", op: "in_segment", value: "gb-staff" }, { attr: "user_id", op: "not_in_segment", value: "gb-members" }], passPercentage: 100 },
  ],
};

/** Members of the segment gb-members: some as text, some as numbers' text (a number attribute matches them). */
const MEMBERS = [...Array.from({ length: 40 }, (_, i) => `m-${i}`), "7", "1007", "1e+21"];
const SEGMENTS = [
  { name: "gb-members", ids: MEMBERS },
  { name: "gb-staff", conditions: [{ attr: "email", op: "ends_with", value: "@corp.io" }, { attr: "plan", op: "in", value: ["pro", "team"] }] },
  { name: "gb-teams", attribute: "team", ids: ["t-1", "t-2", "3"], conditions: [{ attr: "country", op: "eq", value: "DE" }] },
];

beforeAll(async () => {
  ts = await startTestServer({ experimentsEveryMs: 0, alertsEveryMs: 0 });
  const scoped = { "x-project-id": ts.projectId };
  for (const body of SEGMENTS) expect((await ts.api("/api/admin/segments", { body })).status).toBe(201);
  for (const [name, rules] of Object.entries(GATES)) expect((await ts.api("/api/admin/gates", { body: { name, rules } })).status).toBe(201);
  expect((await ts.api("/api/admin/killswitches", { body: { name: "checkout", value: false, switches: { eu: true, us: false } } })).status).toBe(201);
  expect((await ts.api("/api/admin/killswitches", { body: { name: "search", value: true } })).status).toBe(201);
  expect((await ts.api("/api/admin/configs", { body: { name: "pricing", schema: { type: "object" }, value: { plan: "monthly" } } })).status).toBe(201);
  expect((await ts.api("/api/admin/configs", { body: { name: "banner", schema: { type: "string" }, value: "hello" } })).status).toBe(201);
  expect((await ts.api("/api/admin/universes", { body: { name: "web", holdout_range: [0, 500] }, headers: scoped })).status).toBe(201);
  expect((await ts.api("/api/admin/universes", { body: { name: "accounts", unit_type: "account_id" }, headers: scoped })).status).toBe(201);
  const p = await ts.api("/api/admin/experiments", {
    body: {
      name: "pricing-test",
      universe: "web",
      gate: "beta",
      variants: [
        { key: "control", weight: 34, value: "monthly" },
        { key: "annual", weight: 33, value: "annual", override: { kind: "config", name: "pricing", value: { plan: "annual" } } },
        { key: "lifetime", weight: 33, value: "lifetime" },
      ],
      allocation: [500, 8500],
    },
  });
  expect([p.status, p.text]).toEqual([201, expect.any(String)]);
  pricing = p.body;
  const n = await ts.api("/api/admin/experiments", {
    body: {
      name: "nav-test",
      universe: "accounts",
      variants: [
        { key: "control", weight: 50, value: false },
        { key: "on", weight: 50, value: true, override: { kind: "gate", name: "text-ops", value: true } },
      ],
      allocation: [2000, 9000],
    },
  });
  expect(n.status).toBe(201);
  nav = n.body;
  for (const e of [pricing, nav]) expect((await ts.api(`/api/admin/experiments/${e.id}/start`, { method: "POST" })).status).toBe(200);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await ts.stop();
});

const features = (key = ts.serverKey, init: RequestInit & { query?: string } = {}) => fetch(`${ts.url}/api/features/${key}${init.query ?? ""}`, init);

/**
 * A random context over the attributes the gates read, in the forms clients send (text, numbers, versions, dates).
 * `members: false` leaves out the segment members' pool, whose ids repeat (GrowthBook tracks a unit's assignment once).
 */
function contextOf(random: () => number, options: { members?: boolean } = {}): Record<string, unknown> {
  const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)]!;
  const maybe = <T>(value: () => T, p = 0.85): T | undefined => (random() < p ? value() : undefined);
  const context: Record<string, unknown> = {
    user_id: random() < 0.05 ? 1 + Math.floor(random() * 1_000_000) : options.members !== false && random() < 0.2 ? pick<unknown>([...MEMBERS, 7, 1007, 1e21, "07", "m-40"]) : maybe(() => `u-${Math.floor(random() * 1e9).toString(36)}`, 0.95),
    account_id: maybe(() => `acc-${Math.floor(random() * 1e6)}`),
    email: maybe(() => pick(["ann@example.com", "a.b@corp.io", "bob+test@x.com", "zz@corp.io", "c1@corp.io", "dave@Example.com", "eve@corp.io.evil", "x@y.z"])),
    country: maybe(() => pick<unknown>(["DE", "FR", "US", 7, "7", "de", "7.0"])),
    plan: maybe(() => pick<unknown>(["free", "pro", "team", "enterprise", "PRO", 3])),
    nickname: maybe(() => "nick", 0.3),
    name: maybe(() => pick(["Dr. Who", "Zed", "zed alpha", "Mr. X", "dr. no"])),
    vip: maybe(() => pick<unknown>([true, false, "true", "false", 1]), 0.5),
    age: maybe(() => pick<unknown>([Math.floor(random() * 90), String(Math.floor(random() * 90)), ` ${Math.floor(random() * 90)} `, `${Math.floor(random() * 90)}.0`, "abc", null, 65, 40, 30, 18, "65"])),
    level: maybe(() => pick<unknown>([Math.floor(random() * 12), "6", "3", "3.0", 10, "10", "ten"])),
    app_version: maybe(() => pick(["1.4.2", "v1.4.2", "1.4.2+build.7", "2.0.0", "2.5.1", "3.0.0-beta.1", "3.0.0-beta.10", "3.0.0-beta.2", "3.0.0-alpha", "3.0.0", "1.0.0", "0.9.9", "1.9.1", "1.10.0", "banana"])),
    signup: maybe(() =>
      pick<unknown>([
        "2024-03-01T12:30:00Z",
        "2024-03-01T12:30:01Z",
        "2024-03-01T12:30:00.500Z",
        "2024-03-01T12:30:00.499Z",
        "2024-03-01",
        "2024-03-02",
        "2025-06-15",
        "2025-06-16",
        "2025-06-15T00:00:00Z",
        "2025-06-15T00:00:00.001Z",
        Date.UTC(2024, 2, 1, 12, 30, 0, 499),
        Date.UTC(2024, 2, 1, 12, 30, 0, 500),
        Date.UTC(2025, 5, 15, 0, 0, 0, 1),
        new Date(Date.UTC(2020, 0, 1) + random() * 2e11).toISOString(),
        new Date(Date.UTC(2020, 0, 1) + random() * 2e11).toISOString().slice(0, 10),
      ]),
    ),
    team: maybe(() => pick<unknown>(["t-1", "t-2", "t-9", 3, "3", "03", ["t-1"], true, "T-1"]), 0.6),
  };
  for (const key of Object.keys(context)) if (context[key] === undefined) delete context[key];
  return context;
}

/** The value a config default of the same kind gives back (the SDK answers the default for a value of another kind). */
const sameKind = (value: unknown) => (Array.isArray(value) ? [] : typeof value === "object" && value !== null ? {} : typeof value === "string" ? "" : typeof value === "number" ? 0 : false);

describe("GET /api/features/{key}", () => {
  test("answers every killswitch, sub-switch, gate, config and experiment with a strong ETag; If-None-Match is 304; headers as GrowthBook SDKs need", async () => {
    const res = await features();
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.status).toBe(200);
    expect(typeof body.dateUpdated).toBe("string");
    expect(Object.keys(body.features).filter((k) => !k.startsWith(GATE_RULES_PREFIX)).sort()).toEqual(
      ["banner", "chain", "checkout", "checkout/eu", "checkout/us", "number-ops", "pricing", "pricing-test", "nav-test", "search", "segments", "text-ops", "version-date-ops", "beta"].sort(),
    );
    // The id lists the rules name, once each, as saved groups (an id a number prints as, as that number too).
    expect(body.savedGroups).toEqual({ "gb-members": [...MEMBERS, 7, 1007, 1e21], "gb-teams": ["t-1", "t-2", "3", 3] });
    expect(body.features.segments.rules[0].condition).toEqual({ $and: [{ user_id: { $inGroup: "gb-members", $not: { $type: "array" } } }, { $not: { $and: expect.any(Array) } }] });
    expect(body.features.checkout).toEqual({ defaultValue: false });
    expect(body.features["checkout/eu"]).toEqual({ defaultValue: true });
    expect(body.features.banner).toEqual({ defaultValue: "hello" });
    const rule = body.features["pricing-test"].rules[0];
    expect(rule).toMatchObject({ key: "pricing-test", name: pricing.id, hashVersion: 2, hashAttribute: "user_id", variations: ["monthly", "annual", "lifetime"] });
    expect(rule.meta.map((m: { key: string }) => m.key)).toEqual(["control", "annual", "lifetime"]);
    expect(res.headers.get("x-sse-support")).toBe("enabled");
    expect(res.headers.get("content-type")).toBe("application/json");
    const snapshot = await ts.api("/api/sdk/v1/snapshot", { key: ts.serverKey });
    const etag = res.headers.get("etag")!;
    expect(etag).toBe(`${snapshot.headers.get("etag")!.slice(0, -1)}-gb"`);
    const again = await features(ts.serverKey, { headers: { "if-none-match": etag } });
    expect([again.status, await again.text(), again.headers.get("etag")]).toEqual([304, "", etag]);
    // Gzip for clients that take it, the same bytes.
    const zipped = await features(ts.serverKey, { headers: { "accept-encoding": "gzip" }, decompress: false } as RequestInit);
    expect(zipped.headers.get("content-encoding")).toBe("gzip");
    expect(JSON.parse(new TextDecoder().decode(Bun.gunzipSync(new Uint8Array(await zipped.arrayBuffer()))))).toEqual(body);
    // `env` picks the env; dev has what create published there (experiments run on prod only).
    const dev = (await (await features(ts.serverKey, { query: "?env=dev" })).json()) as any;
    expect(dev.features["pricing-test"]).toBeUndefined();
    expect(dev.features.beta).toEqual(body.features.beta);
  });

  test("the tag moves with a publish; the next 200 carries it", async () => {
    const before = (await features()).headers.get("etag")!;
    expect((await ts.api("/api/admin/killswitches/search/toggle", { body: {} })).status).toBe(200);
    const after = await features(ts.serverKey, { headers: { "if-none-match": before } });
    expect(after.status).toBe(200);
    expect(((await after.json()) as any).features.search).toEqual({ defaultValue: false });
    expect((await ts.api("/api/admin/killswitches/search/toggle", { body: {} })).status).toBe(200);
  });

  test("a wrong or unknown key gets the SDK paths' errors; a browser Origin gets CORS headers", async () => {
    const unknown = await features("sdk_server_nope");
    expect(unknown.status).toBe(401);
    expect(expectErrorShape(await unknown.json()).code).toBe("UNAUTHORIZED");
    const admin = await features(ts.adminKey);
    expect(admin.status).toBe(403);
    expect(expectErrorShape(await admin.json()).code).toBe("FORBIDDEN");
    const client = await features(ts.clientKey);
    expect(client.status).toBe(403);
    const badEnv = await features(ts.serverKey, { query: "?env=qa" });
    expect(badEnv.status).toBe(400);
    expect(expectErrorShape(await badEnv.json()).code).toBe("VALIDATION");
    const browser = await features(ts.serverKey, { headers: { origin: "https://app.example.com" } });
    expect(browser.status).toBe(200);
    expect(browser.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(browser.headers.get("access-control-expose-headers")).toContain("X-SSE-Support");
    const preflight = await fetch(`${ts.url}/api/features/${ts.serverKey}`, { method: "OPTIONS", headers: { origin: "https://app.example.com", "access-control-request-method": "GET" } });
    expect(preflight.status).toBe(204);
  });
});

test("a prepared payload (200 or 304) is answered without touching the database, by the fast path and by the Elysia route", async () => {
  // Its own server: the store is closed under it.
  const own = await startTestServer();
  try {
    const first = await fetch(`${own.url}/api/features/${own.serverKey}`);
    const text = await first.text();
    const etag = first.headers.get("etag")!;
    await own.server.store.close();
    const fast = await fetch(`${own.url}/api/features/${own.serverKey}`, { headers: { "if-none-match": etag } });
    expect([fast.status, fast.headers.get("etag"), fast.headers.get("x-sse-support")]).toEqual([304, etag, "enabled"]);
    // With an Origin the request takes the Elysia route: the same holds there.
    const routed = await fetch(`${own.url}/api/features/${own.serverKey}`, { headers: { "if-none-match": etag, origin: "https://app.test" } });
    expect(routed.status).toBe(304);
    const full = await fetch(`${own.url}/api/features/${own.serverKey}?env=prod`);
    expect([full.status, await full.text()]).toEqual([200, text]);
  } finally {
    await own.stop().catch(() => {});
  }
});

test("request logs never show the key GrowthBook SDKs put in the path", async () => {
  const lines: { path?: string }[] = [];
  const own = await startTestServer({ logRequests: true, quiet: false, logSink: (line) => void lines.push(JSON.parse(line)) });
  try {
    for (const path of [`/api/features/${own.adminKey}`, `/sub/${own.adminKey}`, "/api/features/sdk_server_guess?env=qa"]) expect((await fetch(own.url + path)).status).toBeGreaterThanOrEqual(400);
    const ours = () => lines.filter((l) => typeof l.path === "string" && /^\/(api\/features|sub)\//.test(l.path));
    // A request's line is written after its answer is sent.
    for (const deadline = Date.now() + 5000; ours().length < 3 && Date.now() < deadline; ) await Bun.sleep(20);
    const logged = ours();
    expect(logged.length).toBe(3);
    for (const line of logged) expect(line.path).toMatch(/^\/(api\/features|sub)\/…$/);
    expect(JSON.stringify(lines)).not.toContain(own.adminKey);
    expect(JSON.stringify(lines)).not.toContain("sdk_server_guess");
  } finally {
    await own.stop();
  }
});

describe("GrowthBook's SDK agrees with svc's SDK and OFREP", () => {
  test("10,000 random contexts: every feature's value and every experiment assignment are the same in all three", async () => {
    const gb = new GrowthBook({ apiHost: ts.url, clientKey: ts.serverKey });
    await gb.init({ timeout: 5000 });
    const svc = createClient({ baseUrl: ts.url, sdkKey: ts.serverKey, env: "prod", stream: false, flushIntervalMs: 600_000, reportContextAttributes: false, pollIntervalMs: 600_000 });
    clients.push(svc);
    await svc.ready();
    const snapshot = svc.snapshot() as unknown as Snapshot;
    const { unmapped } = mapSnapshot(snapshot);
    expect(unmapped).toEqual([]);
    const keys = Object.keys(gb.getFeatures()).filter((k) => !k.startsWith(GATE_RULES_PREFIX));
    const random = seededRandom(28);
    const counts = { gateOn: 0, assigned: 0, overridden: 0, segmentsOn: 0, segmentsOff: 0 };
    const mismatches: string[] = [];
    for (let i = 0; i < 10_000; i++) {
      const context = contextOf(random);
      await gb.setAttributes(context);
      const ofrep = new Map(evaluateAll(snapshot, context).map((f) => [f.key, f]));
      for (const key of keys) {
        const result = gb.evalFeature(key);
        const flag = ofrep.get(key)!;
        let own: unknown;
        if (key in snapshot.killswitches) own = svc.isKilled(key);
        else if (key.includes("/")) own = svc.isKilled(key.split("/")[0]!, key.split("/")[1]);
        else if (key in snapshot.gates) own = svc.isEnabled(key, context);
        else if (key in snapshot.configs) own = svc.getConfig(key, sameKind(snapshot.configs[key]!.value), context);
        else {
          const variant = svc.getVariant(key, context, { exposure: false });
          own = variant.value;
          const gbVariant = result.experimentResult?.inExperiment ? result.experimentResult.key : null;
          if (gbVariant !== variant.variant || (flag.reason === "SPLIT" ? flag.variant : null) !== variant.variant) {
            mismatches.push(`${key} variant ${JSON.stringify(context)}: gb ${gbVariant} svc ${variant.variant} ofrep ${flag.variant}/${flag.reason}`);
          }
          if (variant.variant) counts.assigned++;
        }
        if (!Bun.deepEquals(result.value, own) || !Bun.deepEquals(flag.value, own)) {
          mismatches.push(`${key} ${JSON.stringify(context)}: gb ${JSON.stringify(result.value)} svc ${JSON.stringify(own)} ofrep ${JSON.stringify(flag.value)}`);
        }
        if (key in snapshot.gates && own === true) counts.gateOn++;
        if (key === "segments") counts[own === true ? "segmentsOn" : "segmentsOff"]++;
        if (result.source === "experiment" && !(key in snapshot.experiments)) counts.overridden++;
      }
      if (mismatches.length > 5) break;
    }
    expect(mismatches).toEqual([]);
    // The contexts reached both sides of the rules and every experiment path.
    expect(counts.gateOn).toBeGreaterThan(5_000);
    expect(counts.assigned).toBeGreaterThan(1_000);
    expect(counts.overridden).toBeGreaterThan(500);
    // Members, non-members and units the segments' conditions take: both answers, often.
    expect(counts.segmentsOn).toBeGreaterThan(1_000);
    expect(counts.segmentsOff).toBeGreaterThan(1_000);
    gb.destroy();
  }, 120_000);

  test("a sample over HTTP: bulk OFREP per context answers what GrowthBook's SDK does", async () => {
    const gb = new GrowthBook({ apiHost: ts.url, clientKey: ts.serverKey });
    await gb.init({ timeout: 5000 });
    const random = seededRandom(2828);
    for (let i = 0; i < 200; i++) {
      const context = contextOf(random);
      await gb.setAttributes(context);
      const res = await fetch(`${ts.url}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { "x-sdk-key": ts.serverKey, "content-type": "application/json" }, body: JSON.stringify({ context }) });
      const { flags } = (await res.json()) as { flags: { key: string; value: unknown }[] };
      for (const flag of flags) expect([flag.key, gb.evalFeature(flag.key).value]).toEqual([flag.key, flag.value]);
    }
    gb.destroy();
  }, 60_000);

  test("exposures from GrowthBook's trackingCallback post back as svc's own exposure events", async () => {
    const seen: { experiment: string; unitId: string; variant: string }[] = [];
    const gb = new GrowthBook({
      apiHost: ts.url,
      clientKey: ts.serverKey,
      trackingCallback: (experiment, result) => {
        seen.push({ experiment: experiment.name!, unitId: String(result.hashValue), variant: result.key });
      },
    });
    await gb.init({ timeout: 5000 });
    for (let i = 0; i < 400; i++) {
      await gb.setAttributes({ user_id: `track-${i}`, email: "ann@example.com" });
      gb.getFeatureValue("pricing-test", "monthly");
    }
    gb.destroy();
    expect(seen.length).toBeGreaterThan(100);
    const from = Math.floor(Date.now() / 1000) - 3600;
    const count = async (variant: string) => {
      const r = await ts.server.ctx.services.analytics.series({
        projectId: ts.projectId,
        from,
        to: from + 7200,
        bucket: 7200,
        // OFREP's evaluations above log exposures of their own in the background: count the posted ones only.
        measure: {
          kind: "count",
          event: `$exposure:${pricing.id}`,
          filters: [
            { property: "variant", op: "eq" as const, value: variant },
            { property: "via", op: "eq" as const, value: "growthbook" },
          ],
        },
      });
      return r.rows.reduce((s, row) => s + row.v, 0);
    };
    expect(new Set(seen.map((s) => s.experiment))).toEqual(new Set([pricing.id]));
    const posted = await ts.api("/api/sdk/v1/events", {
      key: null,
      headers: { "x-sdk-key": ts.serverKey },
      body: { events: seen.map((s) => ({ name: `$exposure:${s.experiment}`, unitId: s.unitId, properties: { variant: s.variant, via: "growthbook" } })) },
    });
    expect(posted.status).toBe(202);
    for (const variant of ["control", "annual", "lifetime"]) {
      const expected = seen.filter((s) => s.variant === variant).length;
      expect(expected).toBeGreaterThan(0);
      const deadline = Date.now() + 10_000;
      while ((await count(variant)) < expected && Date.now() < deadline) await Bun.sleep(50);
      expect(await count(variant)).toBe(expected);
    }
  });
});

describe("POST /api/eval/{key} (remote evaluation)", () => {
  let browserKey: string;
  beforeAll(async () => {
    const minted = await ts.api("/api/admin/keys", { body: { type: "browser", name: "web app" } });
    expect(minted.status).toBe(201);
    browserKey = minted.body.key;
  });

  test("GrowthBook's SDK in remote-evaluation mode with a browser key answers svc's values for every context; tracks fire its trackingCallback", async () => {
    const snapshot = (await ts.api("/api/sdk/v1/snapshot", { key: ts.serverKey })).body as Snapshot;
    const tracked: string[] = [];
    const gb = new GrowthBook({
      apiHost: ts.url,
      clientKey: browserKey,
      remoteEval: true,
      trackingCallback: (experiment, result) => void tracked.push(`${experiment.name}:${result.key}`),
    });
    await gb.init({ timeout: 5000 });
    const random = seededRandom(77);
    let assigned = 0;
    for (let i = 0; i < 300; i++) {
      const context = contextOf(random, { members: false });
      await gb.setAttributes(context);
      for (const flag of evaluateAll(snapshot, context)) {
        expect([flag.key, gb.evalFeature(flag.key).value]).toEqual([flag.key, flag.value]);
        if (flag.key === "pricing-test" && flag.reason === "SPLIT") {
          assigned++;
          expect(tracked.at(-1)).toBe(`${pricing.id}:${flag.variant}`);
        }
      }
    }
    expect(assigned).toBeGreaterThan(10);
    gb.destroy();
  }, 60_000);

  test("answers evaluated values only: no rules, salts or prerequisite features; the browser key's own env only; refusals as the SDK paths", async () => {
    const post = (key: string, body: unknown, query = "") =>
      fetch(`${ts.url}/api/eval/${key}${query}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const res = await post(browserKey, { attributes: { user_id: "u-1", email: "ann@example.com" }, forcedVariations: {}, forcedFeatures: [], url: "" });
    expect(res.status).toBe(200);
    const text = await res.text();
    const body = JSON.parse(text);
    const snapshot = (await ts.api("/api/sdk/v1/snapshot", { key: ts.serverKey })).body as Snapshot;
    for (const gate of Object.values(snapshot.gates) as { salt: string }[]) expect(text).not.toContain(gate.salt);
    expect(text).not.toContain(GATE_RULES_PREFIX);
    expect(text).not.toContain("seed");
    // Nor a segment's members (issue 29): the answer for a member is the value, the list stays on the server.
    const member = await (await post(browserKey, { attributes: { user_id: "m-3", team: "t-1" } })).text();
    expect(JSON.parse(member).features.segments).toEqual({ defaultValue: true });
    for (const answer of [text, member]) {
      expect(answer).not.toContain("savedGroups");
      expect(answer).not.toContain("$inGroup");
      for (const id of ["m-0", "m-39", "1007", "t-2"]) expect(answer).not.toContain(id);
    }
    expect(body.features.beta).toEqual({ defaultValue: true });
    expect(body.features["checkout/eu"]).toEqual({ defaultValue: true });
    // Dev tools' forced values are applied, as GrowthBook's own server does.
    const forced = await (await post(browserKey, { attributes: {}, forcedFeatures: [["banner", "forced"]], forcedVariations: { "pricing-test": 2 } })).json();
    expect([forced.features.banner, forced.features["pricing-test"]]).toEqual([{ defaultValue: "forced" }, { defaultValue: "lifetime" }]);
    // Another env than the key's: FORBIDDEN. Unknown key: UNAUTHORIZED, before the body is looked at.
    const staging = await post(browserKey, { attributes: {} }, "?env=staging");
    expect([staging.status, expectErrorShape(await staging.json()).code]).toEqual([403, "FORBIDDEN"]);
    const unknown = await post("sdk_browser_nope", { attributes: "not an object", extra: 1 });
    expect([unknown.status, expectErrorShape(await unknown.json()).code]).toEqual([401, "UNAUTHORIZED"]);
    const extra = await post(browserKey, { attributes: {}, colour: "red" });
    expect([extra.status, expectErrorShape(await extra.json()).code]).toEqual([400, "VALIDATION"]);
    const big = await post(browserKey, { attributes: { blob: "x".repeat(70_000) } });
    expect([big.status, expectErrorShape(await big.json()).code]).toEqual([400, "VALIDATION"]);
    // The payload and the stream hold every rule and salt: a browser key is refused there.
    const payload = await features(browserKey);
    expect([payload.status, expectErrorShape(await payload.json()).code]).toEqual([403, "FORBIDDEN"]);
    expect((await fetch(`${ts.url}/sub/${browserKey}`)).status).toBe(403);
  });

  test("the server logs an assigned unit's exposure once, as OFREP does", async () => {
    const from = Math.floor(Date.now() / 1000) - 3600;
    const count = async () => {
      const r = await ts.server.ctx.services.analytics.series({ projectId: ts.projectId, from, to: from + 7200, bucket: 7200, measure: { kind: "unique", event: `$exposure:${pricing.id}`, filters: [] } });
      return r.rows.reduce((s, row) => s + row.v, 0);
    };
    // The tests above logged exposures in the background: wait until their count stops moving.
    let before = await count();
    for (let settled = false; !settled; ) {
      await Bun.sleep(200);
      const now = await count();
      settled = now === before;
      before = now;
    }
    let assigned = 0;
    for (let i = 0; i < 60; i++) {
      const body = { attributes: { user_id: `remote-${i}`, email: "ann@example.com" } };
      for (let twice = 0; twice < 2; twice++) {
        const res = await fetch(`${ts.url}/api/eval/${browserKey}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        const answer = (await res.json()) as any;
        if (twice === 0 && answer.features["pricing-test"].rules) assigned++;
      }
    }
    expect(assigned).toBeGreaterThan(10);
    const deadline = Date.now() + 10_000;
    while ((await count()) < before + assigned && Date.now() < deadline) await Bun.sleep(50);
    expect(await count()).toBe(before + assigned);
  });
});

/** A small EventSource over fetch (Bun has none), enough for GrowthBook's SDK: addEventListener, onopen, onerror, close. */
class FetchEventSource {
  readyState = 0;
  onopen: (() => void) | null = null;
  onerror: (() => void) | null = null;
  private readonly listeners = new Map<string, ((event: { type: string; data: string }) => void)[]>();
  private readonly abort = new AbortController();
  constructor(url: string) {
    void fetch(url, { signal: this.abort.signal })
      .then(async (res) => {
        if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
        this.readyState = 1;
        this.onopen?.();
        await readEventStream(res.body, (e) => {
          for (const cb of this.listeners.get(e.event) ?? []) cb({ type: e.event, data: e.data });
        });
      })
      .catch(() => {
        if (!this.abort.signal.aborted) this.onerror?.();
      });
  }
  addEventListener(type: string, cb: (event: { type: string; data: string }) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), cb]);
  }
  close() {
    this.readyState = 2;
    this.abort.abort();
  }
}

describe("GET /sub/{key}", () => {
  test("streams `features` events GrowthBook's SDK follows: a toggle reaches it without a refetch", async () => {
    // The SDK's cache and background sync are module-wide: start from a clean one, streaming allowed.
    await clearCache();
    configureCache({ backgroundSync: true });
    setPolyfills({ EventSource: FetchEventSource as never });
    const gb = new GrowthBook({ apiHost: ts.url, clientKey: ts.serverKey });
    await gb.init({ timeout: 5000, streaming: true });
    expect(gb.isOn("search")).toBe(true);
    expect((await ts.api("/api/admin/killswitches/search/toggle", { body: {} })).status).toBe(200);
    const deadline = Date.now() + 10_000;
    while (gb.isOn("search") && Date.now() < deadline) await Bun.sleep(20);
    expect(gb.isOn("search")).toBe(false);
    gb.destroy();
    expect((await ts.api("/api/admin/killswitches/search/toggle", { body: {} })).status).toBe(200);
  });

  test("streams per key are capped as the SDK stream's are (429 with Retry-After), and a closed one frees its place", async () => {
    const own = await startTestServer({ maxStreamsPerKey: 2 });
    try {
      const open = [new AbortController(), new AbortController()];
      const streams = await Promise.all(open.map((c) => fetch(`${own.url}/sub/${own.serverKey}`, { signal: c.signal })));
      expect(streams.map((r) => r.status)).toEqual([200, 200]);
      const third = await fetch(`${own.url}/sub/${own.serverKey}`);
      expect([third.status, third.headers.get("retry-after"), expectErrorShape(await third.json()).code]).toEqual([429, "30", "BAD_REQUEST"]);
      open[0]!.abort();
      const deadline = Date.now() + 5000;
      let again = await fetch(`${own.url}/sub/${own.serverKey}`);
      while (again.status === 429 && Date.now() < deadline) {
        await Bun.sleep(50);
        again = await fetch(`${own.url}/sub/${own.serverKey}`);
      }
      expect(again.status).toBe(200);
      await again.body?.cancel();
      open[1]!.abort();
    } finally {
      await own.stop();
    }
  });

  test("the first event is the current payload, as event `features`; a wrong key is refused like the SDK paths", async () => {
    const abort = new AbortController();
    const res = await fetch(`${ts.url}/sub/${ts.serverKey}`, { signal: abort.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const first = await new Promise<{ event: string; data: string }>((resolve) => void readEventStream(res.body!, resolve).catch(() => {}));
    abort.abort();
    expect(first.event).toBe("features");
    expect(JSON.parse(first.data)).toEqual(await (await features()).json());
    const wrong = await fetch(`${ts.url}/sub/${ts.adminKey}`);
    expect(wrong.status).toBe(403);
    expect(expectErrorShape(await wrong.json()).code).toBe("FORBIDDEN");
    expect((await fetch(`${ts.url}/sub/sdk_server_unknown`)).status).toBe(401);
  });
});
