import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { type RunningRelay, startRelay } from "../../src/modules/relays/edge/relay";
import { type TestServer, startTestServer, tempDir } from "../helpers";

/**
 * The edge relay (issue 28, part 3) against a real upstream in this process: the same bodies and ETags,
 * toggles arriving, key checks, exactly-once forwarding, an offline start from disk, and a chain.
 * test/modules/relay-kill.test.ts kills a real upstream process under it.
 */

let s: TestServer;
let relay: RunningRelay;
const relayDir = tempDir("svc-relay-");
const HEARTBEAT_MS = 200;

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

type Reply = { status: number; text: string; headers: Headers };
async function call(base: string, path: string, init: { key?: string | null; headers?: Record<string, string>; body?: unknown; method?: string } = {}): Promise<Reply> {
  const key = init.key === undefined ? s.serverKey : init.key;
  const headers: Record<string, string> = { ...(key ? { "x-sdk-key": key } : {}), ...init.headers };
  if (init.body !== undefined) headers["content-type"] ??= "application/json";
  const res = await fetch(base + path, { method: init.method ?? (init.body !== undefined ? "POST" : "GET"), headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

async function health(base: string) {
  return (await (await fetch(`${base}/healthz`)).json()) as { ok: boolean; status: string; relay: { connected: boolean; stale: boolean; queued: number; revisions: Record<string, number>; staleSeconds?: number } };
}

/** The relay serves the upstream's current prod revision. */
async function caughtUp(base: string) {
  const upstream = JSON.parse((await call(s.url, "/api/sdk/v1/snapshot?env=prod")).text).revision as number;
  await until(`the relay at ${base} to reach revision ${upstream}`, async () => {
    const h = await health(base);
    return h.relay.connected && h.relay.revisions.prod === upstream;
  });
}

async function toggle(name: string) {
  const r = await s.api(`/api/admin/killswitches/${encodeURIComponent(name)}/toggle`, { body: {} });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

beforeAll(async () => {
  s = await startTestServer({ streamHeartbeatMs: HEARTBEAT_MS });
  expect((await s.api("/api/admin/killswitches", { body: { name: "checkout", switches: { eu: true } } })).status).toBe(201);
  expect((await s.api("/api/admin/configs", { body: { name: "limits", schema: { type: "object" }, value: { max: 3 } } })).status).toBe(201);
  const rules = [{ conditions: [{ attr: "plan", op: "eq", value: "pro" }], passPercentage: 100 }, { conditions: [], passPercentage: 50 }];
  expect((await s.api("/api/admin/gates", { body: { name: "new-ui", rules } })).status).toBe(201);
  relay = await startRelay({ port: 0, host: "127.0.0.1", dataDir: relayDir, upstream: s.url, key: s.serverKey, quiet: true, logRequests: false, streamHeartbeatMs: HEARTBEAT_MS });
  await caughtUp(relay.url);
});

afterAll(async () => {
  await relay?.stop();
  await s?.stop();
  rmSync(relayDir, { recursive: true, force: true });
});

describe("the relay answers as the upstream does", () => {
  test("snapshot: the same bytes and ETag, 304 on the same tag, gzip alike", async () => {
    for (const path of ["/api/sdk/v1/snapshot", "/api/sdk/v1/snapshot?env=prod", "/api/sdk/v1/snapshot?env=dev"]) {
      const [up, edge] = [await call(s.url, path), await call(relay.url, path)];
      expect(edge.status).toBe(200);
      expect(edge.text).toBe(up.text);
      expect(edge.headers.get("etag")).toBe(up.headers.get("etag")!);
      expect(edge.headers.get("x-svc-stale")).toBeNull();
      const again = await call(relay.url, path, { headers: { "if-none-match": up.headers.get("etag")! } });
      expect(again.status).toBe(304);
      expect(again.headers.get("etag")).toBe(up.headers.get("etag")!);
      // Through the Elysia route (an Origin sends it there) as well as the fast path.
      const slow = await call(relay.url, path, { headers: { "if-none-match": up.headers.get("etag")!, origin: "https://example.com" } });
      expect(slow.status).toBe(304);
    }
    const gz = await fetch(`${relay.url}/api/sdk/v1/snapshot`, { headers: { "x-sdk-key": s.serverKey, "accept-encoding": "gzip" }, decompress: false });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    expect(new TextDecoder().decode(Bun.gunzipSync(new Uint8Array(await gz.arrayBuffer())))).toBe((await call(s.url, "/api/sdk/v1/snapshot")).text);
  });

  test("OFREP bulk and single: the same bodies and ETags, 304 on the bulk tag", async () => {
    for (const context of [{ targetingKey: "u-1", plan: "pro" }, { targetingKey: "u-2" }, { targetingKey: "u-3", env: "dev" }]) {
      const [up, edge] = [await call(s.url, "/ofrep/v1/evaluate/flags", { body: { context } }), await call(relay.url, "/ofrep/v1/evaluate/flags", { body: { context } })];
      expect(edge.status).toBe(200);
      expect(edge.text).toBe(up.text);
      expect(edge.headers.get("etag")).toBe(up.headers.get("etag")!);
      const again = await call(relay.url, "/ofrep/v1/evaluate/flags", { body: { context }, headers: { "if-none-match": up.headers.get("etag")! } });
      expect(again.status).toBe(304);
      for (const flag of ["checkout", "checkout/eu", "limits", "new-ui", "missing"]) {
        const [u, e] = [await call(s.url, `/ofrep/v1/evaluate/flags/${flag}`, { body: { context } }), await call(relay.url, `/ofrep/v1/evaluate/flags/${flag}`, { body: { context } })];
        expect(e.status).toBe(u.status);
        expect(e.text).toBe(u.text);
      }
    }
    const bad = await call(relay.url, "/ofrep/v1/evaluate/flags", { method: "POST", headers: { "content-type": "application/json" } });
    expect(bad.status).toBe((await call(s.url, "/ofrep/v1/evaluate/flags", { method: "POST", headers: { "content-type": "application/json" } })).status);
  });

  test("the key route answers as the upstream's; foreign, client and unknown keys are refused as there", async () => {
    const [up, edge] = [await call(s.url, "/api/sdk/v1/key"), await call(relay.url, "/api/sdk/v1/key")];
    expect(up.status).toBe(200);
    expect(JSON.parse(up.text)).toEqual({ id: expect.any(String), projectId: s.projectId, type: "server", scopes: expect.any(Array), allowedOrigin: null, allowedOrigins: null, defaultEnv: "prod" });
    expect(edge.text).toBe(up.text);
    // Another key of the project, looked up with the server key; never for a client key, an admin key or another project's key.
    const client = await call(s.url, "/api/sdk/v1/key", { headers: { "x-sdk-key-lookup": s.clientKey } });
    expect(JSON.parse(client.text)).toMatchObject({ projectId: s.projectId, type: "client", scopes: ["tickets:public_create"] });
    expect((await call(relay.url, "/api/sdk/v1/key", { headers: { "x-sdk-key-lookup": s.clientKey } })).text).toBe(client.text);
    expect((await call(s.url, "/api/sdk/v1/key", { key: s.clientKey })).status).toBe(403);
    expect((await call(s.url, "/api/sdk/v1/key", { key: s.adminKey })).status).toBe(403);
    expect((await call(s.url, "/api/sdk/v1/key", { headers: { "x-sdk-key-lookup": s.adminKey } })).status).toBe(404);
    const foreign = await s.newProject("Foreign");
    expect((await call(s.url, "/api/sdk/v1/snapshot", { key: foreign.serverKey })).status).toBe(200);
    expect((await call(s.url, "/api/sdk/v1/key", { headers: { "x-sdk-key-lookup": foreign.serverKey } })).status).toBe(404);
    const refused = await call(relay.url, "/api/sdk/v1/snapshot", { key: foreign.serverKey });
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.text).code).toBe("UNAUTHORIZED");
    expect((await call(relay.url, "/api/sdk/v1/snapshot", { key: s.clientKey })).status).toBe((await call(s.url, "/api/sdk/v1/snapshot", { key: s.clientKey })).status);
    expect((await call(relay.url, "/api/sdk/v1/snapshot", { key: "sdk_server_nosuchkey0000000000" })).status).toBe(401);
    expect((await call(relay.url, "/api/sdk/v1/snapshot", { key: null })).status).toBe(401);
  });

  test("a browser key works through the relay as upstream: OFREP of its env and events; never the snapshot or another env", async () => {
    const minted = await s.api("/api/admin/keys", { body: { type: "browser", env: "prod" } });
    expect(minted.status, minted.text).toBe(201);
    const browserKey = minted.body.key as string;
    const origin = { origin: "https://app.example.com" };
    for (const context of [{ targetingKey: "b-1", plan: "pro" }, { targetingKey: "b-2" }]) {
      const [up, edge] = [await call(s.url, "/ofrep/v1/evaluate/flags", { key: browserKey, body: { context } }), await call(relay.url, "/ofrep/v1/evaluate/flags", { key: browserKey, body: { context } })];
      expect(edge.status).toBe(200);
      expect(edge.text).toBe(up.text);
      expect(edge.headers.get("etag")).toBe(up.headers.get("etag")!);
      const single = await call(relay.url, "/ofrep/v1/evaluate/flags/new-ui", { key: browserKey, body: { context }, headers: origin });
      expect(single.text).toBe((await call(s.url, "/ofrep/v1/evaluate/flags/new-ui", { key: browserKey, body: { context }, headers: origin })).text);
    }
    for (const [path, init] of [
      ["/ofrep/v1/evaluate/flags", { key: browserKey, body: { context: { targetingKey: "b-1", env: "dev" } } }],
      ["/api/sdk/v1/snapshot", { key: browserKey }],
      ["/api/sdk/v1/stream", { key: browserKey }],
      ["/ops/bug", { key: browserKey, body: { title: "not from a browser key" } }],
    ] as const) {
      const [up, edge] = [await call(s.url, path, init), await call(relay.url, path, init)];
      expect([path, edge.status]).toEqual([path, up.status]);
      expect(up.status).toBe(403);
      expect(JSON.parse(edge.text)).toMatchObject({ code: "FORBIDDEN", error: JSON.parse(up.text).error });
    }
    const unit = `browser-${Date.now()}`;
    expect((await call(relay.url, "/api/sdk/v1/events", { key: browserKey, body: { events: [{ name: "relay_browser", unitId: unit }] } })).status).toBe(202);
    await until("the browser key's event upstream", async () => {
      const recent = await s.api(`/api/admin/events/relay_browser/recent`);
      return recent.status === 200 && recent.body.events.some((e: { unitId: string }) => e.unitId === unit);
    });
  });

  test("a browser key's origins are the upstream's: an allowed origin gets CORS through the relay, another is refused as upstream", async () => {
    expect((await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", body: { allowedOrigins: ["https://shop.example.com"] } })).status).toBe(200);
    try {
      const browserKey = (await s.api("/api/admin/keys", { body: { type: "browser", env: "prod" } })).body.key as string;
      const body = { context: { targetingKey: "o-1" } };
      const allowed = await call(relay.url, "/ofrep/v1/evaluate/flags", { key: browserKey, body, headers: { origin: "https://shop.example.com" } });
      expect(allowed.status).toBe(200);
      expect(allowed.headers.get("access-control-allow-origin")).toBe("https://shop.example.com");
      expect(allowed.headers.get("access-control-allow-credentials")).toBeNull();
      const [up, edge] = [
        await call(s.url, "/ofrep/v1/evaluate/flags", { key: browserKey, body, headers: { origin: "https://evil.example" } }),
        await call(relay.url, "/ofrep/v1/evaluate/flags", { key: browserKey, body, headers: { origin: "https://evil.example" } }),
      ];
      expect([up.status, edge.status]).toEqual([403, 403]);
      expect(JSON.parse(edge.text).error).toBe(JSON.parse(up.text).error);
    } finally {
      expect((await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", body: { allowedOrigins: [] } })).status).toBe(200);
    }
  });

  test("GrowthBook's paths: the same features payload and ETag (and 304), the same stream event, the same remote evaluation", async () => {
    for (const query of ["", "?env=dev"]) {
      const path = `/api/features/${s.serverKey}${query}`;
      const [up, edge] = [await call(s.url, path, { key: null }), await call(relay.url, path, { key: null })];
      expect(edge.status).toBe(200);
      expect(edge.text).toBe(up.text);
      expect(edge.headers.get("etag")).toBe(up.headers.get("etag")!);
      expect((await call(relay.url, path, { key: null, headers: { "if-none-match": up.headers.get("etag")! } })).status).toBe(304);
      expect((await call(relay.url, path, { key: null, headers: { "if-none-match": up.headers.get("etag")!, origin: "https://app.example.com" } })).status).toBe(304);
    }
    const firstEvent = async (base: string) => {
      const controller = new AbortController();
      const res = await fetch(`${base}/sub/${s.serverKey}`, { signal: controller.signal });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      let text = "";
      while (!text.includes("\n\n")) text += new TextDecoder().decode((await reader.read()).value);
      controller.abort();
      return text.slice(0, text.indexOf("\n\n"));
    };
    expect(await firstEvent(relay.url)).toBe(await firstEvent(s.url));
    const browserKey = (await s.api("/api/admin/keys", { body: { type: "browser", env: "prod" } })).body.key as string;
    for (const attributes of [{ user_id: "gb-1", plan: "pro" }, { user_id: "gb-2" }]) {
      const [up, edge] = [await call(s.url, `/api/eval/${browserKey}`, { key: null, body: { attributes } }), await call(relay.url, `/api/eval/${browserKey}`, { key: null, body: { attributes } })];
      expect(edge.status).toBe(200);
      const strip = (text: string) => ({ ...JSON.parse(text), dateUpdated: undefined });
      expect(strip(edge.text)).toEqual(strip(up.text));
    }
    expect((await call(relay.url, `/sub/${browserKey}`, { key: null })).status).toBe(403);
  });

  test("a toggle upstream reaches the relay's snapshot, its stream and its OFREP answer", async () => {
    const controller = new AbortController();
    const stream = await fetch(`${relay.url}/api/sdk/v1/stream?env=prod`, { headers: { "x-sdk-key": s.serverKey }, signal: controller.signal });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    const decoder = new TextDecoder();
    let seen = "";
    const before = JSON.parse((await call(relay.url, "/api/sdk/v1/snapshot?env=prod")).text);
    await toggle("checkout");
    const after = await until("the toggle on the relay", async () => {
      const r = await call(relay.url, "/api/sdk/v1/snapshot?env=prod");
      const body = JSON.parse(r.text);
      return body.killswitches.checkout.value !== before.killswitches.checkout.value ? r : undefined;
    });
    const upstream = await call(s.url, "/api/sdk/v1/snapshot?env=prod");
    expect(after.text).toBe(upstream.text);
    expect(after.headers.get("etag")).toBe(upstream.headers.get("etag")!);
    const revision = JSON.parse(upstream.text).revision;
    while (!seen.includes(`id: ${s.store.epoch}-${revision}\nevent: snapshot\n`)) {
      const chunk = await reader.read();
      if (chunk.done) throw new Error("the relay's stream ended");
      seen += decoder.decode(chunk.value, { stream: true });
    }
    controller.abort();
    const flag = await call(relay.url, "/ofrep/v1/evaluate/flags/checkout", { body: { context: {} } });
    expect(JSON.parse(flag.text).value).toBe(JSON.parse(upstream.text).killswitches.checkout.value);
  });
});

describe("forwarding", () => {
  test("events, errors, Sentry envelopes and intake items reach the upstream once", async () => {
    const unit = `relay-unit-${Date.now()}`;
    const sent = await call(relay.url, "/api/sdk/v1/events", { body: { events: [{ name: "relay_checkout", unitId: unit }, { name: "relay_checkout", unitId: unit, value: 2 }] } });
    expect(sent.status).toBe(202);
    expect(JSON.parse(sent.text)).toEqual({ accepted: 2 });
    const errors = await call(relay.url, "/api/sdk/v1/errors", { body: { errors: [{ message: "relay boom", type: "RelayError" }] } });
    expect(errors.status).toBe(202);
    const eventId = "0123456789abcdef0123456789abcdef";
    const envelope = [JSON.stringify({ event_id: eventId }), JSON.stringify({ type: "event" }), JSON.stringify({ event_id: eventId, exception: { values: [{ type: "SentryRelayError", value: "from sentry" }] } })].join("\n");
    const sentry = await fetch(`${relay.url}/api/1/envelope/?sentry_key=${s.serverKey}`, { method: "POST", body: envelope });
    expect(sentry.status).toBe(200);
    expect(await sentry.json()).toEqual({ id: eventId });
    const title = `Relay bug ${Date.now()}`;
    const bug = await call(relay.url, "/ops/bug", { key: s.clientKey, body: { title } });
    expect(bug.status).toBe(202);
    expect(JSON.parse(bug.text)).toEqual({ queued: true, deliveryId: expect.any(String) });
    // Refused at the relay, as at the upstream: no key, a body failing the schema.
    expect((await call(relay.url, "/api/sdk/v1/events", { key: null, body: { events: [] } })).status).toBe(401);
    expect((await call(relay.url, "/api/sdk/v1/events", { body: { events: [{ name: "x", bogus: 1 }] } })).status).toBe(400);
    expect((await call(relay.url, "/ops/bug", { key: s.serverKey, body: { title } })).status).toBe(403);

    await until("the relay's queue to drain", async () => (await health(relay.url)).relay.queued === 0);
    const recent = await s.api(`/api/admin/events/relay_checkout/recent`);
    expect(recent.status).toBe(200);
    expect(recent.body.events.filter((e: { unitId: string }) => e.unitId === unit)).toHaveLength(2);
    const tracked = await s.api("/api/admin/errors?q=relay");
    expect(tracked.body.map((e: { type: string }) => e.type).sort()).toEqual(["RelayError", "SentryRelayError"]);
    const items = await s.api(`/api/admin/ops?q=${encodeURIComponent(title)}`);
    expect(items.body).toHaveLength(1);
    expect(items.body[0].status).toBe("pending_approval");
  });

  test("the exposures the relay's OFREP answers assign reach the upstream as events, once per unit", async () => {
    expect((await s.api("/api/admin/universes", { body: { name: "relay-users" }, headers: { "x-project-id": s.projectId } })).status).toBe(201);
    const created = await s.api("/api/admin/experiments", {
      body: { name: "relay-button", universe: "relay-users", variants: [{ key: "control", weight: 50, value: "blue" }, { key: "green", weight: 50, value: "green" }], allocation: [0, 10_000] },
    });
    expect(created.status, created.text).toBe(201);
    expect((await s.api(`/api/admin/experiments/${created.body.id}/start`, { method: "POST" })).status).toBe(200);
    await caughtUp(relay.url);
    let assigned = 0;
    for (let i = 0; i < 30; i++) {
      const context = { targetingKey: `relay-exposed-${i}` };
      const edge = await call(relay.url, "/ofrep/v1/evaluate/flags/relay-button", { body: { context } });
      expect(edge.text).toBe((await call(s.url, "/ofrep/v1/evaluate/flags/relay-button", { body: { context } })).text);
      if (JSON.parse(edge.text).reason === "SPLIT") assigned++;
      // Asked again on the relay: no second exposure.
      await call(relay.url, "/ofrep/v1/evaluate/flags/relay-button", { body: { context } });
    }
    expect(assigned).toBeGreaterThan(0);
    await until("the relay's queue to drain", async () => (await health(relay.url)).relay.queued === 0);
    const count = async () => {
      const from = Math.floor(Date.now() / 1000) - 3600;
      const r = await s.server.ctx.services.analytics.series({ projectId: s.projectId, from, to: from + 7200, bucket: 7200, measure: { kind: "unique", event: `$exposure:${created.body.id}`, filters: [] } });
      return r.rows.reduce((n, row) => n + row.v, 0);
    };
    // The upstream logged its own answers' exposures too (the comparison above): every unit counts once either way.
    expect(await until("the exposures upstream", async () => ((await count()) === assigned ? assigned : undefined))).toBe(assigned);
  });

  test("a delivery sent again with the same X-Svc-Delivery-Id is stored once and answered as the first time", async () => {
    const id = crypto.randomUUID();
    const unit = `repeat-${Date.now()}`;
    const body = { events: [{ name: "relay_repeat", unitId: unit }] };
    const first = await call(s.url, "/api/sdk/v1/events", { body, headers: { "x-svc-delivery-id": id } });
    const second = await call(s.url, "/api/sdk/v1/events", { body, headers: { "x-svc-delivery-id": id } });
    expect([first.status, second.status]).toEqual([202, 202]);
    expect(second.text).toBe(first.text);
    const recent = await s.api(`/api/admin/events/relay_repeat/recent`);
    expect(recent.body.events.filter((e: { unitId: string }) => e.unitId === unit)).toHaveLength(1);

    const title = `Repeat bug ${Date.now()}`;
    const bugId = crypto.randomUUID();
    const filed = await call(s.url, "/ops/bug", { key: s.clientKey, body: { title }, headers: { "x-svc-delivery-id": bugId } });
    expect(filed.status).toBe(201);
    // Reject it, so the title no longer dedupes: only the delivery id keeps the repeat out.
    expect((await s.api(`/api/admin/ops/${JSON.parse(filed.text).id}/reject`, { body: {} })).status).toBe(200);
    const again = await call(s.url, "/ops/bug", { key: s.clientKey, body: { title }, headers: { "x-svc-delivery-id": bugId } });
    expect(again.status).toBe(201);
    expect(again.text).toBe(filed.text);
    expect((await s.api(`/api/admin/ops?q=${encodeURIComponent(title)}`)).body).toHaveLength(1);

    const errorId = crypto.randomUUID();
    const e1 = await call(s.url, "/api/sdk/v1/errors", { body: { errors: [{ message: "once only", type: "OnceError" }] }, headers: { "x-svc-delivery-id": errorId } });
    const e2 = await call(s.url, "/api/sdk/v1/errors", { body: { errors: [{ message: "once only", type: "OnceError" }] }, headers: { "x-svc-delivery-id": errorId } });
    expect(e2.text).toBe(e1.text);
    const tracked = (await s.api("/api/admin/errors?q=OnceError")).body;
    expect(tracked).toHaveLength(1);
    expect((await s.api(`/api/admin/errors/${tracked[0].id}`)).body.count).toBe(1);

    const bad = await call(s.url, "/api/sdk/v1/events", { body, headers: { "x-svc-delivery-id": "no spaces allowed" } });
    expect(bad.status).toBe(400);
  });
});

describe("offline and chained", () => {
  test("a relay started while its upstream is away serves its saved snapshots, marked stale", async () => {
    const dir = tempDir("svc-relay-offline-");
    const first = await startRelay({ port: 0, host: "127.0.0.1", dataDir: dir, upstream: s.url, key: s.serverKey, quiet: true, logRequests: false });
    await caughtUp(first.url);
    const live = await call(first.url, "/api/sdk/v1/snapshot?env=prod");
    await first.stop();
    // Nothing listens on port 9 (discard) on a test machine: the upstream is away.
    const offline = await startRelay({ port: 0, host: "127.0.0.1", dataDir: dir, upstream: "http://127.0.0.1:9", key: s.serverKey, quiet: true, logRequests: false });
    try {
      const stale = await call(offline.url, "/api/sdk/v1/snapshot?env=prod");
      expect(stale.status).toBe(200);
      expect(stale.text).toBe(live.text);
      expect(stale.headers.get("etag")).toBe(live.headers.get("etag")!);
      expect(Number(stale.headers.get("x-svc-stale"))).toBeGreaterThanOrEqual(0);
      const notModified = await call(offline.url, "/api/sdk/v1/snapshot?env=prod", { headers: { "if-none-match": live.headers.get("etag")! } });
      expect(notModified.status).toBe(304);
      expect(notModified.headers.get("x-svc-stale")).not.toBeNull();
      const flags = await call(offline.url, "/ofrep/v1/evaluate/flags", { body: { context: { targetingKey: "u-1" } }, headers: { origin: "https://app.example.com" } });
      expect(flags.status).toBe(200);
      expect(flags.headers.get("x-svc-stale")).not.toBeNull();
      expect(flags.headers.get("access-control-expose-headers")).toContain("X-Svc-Stale");
      const h = await health(offline.url);
      expect(h).toMatchObject({ ok: true, status: "ok", relay: { connected: false, stale: true } });
      const metrics = await (await fetch(`${offline.url}/metrics`)).text();
      expect(metrics).toContain("svc_relay_upstream_connected 0");
      expect(metrics).toMatch(/svc_relay_queue_depth \d+/);
      // A key it never saw cannot be checked now: 503, not a guess.
      expect((await call(offline.url, "/api/sdk/v1/snapshot", { key: s.clientKey })).status).toBe(503);
      // Events are still taken, kept for the upstream's return (beside the exposures its OFREP answer logged).
      const queued = (await health(offline.url)).relay.queued;
      expect((await call(offline.url, "/api/sdk/v1/events", { body: { events: [{ name: "offline_evt" }] } })).status).toBe(202);
      expect((await health(offline.url)).relay.queued).toBe(queued + 1);
    } finally {
      await offline.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a relay of a relay answers as the upstream and forwards through the chain", async () => {
    const dir = tempDir("svc-relay-chain-");
    const chained = await startRelay({ port: 0, host: "127.0.0.1", dataDir: dir, upstream: relay.url, key: s.serverKey, quiet: true, logRequests: false });
    try {
      await caughtUp(chained.url);
      const [up, edge] = [await call(s.url, "/api/sdk/v1/snapshot?env=prod"), await call(chained.url, "/api/sdk/v1/snapshot?env=prod")];
      expect(edge.text).toBe(up.text);
      expect(edge.headers.get("etag")).toBe(up.headers.get("etag")!);
      await toggle("checkout");
      await caughtUp(chained.url);
      expect((await call(chained.url, "/api/sdk/v1/snapshot?env=prod")).text).toBe((await call(s.url, "/api/sdk/v1/snapshot?env=prod")).text);
      const unit = `chain-${Date.now()}`;
      expect((await call(chained.url, "/api/sdk/v1/events", { body: { events: [{ name: "relay_chain", unitId: unit }] } })).status).toBe(202);
      await until("the chain to deliver", async () => {
        const recent = await s.api(`/api/admin/events/relay_chain/recent`);
        return recent.status === 200 && recent.body.events.some((e: { unitId: string }) => e.unitId === unit);
      });
      await until("both queues to drain", async () => (await health(chained.url)).relay.queued === 0 && (await health(relay.url)).relay.queued === 0);
      expect((await s.api(`/api/admin/events/relay_chain/recent`)).body.events.filter((e: { unitId: string }) => e.unitId === unit)).toHaveLength(1);
    } finally {
      await chained.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
