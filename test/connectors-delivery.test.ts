/**
 * Connector delivery across process deaths and several servers (issue 15):
 * a server SIGKILLed mid-drain loses nothing (its claimed deliveries go out
 * again once their lease runs out, with the same Idempotency-Key, so a
 * receiver that drops repeats sees each event exactly once), and two
 * servers on one PostgreSQL never send one delivery twice.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { SVC_SOURCE, type ServeProcess, freshStoreArgs, startServe } from "./cli/process";
import { TEST_ENGINE, tempDir } from "./helpers";
import { VendorStandIn, standInEnv, waitFor } from "./support/vendor-standin";

const ADMIN_KEY = "sdk_admin_ConnectorDeliveryTestKey0123456789";
const SECRET_KEY = "5e".repeat(32);

const vendor = new VendorStandIn();
const servers: ServeProcess[] = [];
const drops: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const s of servers) s.proc.kill("SIGKILL");
  for (const drop of drops) await drop();
  vendor.stop();
});

async function serve(dataDir: string, storeArgs: string[]): Promise<ServeProcess> {
  const s = await startServe([...SVC_SOURCE, "serve", "--port", "0", "--host", "127.0.0.1", "--data", dataDir, ...storeArgs, "--no-request-log"], {
    env: {
      ...standInEnv(vendor.url),
      SERVICE_INIT_ADMIN_KEY: ADMIN_KEY,
      SERVICE_SECRET_KEY: SECRET_KEY,
      SERVICE_CONNECTOR_MAX_ATTEMPTS: "50",
      // A killed server's claims are free again after 1 s.
      SERVICE_CONNECTOR_LEASE_MS: "1000",
    },
    timeoutMs: 30_000,
  });
  servers.push(s);
  return s;
}

async function call(base: string, path: string, body?: unknown, method?: string) {
  const res = await fetch(base + path, {
    method: method ?? (body === undefined ? "GET" : "POST"),
    headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** `count` killswitch toggles (each emits killswitch.toggled), `parallel` at a time, spread over the servers. */
async function toggles(bases: string[], name: string, count: number, parallel = 8): Promise<void> {
  expect((await call(bases[0]!, "/api/admin/killswitches", { name })).status).toBe(201);
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async (_, w) => {
      while (next < count) {
        next++;
        const res = await call(bases[w % bases.length]!, `/api/admin/killswitches/${name}/toggle`, { env: "prod" });
        expect(res.status).toBe(200);
      }
    }),
  );
}

/** What the receiver saw on `path`: 2xx answers per idempotency key. */
function received(path: string): { total: number; keys: Map<string, number> } {
  const keys = new Map<string, number>();
  let total = 0;
  for (const r of vendor.to(path)) {
    if (r.status >= 300) continue;
    total++;
    const key = r.headers["idempotency-key"]!;
    keys.set(key, (keys.get(key) ?? 0) + 1);
  }
  return { total, keys };
}

describe("connector delivery across a SIGKILL", () => {
  test("a server killed mid-drain: after a restart every event is delivered, repeats only of what was in flight, same key", async () => {
    const store = await freshStoreArgs();
    drops.push(store.drop);
    const dataDir = tempDir();
    // Down while the events are made (they queue up), then up and slow, so that the kill lands mid-drain.
    let up = false;
    vendor.on("/sink-kill", async () => {
      if (!up) return { status: 503 };
      await Bun.sleep(100);
      return { status: 200 };
    });
    const first = await serve(dataDir, store.args);
    const hook = await call(first.url, "/api/admin/connectors", { provider: "webhook", name: "sink", events: ["killswitch.toggled"], config: { url: `${vendor.url}/sink-kill` } });
    expect(hook.status).toBe(201);
    const count = 300;
    await toggles([first.url], "kill-me", count);
    up = true;
    await waitFor(() => received("/sink-kill").total >= 80, 20_000, "the drain to start");
    first.proc.kill("SIGKILL");
    await first.proc.exited;
    const atKill = received("/sink-kill");
    expect(atKill.keys.size).toBeLessThan(count);

    const second = await serve(dataDir, store.args);
    await waitFor(async () => {
      const got = await call(second.url, `/api/admin/connectors/${hook.body.id}`);
      return got.body.deliveries.delivered === count ? got.body : null;
    }, 30_000, "every delivery delivered");
    const after = received("/sink-kill");
    // Nothing lost: every event reached the receiver.
    expect(after.keys.size).toBe(count);
    // Repeats: only deliveries the killed server had sent but not recorded: at most its 64 slots (a slot is free only once
    // its outcome is written); each repeat carries the same Idempotency-Key, for the receiver to drop.
    const repeats = after.total - after.keys.size;
    expect(repeats).toBeLessThanOrEqual(64);
    console.log(`SIGKILL mid-drain (${TEST_ENGINE}): ${atKill.keys.size}/${count} received before the kill, ${repeats} repeated after the restart (same Idempotency-Key), 0 lost`);
    const detail = await call(second.url, `/api/admin/connectors/${hook.body.id}`);
    expect(detail.body.deliveries).toEqual({ pending: 0, delivered: count, failed: 0 });
    expect(await second.stop()).toBe(0);
  }, 90_000);
});

describe.skipIf(TEST_ENGINE !== "postgres")("two servers on one PostgreSQL", () => {
  test("each delivery is sent exactly once though both drain", async () => {
    const store = await freshStoreArgs();
    drops.push(store.drop);
    vendor.on("/sink-two", async () => {
      await Bun.sleep(2);
      return { status: 200 };
    });
    const a = await serve(tempDir(), store.args);
    const b = await serve(tempDir(), store.args);
    const hook = await call(a.url, "/api/admin/connectors", { provider: "webhook", name: "two", events: ["killswitch.toggled"], config: { url: `${vendor.url}/sink-two` } });
    expect(hook.status).toBe(201);
    const count = 500;
    await toggles([a.url, b.url], "shared", count, 10);
    await waitFor(async () => (await call(b.url, `/api/admin/connectors/${hook.body.id}`)).body.deliveries.delivered === count, 30_000, "every delivery delivered");
    await Bun.sleep(500);
    const got = received("/sink-two");
    expect(got.keys.size).toBe(count);
    expect(got.total).toBe(count);
    expect([...got.keys.values()].every((n) => n === 1)).toBe(true);
    // Both servers' test-fires and reads see the same log.
    const log = await call(b.url, `/api/admin/connectors/${hook.body.id}/deliveries?limit=100`);
    expect(log.body.length).toBe(100);
    expect(log.body.every((d: any) => d.status === "delivered" && d.attempts === 1)).toBe(true);
    expect(await a.stop()).toBe(0);
    expect(await b.stop()).toBe(0);
  }, 90_000);
});
