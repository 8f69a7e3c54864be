/**
 * svc's SDK in browser mode (issue 28, item 1: "svc's SDK gets a browser mode that uses only the browser
 * key (bulk OFREP with ETag, polling …), under 10 KB gzipped"): src/sdk/browser.ts against a real server
 * with a browser key, and the module the server serves at GET /sdk/svc-browser.js.
 * (test/web/browser-key-clients.test.ts runs the served module in Chromium.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createBrowserClient } from "../../src/sdk/browser";
import { type TestServer, startTestServer } from "../helpers";
import { waitFor } from "../support/vendor-standin";

const HOUR = 3600;
let s: TestServer;
let browserKey: string;

/** Every request the client made and what the server answered (the real server's own statuses). */
type Seen = { url: string; method: string; ifNoneMatch: string | null; status: number; body: any };
function recordingFetch(seen: Seen[]) {
  return async (url: string, init?: RequestInit) => {
    const response = await fetch(url, init);
    const headers = new Headers(init?.headers);
    seen.push({ url, method: init?.method ?? "GET", ifNoneMatch: headers.get("if-none-match"), status: response.status, body: init?.body ? JSON.parse(String(init.body)) : null });
    return response;
  };
}

beforeAll(async () => {
  s = await startTestServer();
  const ok = async (path: string, init: { method?: string; body?: unknown }, status = 201) => {
    const r = await s.api(path, { ...init, headers: { "x-project-id": s.projectId } });
    expect(r.status, `${path}: ${r.text}`).toBe(status);
    return r.body;
  };
  await ok("/api/admin/killswitches", { body: { name: "checkout", value: false, switches: { eu: true } } });
  await ok("/api/admin/configs", { body: { name: "limits", schema: { type: "object" }, value: { perMinute: 120 } } });
  await ok("/api/admin/gates", { body: { name: "swiss", rules: [{ conditions: [{ attr: "country", op: "eq", value: "CH" }], passPercentage: 100 }] } });
  await ok("/api/admin/universes", { body: { name: "web" } });
  await ok("/api/admin/events", { body: { name: "order" } });
  await ok("/api/admin/metrics", { body: { name: "orders", kind: "count", event: "order" } });
  await ok("/api/admin/experiments", { body: { name: "button", universe: "web", variants: [{ key: "control", weight: 1 }, { key: "green", weight: 1 }], allocation: [0, 10000], primaryMetric: "orders" } });
  await ok("/api/admin/experiments/button/start", { method: "POST" }, 200);
  browserKey = (await ok("/api/admin/keys", { body: { type: "browser", name: "web" } })).key;
});
afterAll(() => s?.stop());

