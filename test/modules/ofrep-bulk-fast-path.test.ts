/**
 * The bulk OFREP 304 from Bun's native router (issue 28, bench "OFREP bulk with a browser key 304 ≥ 0.8× the
 * snapshot 304 path"; src/modules/delivery/fast-path.ts): browser apps poll POST /ofrep/v1/evaluate/flags with
 * If-None-Match, so its 304 is answered ahead of the Elysia pipeline, with the route's own rules; everything
 * else reaches the route with its body intact.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectErrorShape, startTestServer, type TestServer } from "../helpers";

let s: TestServer;
let browserKey: string;
let browserKeyId: string;

const bulk = (key: string, context: Record<string, unknown>, headers: Record<string, string> = {}) =>
  fetch(`${s.url}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { "content-type": "application/json", "x-sdk-key": key, ...headers }, body: JSON.stringify({ context }) });

async function polls304(): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith("svc_http_requests_total{") && l.includes('method="POST"') && l.includes('route="/ofrep/v1/evaluate/flags"') && l.includes('status="304"'));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

beforeAll(async () => {
  s = await startTestServer();
  expect((await s.api("/api/admin/killswitches", { body: { name: "checkout", value: true } })).status).toBe(201);
  const minted = await s.api("/api/admin/keys", { body: { type: "browser" } });
  expect(minted.status).toBe(201);
  browserKey = minted.body.key;
  browserKeyId = minted.body.id;
});
afterAll(() => s?.stop());

describe("POST /ofrep/v1/evaluate/flags with the current tag", () => {
  test("a browser key's 304 is answered natively: no request id made up, the caller's echoed, counted by route template in /metrics", async () => {
    const first = await bulk(browserKey, { targetingKey: "u1" });
    expect(first.status).toBe(200);
    const etag = first.headers.get("etag")!;
    await first.arrayBuffer();
    const before = await polls304();
    const N = 5;
    for (let i = 0; i < N; i++) {
      const r = await bulk(browserKey, { targetingKey: "u1" }, { "if-none-match": etag });
      expect(r.status).toBe(304);
      expect(r.headers.get("etag")).toBe(etag);
      expect(r.headers.get("cache-control")).toBe("no-cache");
      // The Elysia pipeline gives every answer an id; the native path only echoes one (as the snapshot's does).
      expect(r.headers.get("x-request-id")).toBeNull();
    }
    const echoed = await bulk(browserKey, { targetingKey: "u1" }, { "if-none-match": etag, "x-request-id": "poll-7" });
    expect(echoed.status).toBe(304);
    expect(echoed.headers.get("x-request-id")).toBe("poll-7");
    expect((await polls304()) - before).toBe(N + 1);
    // A server key and Bearer take the same path.
    const server = await fetch(`${s.url}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { authorization: `Bearer ${s.serverKey}`, "if-none-match": etag, "content-type": "application/json" }, body: "{}" });
    expect(server.status).toBe(304);
  });

  test("with gates the tag is per context: the same context is 304, another gets its own 200; a toggle is a 200 with a new tag", async () => {
    expect((await s.api("/api/admin/gates", { body: { name: "swiss", rules: [{ conditions: [{ attr: "country", op: "eq", value: "CH" }], passPercentage: 100 }] } })).status).toBe(201);
    const ch = await bulk(browserKey, { targetingKey: "u1", country: "CH" });
    const etag = ch.headers.get("etag")!;
    expect(((await ch.json()).flags as any[]).find((f) => f.key === "swiss").value).toBe(true);
    expect((await bulk(browserKey, { targetingKey: "u1", country: "CH" }, { "if-none-match": etag })).status).toBe(304);
    const de = await bulk(browserKey, { targetingKey: "u1", country: "DE" }, { "if-none-match": etag });
    expect(de.status).toBe(200);
    expect(((await de.json()).flags as any[]).find((f) => f.key === "swiss").value).toBe(false);
    expect((await s.api("/api/admin/killswitches/checkout/value", { method: "PUT", body: { env: "prod", value: false } })).status).toBe(200);
    const after = await bulk(browserKey, { targetingKey: "u1", country: "CH" }, { "if-none-match": etag });
    expect(after.status).toBe(200);
    expect(after.headers.get("etag")).not.toBe(etag);
    expect(((await after.json()).flags as any[]).find((f) => f.key === "checkout").value).toBe(false);
  });

  test("the per-context tag is the body's bytes: a browser key's repeated poll is matched unparsed, the route and the native path agree, the same context written otherwise is one 200", async () => {
    const raw = (key: string, body: string, headers: Record<string, string> = {}) =>
      fetch(`${s.url}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { "content-type": "application/json", "x-sdk-key": key, ...headers }, body });
    const body = '{"context":{"targetingKey":"u9","country":"CH"}}';
    const first = await raw(browserKey, body);
    expect(first.status).toBe(200);
    const etag = first.headers.get("etag")!;
    // The route (a body over the native path's 4 KiB goes there) and the native path tag the same way.
    const padded = JSON.stringify({ context: { targetingKey: "u9", country: "CH" }, note: "x".repeat(5000) });
    const big = await raw(browserKey, padded);
    expect(big.status).toBe(200);
    const viaRoute = await raw(browserKey, padded, { "if-none-match": big.headers.get("etag")! });
    expect(viaRoute.status).toBe(304);
    expect(viaRoute.headers.get("x-request-id")).not.toBeNull();
    const native = await raw(browserKey, body, { "if-none-match": etag });
    expect(native.status).toBe(304);
    expect(native.headers.get("x-request-id")).toBeNull();
    // A browser's poll (with its Origin) is answered natively too, with the CORS answer the pipeline gives.
    const fromPage = await raw(browserKey, body, { "if-none-match": etag, origin: "https://app.example.com" });
    expect(fromPage.status).toBe(304);
    expect(fromPage.headers.get("x-request-id")).toBeNull();
    expect(fromPage.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(fromPage.headers.get("access-control-expose-headers")).toContain("ETag");
    expect(fromPage.headers.get("access-control-allow-credentials")).toBeNull();
    // The same context with other spacing: a 200 (the same answer), under its own tag.
    const spaced = await raw(browserKey, '{ "context": { "targetingKey": "u9", "country": "CH" } }', { "if-none-match": etag });
    expect(spaced.status).toBe(200);
    expect(await spaced.json()).toEqual(await first.json());
    expect(spaced.headers.get("etag")).not.toBe(etag);
  });

  test("what the native path does not answer reaches the route with its body: another env, a bad body, a foreign origin, a revoked key", async () => {
    const first = await bulk(browserKey, { targetingKey: "u2" });
    const etag = first.headers.get("etag")!;
    await first.arrayBuffer();
    const otherEnv = await bulk(browserKey, { targetingKey: "u2", env: "staging" }, { "if-none-match": etag });
    expect(otherEnv.status).toBe(403);
    expect(expectErrorShape(await otherEnv.json()).code).toBe("FORBIDDEN");
    const bad = await fetch(`${s.url}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { "x-sdk-key": browserKey, "if-none-match": etag, "content-type": "application/json" }, body: "{not json" });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ errorCode: "PARSE_ERROR" });
    const badContext = await fetch(`${s.url}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { "x-sdk-key": browserKey, "if-none-match": etag }, body: '{"context": []}' });
    expect(badContext.status).toBe(400);
    expect(await badContext.json()).toMatchObject({ errorCode: "INVALID_CONTEXT" });
    // The project has no domain: a browser key allows any origin, and the answer carries CORS headers (the pipeline's).
    const fromPage = await bulk(browserKey, { targetingKey: "u2" }, { "if-none-match": etag, origin: "http://127.0.0.1:1" });
    expect(fromPage.status).toBe(304);
    expect(fromPage.headers.get("access-control-allow-origin")).toBe("http://127.0.0.1:1");
    expect((await bulk("sdk_browser_nosuchkeynosuchkey0", { targetingKey: "u2" }, { "if-none-match": etag })).status).toBe(401);
    expect((await s.api(`/api/admin/keys/${browserKeyId}`, { method: "DELETE" })).status).toBe(204);
    const revoked = await bulk(browserKey, { targetingKey: "u2" }, { "if-none-match": etag });
    expect(revoked.status).toBe(401);
    expect(expectErrorShape(await revoked.json()).code).toBe("UNAUTHORIZED");
  });
});
