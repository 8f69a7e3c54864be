/**
 * The snapshot poll whose If-None-Match names the current revision (issue 32, item 2; src/modules/delivery/fast-path.ts):
 * answered by Bun's native route from the key check and the revision alone, synchronously, with the prepared 304;
 * counted in /metrics like every poll. Everything that changes or adds to the answer (another env, a stale or
 * listed tag, a request id, an Origin, a revoked key, a publish) gets what the general path gives.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectErrorShape, startTestServer, type TestServer } from "../helpers";

let s: TestServer;

const PATH = "/api/sdk/v1/snapshot";
const poll = (headers: Record<string, string>, query = "?env=prod") => fetch(`${s.url}${PATH}${query}`, { headers: { "x-sdk-key": s.serverKey, ...headers } });

/** The native route's GET handler, called directly: what a matching poll runs, with nothing else interleaved. */
function nativeHandler(): (request: Request) => Response | Promise<Response> {
  const routes = (s.server.app.config.serve as { routes: Record<string, { GET: (request: Request) => Response | Promise<Response> }> }).routes;
  return routes[PATH]!.GET;
}

async function snapshot304s(): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith("svc_http_requests_total{") && l.includes('method="GET"') && l.includes(`route="${PATH}"`) && l.includes('status="304"'));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

beforeAll(async () => {
  s = await startTestServer();
  expect((await s.api("/api/admin/killswitches", { body: { name: "checkout", value: true } })).status).toBe(201);
});
afterAll(() => s?.stop());

describe("a snapshot poll with the current tag", () => {
  test("is answered synchronously by the native route with the prepared 304: no JSON, no gzip, no store read, no request id made up; counted in /metrics", async () => {
    const first = await poll({});
    expect(first.status).toBe(200);
    const etag = first.headers.get("etag")!;
    await first.arrayBuffer();
    // A second poll over HTTP: the key is now remembered by the native route.
    expect((await poll({ "if-none-match": etag })).status).toBe(304);

    const handle = nativeHandler();
    const stringify = JSON.stringify;
    const gzipSync = Bun.gzipSync;
    const snapshots = s.server.ctx.services.snapshots;
    const get = snapshots.get;
    const calls: string[] = [];
    JSON.stringify = ((...args: Parameters<typeof JSON.stringify>) => (calls.push("JSON.stringify"), stringify(...args))) as typeof JSON.stringify;
    Bun.gzipSync = ((...args: Parameters<typeof Bun.gzipSync>) => (calls.push("gzipSync"), gzipSync(...args))) as typeof Bun.gzipSync;
    snapshots.get = ((...args: Parameters<typeof get>) => (calls.push("snapshots.get"), get.apply(snapshots, args))) as typeof get;
    const answers: (Response | Promise<Response>)[] = [];
    try {
      for (let i = 0; i < 3; i++) answers.push(handle(new Request(`${s.url}${PATH}?env=prod`, { headers: { "x-sdk-key": s.serverKey, "if-none-match": etag } })));
    } finally {
      JSON.stringify = stringify;
      Bun.gzipSync = gzipSync;
      snapshots.get = get;
    }
    expect(calls).toEqual([]);
    for (const answer of answers) {
      expect(answer).toBeInstanceOf(Response);
      const r = answer as Response;
      expect(r.status).toBe(304);
      expect(await r.text()).toBe("");
      expect(r.headers.get("etag")).toBe(etag);
      expect(r.headers.get("cache-control")).toBe("no-cache");
      expect(r.headers.get("vary")).toBe("Accept-Encoding, Origin");
      expect(r.headers.get("x-request-id")).toBeNull();
    }

    const before = await snapshot304s();
    for (let i = 0; i < 4; i++) expect((await poll({ "if-none-match": etag })).status).toBe(304);
    expect((await snapshot304s()) - before).toBe(4);
  });

  test("what changes or adds to the answer still gets it: a request id echoed, listed and weak tags, another env's tag, an Origin", async () => {
    const first = await poll({});
    const etag = first.headers.get("etag")!;
    await first.arrayBuffer();
    const echoed = await poll({ "if-none-match": etag, "x-request-id": "poll-9" });
    expect(echoed.status).toBe(304);
    expect(echoed.headers.get("x-request-id")).toBe("poll-9");
    for (const tag of [`W/${etag}`, `"other", ${etag}`, "*"]) expect([tag, (await poll({ "if-none-match": tag })).status]).toEqual([tag, 304]);
    // The prod tag sent for dev: dev's full answer.
    const dev = await poll({ "if-none-match": etag }, "?env=dev");
    expect(dev.status).toBe(200);
    expect(dev.headers.get("etag")).not.toBe(etag);
    expect((await dev.json()).env).toBe("dev");
    // Without ?env the project's default env answers (the general path), the same 304.
    expect((await poll({ "if-none-match": etag }, "")).status).toBe(304);
    // An Origin goes through the pipeline (the project has no domain, so any origin is admitted), which adds CORS.
    const fromPage = await poll({ "if-none-match": etag, origin: "https://app.test" });
    expect(fromPage.status).toBe(304);
    expect(fromPage.headers.get("access-control-allow-origin")).toBe("https://app.test");
  });

  test("a publish ends the 304 at once; the new tag is matched next, per project; a revoked key is refused even with the current tag", async () => {
    const first = await poll({});
    const etag = first.headers.get("etag")!;
    await first.arrayBuffer();
    expect((await poll({ "if-none-match": etag })).status).toBe(304);
    expect((await s.api("/api/admin/killswitches/checkout/toggle", { body: {} })).status).toBe(200);
    const after = await poll({ "if-none-match": etag });
    expect(after.status).toBe(200);
    const next = after.headers.get("etag")!;
    expect(next).not.toBe(etag);
    await after.arrayBuffer();
    expect((await poll({ "if-none-match": next })).status).toBe(304);

    // Another project polled in between: each key keeps its own revision.
    const other = await s.newProject("Other");
    const theirs = await fetch(`${s.url}${PATH}?env=prod`, { headers: { "x-sdk-key": other.serverKey } });
    const theirTag = theirs.headers.get("etag")!;
    await theirs.arrayBuffer();
    for (let i = 0; i < 2; i++) {
      const mine = await poll({ "if-none-match": next });
      expect([mine.status, mine.headers.get("etag")]).toEqual([304, next]);
      const their = await fetch(`${s.url}${PATH}?env=prod`, { headers: { "x-sdk-key": other.serverKey, "if-none-match": theirTag } });
      expect([their.status, their.headers.get("etag")]).toEqual([304, theirTag]);
      // My tag with their key: theirs is another project's revision, so a full answer.
      const crossed = await fetch(`${s.url}${PATH}?env=prod`, { headers: { "x-sdk-key": other.serverKey, "if-none-match": next } });
      expect([crossed.status, crossed.headers.get("etag")]).toEqual([200, theirTag]);
      await crossed.arrayBuffer();
    }

    const keys = await s.api("/api/admin/keys", { key: other.adminKey });
    const id = (keys.body.items ?? keys.body).find((k: { type: string }) => k.type === "server").id;
    expect((await s.api(`/api/admin/keys/${id}`, { key: other.adminKey, method: "DELETE" })).status).toBe(204);
    const revoked = await fetch(`${s.url}${PATH}?env=prod`, { headers: { "x-sdk-key": other.serverKey, "if-none-match": theirTag } });
    expect(revoked.status).toBe(401);
    expect(expectErrorShape(await revoked.json()).code).toBe("UNAUTHORIZED");
  });
});