describe("createBrowserClient (svc-sdk/browser)", () => {
  test("reads killswitches, sub-switches, gates, configs and an experiment's variant through bulk OFREP only, with the browser key", async () => {
    const seen: Seen[] = [];
    const warnings: string[] = [];
    const svc = createBrowserClient({ baseUrl: s.url, key: browserKey, context: { targetingKey: "user-1", country: "DE" }, pollMs: 0, fetch: recordingFetch(seen), onWarning: (m) => warnings.push(m) });
    expect(svc.isKilled("checkout")).toBe(false); // before the first answers: the default
    await svc.ready();
    expect(svc.isKilled("checkout")).toBe(false);
    expect(svc.isKilled("checkout", "eu")).toBe(true);
    expect(svc.isKilled("checkout", "us")).toBe(false); // no entry: the killswitch's own value
    expect(svc.isEnabled("swiss")).toBe(false);
    expect(svc.getConfig("limits", { perMinute: 60 })).toEqual({ perMinute: 120 });
    expect(svc.getConfig("limits", "not an object")).toBe("not an object");
    const variant = svc.getVariant("button");
    expect(variant.reason).toBe("assigned");
    expect(["control", "green"]).toContain(variant.variant!);
    // The server's own single-flag answer for the same context agrees.
    const single = await s.api("/ofrep/v1/evaluate/flags/button", { key: null, headers: { "x-sdk-key": browserKey }, body: { context: { targetingKey: "user-1", country: "DE" } } });
    expect(single.body.variant).toBe(variant.variant);
    expect(svc.getVariant("nope")).toEqual({ variant: null, value: undefined, reason: "not_found" });
    expect(svc.isEnabled("typo")).toBe(false);
    expect(warnings).toEqual([expect.stringContaining('"nope"'), expect.stringContaining('"typo"')]);
    expect(seen.map((r) => `${r.method} ${new URL(r.url).pathname} ${r.status}`)).toEqual(["POST /ofrep/v1/evaluate/flags 200"]);
    await svc.close();
  });

  test("polls with If-None-Match: the server answers 304 while nothing changed, and a toggle is seen on a later poll", async () => {
    const seen: Seen[] = [];
    const svc = createBrowserClient({ baseUrl: s.url, key: browserKey, context: { targetingKey: "user-2" }, pollMs: 50, fetch: recordingFetch(seen) });
    await svc.ready();
    const etag = (await s.api("/ofrep/v1/evaluate/flags", { key: null, headers: { "x-sdk-key": browserKey }, body: { context: { targetingKey: "user-2" } } })).headers.get("etag");
    await waitFor(() => seen.some((r) => r.status === 304), 10_000, "a 304 poll");
    const notModified = seen.find((r) => r.status === 304)!;
    expect(notModified.ifNoneMatch).toBe(etag);
    let changes = 0;
    svc.onChange(() => changes++);
    expect((await s.api("/api/admin/killswitches/checkout/value", { method: "PUT", body: { env: "prod", value: true } })).status).toBe(200);
    await waitFor(() => svc.isKilled("checkout"), 10_000, "the toggle to reach the client");
    expect(changes).toBe(1);
    // Only the bulk OFREP path was ever asked; never the snapshot.
    expect(new Set(seen.map((r) => new URL(r.url).pathname))).toEqual(new Set(["/ofrep/v1/evaluate/flags"]));
    await svc.close();
    expect((await s.api("/api/admin/killswitches/checkout/value", { method: "PUT", body: { env: "prod", value: false } })).status).toBe(200);
  });

  test("setContext evaluates again for the new context (a gate opens) without waiting for the poll", async () => {
    const seen: Seen[] = [];
    const svc = createBrowserClient({ baseUrl: s.url, key: browserKey, context: { targetingKey: "user-3", country: "DE" }, pollMs: 600_000, fetch: recordingFetch(seen) });
    await svc.ready();
    expect(svc.isEnabled("swiss")).toBe(false);
    await svc.setContext({ targetingKey: "user-3", country: "CH" });
    expect(svc.isEnabled("swiss")).toBe(true);
    expect(seen.at(-1)).toMatchObject({ status: 200, ifNoneMatch: null, body: { context: { targetingKey: "user-3", country: "CH" } } });
    await svc.close();
  });

  test("track() sends events in batches with the browser key, for the context's unit; they land as events", async () => {
    const from = Math.floor(Date.now() / 1000 / HOUR) * HOUR;
    const svc = createBrowserClient({ baseUrl: s.url, key: browserKey, context: { targetingKey: "user-4" }, pollMs: 0, flushMs: 600_000 });
    await svc.ready();
    svc.track("browser.click", { plan: "pro" }, { value: 3 });
    svc.track("browser.click", { plan: "free" }, { value: 4 });
    await svc.close();
    const { analytics } = s.server.ctx.services;
    const count = await analytics.series({ projectId: s.projectId, from, to: from + HOUR, bucket: HOUR, measure: { kind: "count", event: "browser.click", filters: [] } });
    expect(count.rows[0]!.v).toBe(2);
    const sum = await analytics.series({ projectId: s.projectId, from, to: from + HOUR, bucket: HOUR, measure: { kind: "sum", event: "browser.click", filters: [] } });
    expect(sum.rows[0]!.v).toBe(7);
    expect((await s.api("/api/admin/events/browser.click")).body).toMatchObject({ properties: [{ name: "plan", type: "string" }] });
  });
});

describe("GET /sdk/svc-browser.js", () => {
  test("under 10 KB gzipped, without re2js or the gate evaluator (Bun.build of src/sdk/browser.ts, and the served module)", async () => {
    const built = await Bun.build({ entrypoints: [join(import.meta.dir, "../../src/sdk/browser.ts")], target: "browser", format: "esm" });
    expect(built.success).toBe(true);
    const text = await built.outputs[0]!.text();
    const gzipped = Bun.gzipSync(new TextEncoder().encode(text)).length;
    console.log(`svc-sdk/browser: ${text.length} bytes, ${gzipped} bytes gzipped`);
    expect(gzipped).toBeLessThan(10 * 1024);
    for (const forbidden of [/re2/i, /createGateEvaluator/, /\/api\/sdk\/v1\/snapshot/]) expect(text.match(forbidden)?.[0] ?? null).toBeNull();

    const res = await fetch(`${s.url}/sdk/svc-browser.js`, { headers: { "accept-encoding": "identity" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const served = await res.text();
    expect(served).toContain("export {");
    expect(served).toContain("createBrowserClient");
    expect(served.match(/re2/i)?.[0] ?? null).toBeNull();
    const gz = await fetch(`${s.url}/sdk/svc-browser.js`, { headers: { "accept-encoding": "gzip" }, decompress: false } as RequestInit);
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    const servedGzip = (await gz.arrayBuffer()).byteLength;
    console.log(`GET /sdk/svc-browser.js: ${servedGzip} bytes gzipped`);
    expect(servedGzip).toBeLessThan(10 * 1024);
    const etag = gz.headers.get("etag")!;
    expect((await fetch(`${s.url}/sdk/svc-browser.js`, { headers: { "accept-encoding": "gzip", "if-none-match": etag } })).status).toBe(304);
  });
});
