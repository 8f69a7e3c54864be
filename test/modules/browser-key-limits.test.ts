/**
 * Floods through a browser key (issue 28, item 1): the key ships inside apps anyone can run, so events and
 * errors sent with it (also as a Sentry DSN) are rate-limited per key and per client address, body-capped, and
 * cannot grow the project's catalog, tracked errors or attributes without bound. Another project, and the same
 * project's server key, keep answering. Small limits through ServerOptions.browserKeys.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { browserKeyLimitsFromEnv } from "../../src/modules/keys/options";
import { expectErrorShape, startTestServer, type TestServer } from "../helpers";

const HIGH = { limit: 100_000, windowMs: 60_000 };

async function browserKeyOf(s: TestServer, adminKey = s.adminKey): Promise<string> {
  const r = await s.api("/api/admin/keys", { key: adminKey, body: { type: "browser" } });
  expect(r.status, r.text).toBe(201);
  return r.body.key;
}

const events = (s: TestServer, key: string, list: unknown[], headers: Record<string, string> = {}) =>
  s.api("/api/sdk/v1/events", { key: null, headers: { "x-sdk-key": key, ...headers }, body: { events: list } });
const errors = (s: TestServer, key: string, list: unknown[], headers: Record<string, string> = {}) =>
  s.api("/api/sdk/v1/errors", { key: null, headers: { "x-sdk-key": key, ...headers }, body: { errors: list } });
const count = async (s: TestServer, sql: string, projectId = s.projectId) => Number((await s.store.one<{ n: number | string }>(sql, projectId))!.n);

describe("rate limits per key and per client address", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ browserKeys: { perKey: { limit: 6, windowMs: 60_000 }, perAddress: { limit: 3, windowMs: 60_000 } }, network: { trustedProxies: ["loopback"] } });
  });
  afterAll(() => s.stop());

  test("one address: 429 Too many requests with Retry-After past its limit; another address still answers", async () => {
    const key = await browserKeyOf(s);
    const from = (address: string) => events(s, key, [{ name: "page_view" }], { "x-forwarded-for": address });
    for (let i = 0; i < 3; i++) expect((await from("203.0.113.1")).status).toBe(202);
    const limited = await from("203.0.113.1");
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: "Too many requests", code: "BAD_REQUEST" });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    // Errors and the Sentry paths count against the same allowance.
    expect((await errors(s, key, [{ message: "boom" }], { "x-forwarded-for": "203.0.113.1" })).status).toBe(429);
    const sentry = await s.api(`/api/1/store/?sentry_key=${key}`, { key: null, headers: { "x-forwarded-for": "203.0.113.1" }, body: { exception: { values: [{ type: "E", value: "x" }] } } });
    expect(sentry.status).toBe(429);
    expect((await from("203.0.113.2")).status).toBe(202);
  });

  test("one key over many addresses: 429 past the key's limit; the server key, another browser key and another project still answer", async () => {
    const key = await browserKeyOf(s);
    let accepted = 0;
    let limited = 0;
    for (let i = 0; i < 10; i++) {
      const r = await events(s, key, [{ name: "page_view" }], { "x-forwarded-for": `198.51.100.${i}` });
      if (r.status === 202) accepted++;
      else {
        expect(r.status).toBe(429);
        expect(expectErrorShape(r.body).error).toBe("Too many requests");
        limited++;
      }
    }
    expect(accepted).toBe(6);
    expect(limited).toBe(4);
    expect((await events(s, s.serverKey, [{ name: "page_view" }])).status).toBe(202);
    expect((await events(s, await browserKeyOf(s), [{ name: "page_view" }], { "x-forwarded-for": "198.51.100.200" })).status).toBe(202);
    const other = await s.newProject("Other");
    expect((await events(s, await browserKeyOf(s, other.adminKey), [{ name: "page_view" }], { "x-forwarded-for": "198.51.100.1" })).status).toBe(202);
    // Evaluation is not ingest: the flooded key still reads flags.
    const ofrep = await s.api("/ofrep/v1/evaluate/flags", { key: null, headers: { "x-sdk-key": key }, body: { context: {} } });
    expect(ofrep.status).toBe(200);
  });
});

describe("bodies and what a browser key may create", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({
      browserKeys: { perKey: HIGH, perAddress: HIGH, maxBodyBytes: 4096, newEventNamesPerDay: 5, newErrorsPerHour: 3, newAttributesPerDay: 4 },
    });
  });
  afterAll(() => s.stop());

  test("a body over the browser cap: 413 Body too large (JSON and Sentry); the server key may send it", async () => {
    const key = await browserKeyOf(s);
    const big = Array.from({ length: 100 }, () => ({ name: "page_view", properties: { blob: "x".repeat(50) } }));
    const r = await events(s, key, big);
    expect(r.status).toBe(413);
    expect(expectErrorShape(r.body)).toMatchObject({ error: "Body too large", code: "BAD_REQUEST" });
    expect((await errors(s, key, [{ message: "y".repeat(5000) }])).status).toBe(413);
    const envelope = `{"event_id":"${"b".repeat(32)}"}\n{"type":"event"}\n${JSON.stringify({ exception: { values: [{ type: "E", value: "z".repeat(5000) }] } })}\n`;
    const sentry = await fetch(`${s.url}/api/1/envelope/?sentry_key=${key}`, { method: "POST", body: envelope });
    expect(sentry.status).toBe(413);
    expect(await sentry.json()).toMatchObject({ error: "Body too large", code: "BAD_REQUEST" });
    // Small on the wire, large once decompressed: held to the browser cap too.
    const zipped = Bun.gzipSync(new TextEncoder().encode(envelope.replace("z".repeat(5000), "z".repeat(20_000))));
    expect(zipped.length).toBeLessThan(4096);
    const gz = await fetch(`${s.url}/api/1/envelope/?sentry_key=${key}`, { method: "POST", headers: { "content-encoding": "gzip" }, body: zipped });
    expect(gz.status).toBe(413);
    expect(await gz.json()).toMatchObject({ error: "Body too large", code: "BAD_REQUEST" });
    expect((await events(s, s.serverKey, big)).status).toBe(202);
  });

  test("unknown event names: pending catalog rows stop at the day's cap; the events are still accepted; the server key is not capped", async () => {
    const key = await browserKeyOf(s);
    const pending = () => count(s, "SELECT COUNT(*) AS n FROM event_catalog WHERE project_id = ? AND pending = 1");
    // Names ingest added in the last day count against the cap, whoever sent them (here: page_view, by the server key above).
    const before = await pending();
    expect(before).toBeLessThan(5);
    for (let i = 0; i < 4; i++) {
      const r = await events(s, key, Array.from({ length: 5 }, (_, j) => ({ name: `junk_${i}_${j}` })));
      expect(r.status).toBe(202);
      expect(r.body.accepted).toBe(5);
    }
    expect(await pending()).toBe(5);
    // The server key still catalogues new names.
    expect((await events(s, s.serverKey, [{ name: "server_side_name" }])).status).toBe(202);
    expect(await pending()).toBe(6);
  });

  test("new fingerprints: at most the cap of new tracked errors an hour; occurrences of known errors still count", async () => {
    const key = await browserKeyOf(s);
    const first = await errors(s, key, [{ message: "first distinct failure", type: "TypeError" }]);
    expect(first.status).toBe(202);
    const flood = await errors(s, key, Array.from({ length: 10 }, (_, i) => ({ message: `distinct failure`, type: `FloodError${i}` })));
    expect(flood.status).toBe(202);
    expect(flood.body.accepted).toBe(2);
    expect(flood.body.dropped).toBe(8);
    expect(flood.body.limited[0]).toMatchObject({ reason: "browser_new_errors_per_hour", limit: 3, count: 8 });
    expect(await count(s, "SELECT COUNT(*) AS n FROM tracked_errors WHERE project_id = ?")).toBe(3);
    // A known fingerprint keeps counting, from the browser key too.
    const again = await errors(s, key, [{ message: "first distinct failure", type: "TypeError" }]);
    expect(again.body).toMatchObject({ accepted: 1 });
    const row = await s.store.one<{ count: number | string }>("SELECT count FROM tracked_errors WHERE project_id = ? AND type = 'TypeError'", s.projectId);
    expect(Number(row!.count)).toBe(2);
    // Sentry with a browser-key DSN is held to the same cap.
    const sentry = await s.api(`/api/1/store/?sentry_key=${key}`, { key: null, body: { exception: { values: [{ type: "SentryFlood", value: "new" }] } } });
    expect(sentry.status).toBe(200);
    expect(sentry.body.dropped).toBe(1);
    expect(await count(s, "SELECT COUNT(*) AS n FROM tracked_errors WHERE project_id = ?")).toBe(3);
    // The server key is held only to the project's own limits.
    expect((await errors(s, s.serverKey, [{ message: "server side", type: "ServerError" }])).body).toMatchObject({ accepted: 1 });
    expect(await count(s, "SELECT COUNT(*) AS n FROM tracked_errors WHERE project_id = ?")).toBe(4);
  });

  test("attribute inference from browser keys: at most the cap of names a day", async () => {
    const key = await browserKeyOf(s);
    const properties = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`attr_${i}`, "v"]));
    expect((await events(s, key, [{ name: "page_view", properties }])).status).toBe(202);
    const ofrep = await s.api("/ofrep/v1/evaluate/flags", { key: null, headers: { "x-sdk-key": key }, body: { context: { targetingKey: "u", other_1: "a", other_2: "b" } } });
    expect(ofrep.status).toBe(200);
    await s.server.ctx.services.attributes.flush();
    expect(await count(s, "SELECT COUNT(*) AS n FROM attributes WHERE project_id = ? AND source = 'auto' AND (name LIKE 'attr%' OR name LIKE 'other%')")).toBe(4);
  });
});

test("svc serve reads the limits from SERVICE_BROWSER_*; a malformed value stops the start", () => {
  expect(
    browserKeyLimitsFromEnv({
      SERVICE_BROWSER_LIMIT_PER_KEY: "5000",
      SERVICE_BROWSER_LIMIT_PER_ADDRESS: "60",
      SERVICE_BROWSER_MAX_BODY_BYTES: "16384",
      SERVICE_BROWSER_NEW_EVENTS_PER_DAY: "10",
      SERVICE_BROWSER_NEW_ERRORS_PER_HOUR: "20",
      SERVICE_BROWSER_NEW_ATTRIBUTES_PER_DAY: "30",
    }),
  ).toEqual({
    perKey: { limit: 5000, windowMs: 60_000 },
    perAddress: { limit: 60, windowMs: 60_000 },
    maxBodyBytes: 16384,
    newEventNamesPerDay: 10,
    newErrorsPerHour: 20,
    newAttributesPerDay: 30,
  });
  expect(browserKeyLimitsFromEnv({})).toEqual({});
  expect(() => browserKeyLimitsFromEnv({ SERVICE_BROWSER_LIMIT_PER_KEY: "lots" })).toThrow("SERVICE_BROWSER_LIMIT_PER_KEY");
  expect(() => browserKeyLimitsFromEnv({ SERVICE_BROWSER_MAX_BODY_BYTES: "0" })).toThrow("SERVICE_BROWSER_MAX_BODY_BYTES");
});
