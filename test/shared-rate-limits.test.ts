/**
 * The limits of the endpoints anyone may call (the public intake, sign-in links, device codes) hold across
 * servers: two servers on one store (the same SQLite file, or the same PostgreSQL database on the PostgreSQL
 * run) give a caller each limit once, not twice, sequential or all at once. Before they were shared, each
 * server counted its own.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { ServerOptions } from "../src/server";
import { Browser, MailCapture, pkcePair } from "./browser";
import { type TestServer, startTestServer } from "./helpers";

const HIGH = { limit: 100_000, windowMs: 60_000 };
const running: TestServer[] = [];

afterEach(async () => {
  // The second first: the first owns the data dir (and the PostgreSQL database).
  for (const s of running.splice(0).reverse()) await s.stop();
});

/** Two servers on one store, with the same options. */
async function twoServers(options: Partial<ServerOptions>): Promise<[TestServer, TestServer]> {
  const first = await startTestServer(options);
  running.push(first);
  const second = await startTestServer({ ...options, dataDir: first.dataDir, store: first.storeUrl });
  running.push(second);
  return [first, second];
}

const fileIdea = (s: TestServer, key: string, i: number) => s.api("/ops/feature-request", { key: null, headers: { "x-sdk-key": key }, body: { title: `Idea ${i}` } });
/** Ideas filed in the first server's project (each server made a project of its own at start; the keys used are the first's). */
const filed = async (s: TestServer) => Number((await s.store.one<{ n: number }>("SELECT COUNT(*) AS n FROM ops_items WHERE project_id = ?", s.projectId))!.n);

describe("limits shared by every server on the store", () => {
  test("public intake per key: the limit counts calls to both servers, one after another and all at once", async () => {
    const [a, b] = await twoServers({ intake: { perKey: { limit: 3, windowMs: 60_000 }, perAddress: HIGH } });
    const key = a.clientKey;
    expect((await fileIdea(a, key, 0)).status).toBe(201);
    expect((await fileIdea(b, key, 1)).status).toBe(201);
    expect((await fileIdea(a, key, 2)).status).toBe(201);
    const limited = await fileIdea(b, key, 3);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: "Too many requests", code: "BAD_REQUEST" });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    // Refused on the first server too, which counted only two of them itself.
    expect((await fileIdea(a, key, 4)).status).toBe(429);
    expect(await filed(a)).toBe(3);

    // Another key of the project, 30 calls at once spread over both: exactly 3 are filed.
    const other = (await a.api("/api/admin/keys", { body: { type: "client", name: "flood" } })).body.key as string;
    const flood = await Promise.all(Array.from({ length: 30 }, (_, i) => fileIdea(i % 2 === 0 ? a : b, other, 100 + i)));
    expect(flood.filter((r) => r.status === 201)).toHaveLength(3);
    expect(flood.filter((r) => r.status === 429)).toHaveLength(27);
    expect(await filed(a)).toBe(6);
  });

  test("public intake per client address: counted across servers before the key is looked at", async () => {
    const [a, b] = await twoServers({ intake: { perKey: HIGH, perAddress: { limit: 2, windowMs: 60_000 } }, network: { trustedProxies: ["loopback"] } });
    const from = (s: TestServer, address: string, i: number) =>
      s.api("/ops/bug", { key: null, headers: { "x-sdk-key": a.clientKey, "x-forwarded-for": address }, body: { title: `From ${address} ${i}` } });
    expect((await from(a, "203.0.113.7", 0)).status).toBe(201);
    expect((await from(b, "203.0.113.7", 1)).status).toBe(201);
    expect((await from(a, "203.0.113.7", 2)).status).toBe(429);
    expect((await from(b, "203.0.113.7", 3)).status).toBe(429);
    expect((await from(b, "198.51.100.9", 4)).status).toBe(201);
    expect(await filed(a)).toBe(3);
  });

  test("sign-in links per email: a third request on either server is 429, and no third link is sent", async () => {
    const mails = new MailCapture();
    const [a, b] = await twoServers({ signIn: { mailer: mails, rateLimits: { magicLinkPerEmail: { limit: 2, windowMs: 15 * 60_000 }, magicLinkPerIp: HIGH } } });
    const request = async (s: TestServer) => {
      const browser = new Browser(s.url);
      await browser.get("/signin");
      return browser.postJson("/auth/magic-link", { email: "owner@example.com" }, { "x-csrf-token": browser.csrf });
    };
    expect((await request(a)).status).toBe(200);
    expect((await request(b)).status).toBe(200);
    const third = await request(a);
    expect(third.status).toBe(429);
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await request(b)).status).toBe(429);
    expect(mails.sent.filter((m) => m.to === "owner@example.com")).toHaveLength(2);
  });

  test("a browser key's ingest per key: what each server let through adds up within a second, then both refuse it", async () => {
    const [a, b] = await twoServers({ browserKeys: { perKey: { limit: 10, windowMs: 60_000 }, perAddress: HIGH } });
    const mint = async () => (await a.api("/api/admin/keys", { body: { type: "browser" } })).body.key as string;
    const key = await mint();
    const send = (s: TestServer, k = key) => s.api("/api/sdk/v1/events", { key: null, headers: { "x-sdk-key": k }, body: { events: [{ name: "page_view" }] } });
    // 8 through each: under the limit for either server alone, 16 together.
    for (let i = 0; i < 8; i++) {
      expect((await send(a)).status).toBe(202);
      expect((await send(b)).status).toBe(202);
    }
    // Both servers add their 8 to the store a second after their first call; the one whose addition fills the
    // window announces it (heard within 250 ms on SQLite). Calls here would count, so the store is watched instead.
    const added = async () => Number((await a.store.one<{ n: number | string | null }>("SELECT MAX(hits) AS n FROM store_rate_windows"))?.n ?? 0);
    for (let i = 0; i < 100 && (await added()) < 16; i++) await Bun.sleep(50);
    expect(await added()).toBe(16);
    await Bun.sleep(750);
    for (const s of [a, b]) {
      const refused = await send(s);
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ error: "Too many requests", code: "BAD_REQUEST" });
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    // Another browser key of the project is not affected.
    const other = await mint();
    expect((await send(b, other)).status).toBe(202);
  });

  test("device codes per client address: 10 at once over both servers make exactly the limit's codes", async () => {
    const [a, b] = await twoServers({ signIn: { rateLimits: { deviceCodePerIp: { limit: 4, windowMs: 60_000 } } } });
    const { challenge } = pkcePair();
    const body = { code_challenge: challenge, code_challenge_method: "S256" };
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).api("/auth/device/code", { key: null, body })));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 429, 429, 429, 429, 429, 429]);
    expect(await a.store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM device_codes")).toEqual({ n: 4 });
    // The store keeps hashes of the limited keys, never an address or an email.
    const keys = await a.store.all<{ key: string }>("SELECT key FROM store_rate_windows");
    expect(keys.length).toBeGreaterThan(0);
    for (const { key } of keys) expect(key).toMatch(/^[0-9a-f]{64}$/);
  });
});
