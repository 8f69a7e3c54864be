import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createClient, readEventStream, type Client, type SvcError } from "../../src/sdk";
import { startTestServer, tempDir, type TestServer } from "../helpers";

let s: TestServer;
const clients: Client[] = [];

beforeAll(async () => {
  s = await startTestServer({ streamHeartbeatMs: 200 });
  expect((await s.api("/api/admin/killswitches", { body: { name: "checkout", value: false, switches: { eu: true } } })).status).toBe(201);
  expect((await s.api("/api/admin/killswitches", { body: { name: "search", value: true } })).status).toBe(201);
  const config = await s.api("/api/admin/configs", {
    body: { name: "limits", schema: { type: "object", properties: { perMinute: { type: "integer" } } }, value: { perMinute: 120 } },
  });
  expect(config.status).toBe(201);
  expect((await s.api("/api/admin/configs", { body: { name: "banner", schema: { type: "string" }, value: "hello" } })).status).toBe(201);
});
afterAll(async () => {
  for (const c of clients) c.close();
  await s.stop();
});

function client(options: Partial<Parameters<typeof createClient>[0]> = {}, server: { url: string; serverKey: string } = s) {
  const errors: SvcError[] = [];
  const c = createClient({ baseUrl: server.url, sdkKey: server.serverKey, env: "prod", onError: (e) => errors.push(e), ...options });
  clients.push(c);
  return Object.assign(c, { errors });
}

async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<number> {
  const start = performance.now();
  while (!check()) {
    if (performance.now() - start > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await Bun.sleep(5);
  }
  return performance.now() - start;
}

describe("createClient", () => {
  test("ready() loads the snapshot; isKilled and getConfig answer from it", async () => {
    const c = client();
    await c.ready();
    expect(c.snapshot()).toMatchObject({ projectId: s.projectId, env: "prod" });
    expect(c.isKilled("search")).toBe(true);
    expect(c.isKilled("checkout")).toBe(false);
    expect(c.isKilled("checkout", "eu")).toBe(true);
    expect(c.getConfig("limits", { perMinute: 60 })).toEqual({ perMinute: 120 });
    expect(c.getConfig("banner", "default")).toBe("hello");
    expect(c.errors).toEqual([]);
  });

  test("typed defaults: unknown names and values of another kind give the default", async () => {
    const c = client({ stream: false });
    await c.ready();
    expect(c.isKilled("no-such-switch")).toBe(false);
    expect(c.isKilled("no-such-switch", "eu")).toBe(false);
    // No entry for the key: the killswitch's flat value.
    expect(c.isKilled("search", "us")).toBe(true);
    expect(c.isKilled("checkout", "us")).toBe(false);
    expect(c.getConfig("no-such-config", 42)).toBe(42);
    expect(c.getConfig("limits", 42)).toBe(42);
    expect(c.getConfig("banner", { text: "x" })).toEqual({ text: "x" });
    expect(c.getConfig("limits", ["a"])).toEqual(["a"]);
    expect(c.getConfig<unknown>("limits", null)).toEqual({ perMinute: 120 });
    // Names of Object.prototype members are unknown names, not members.
    for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      expect(c.isKilled(name), name).toBe(false);
      expect(c.isKilled(name, "eu"), name).toBe(false);
      expect(c.getConfig<unknown>(name, null), name).toBeNull();
      expect(c.getConfig(name, 7), name).toBe(7);
    }
  });

  test("answers defaults before the first snapshot", () => {
    const c = client();
    expect(c.snapshot()).toBeNull();
    expect(c.isKilled("search")).toBe(false);
    expect(c.getConfig("limits", { perMinute: 1 })).toEqual({ perMinute: 1 });
  });

  test("sees a toggle through the stream within a second", async () => {
    const c = client({ pollIntervalMs: 600_000 });
    await c.ready();
    const changes: number[] = [];
    c.onChange((snap) => changes.push(snap.revision));
    const before = c.snapshot()!.revision;
    // Let the stream connect before publishing.
    await waitFor(() => s.server.ctx.services.snapshots.listenerCount() > 0, 2000, "stream connected");
    const r = await s.api("/api/admin/killswitches/search/toggle", { body: {} });
    expect(r.status).toBe(200);
    const took = await waitFor(() => c.isKilled("search") === false, 1000, "toggle seen");
    expect(took).toBeLessThan(1000);
    expect(changes).toEqual([before + 1]);
    expect(c.snapshot()!.killswitches.search).toEqual({ ...r.body.published, version: r.body.version });
    await s.api("/api/admin/killswitches/search/toggle", { body: {} });
    await waitFor(() => c.isKilled("search") === true, 1000, "toggle back seen");
  });

  test("without a stream it polls with If-None-Match and gets 304s", async () => {
    const statuses: number[] = [];
    const tags: (string | null)[] = [];
    const c = client({
      stream: false,
      pollIntervalMs: 50,
      fetch: async (input, init) => {
        tags.push(new Headers(init?.headers).get("if-none-match"));
        const res = await fetch(input, init);
        statuses.push(res.status);
        return res;
      },
    });
    await c.ready();
    await waitFor(() => statuses.filter((x) => x === 304).length >= 2, 2000, "304 polls");
    expect(tags[0]).toBeNull();
    expect(tags.at(-1)).toBe(`"${s.projectId}-prod-${c.snapshot()!.revision}"`);
    await s.api("/api/admin/configs/banner", { method: "PATCH", body: { prod: "changed" } });
    await waitFor(() => c.getConfig<string>("banner", "") === "changed", 2000, "poll sees the change");
  });

  test("ready() rejects on a bad key or an unreachable server, and reports the error", async () => {
    const bad = client({ sdkKey: "sdk_server_0000000000000000000000", stream: false });
    const error = await bad.ready().catch((e: SvcError) => e);
    expect(error).toMatchObject({ name: "SvcError", status: 401, code: "UNAUTHORIZED" });
    expect(bad.errors[0]!.status).toBe(401);
    const admin = client({ sdkKey: s.adminKey, stream: false });
    expect(await admin.ready().catch((e: SvcError) => e.status)).toBe(403);
    const down = client({ baseUrl: "http://127.0.0.1:1", stream: false });
    const failure = await down.ready().catch((e: SvcError) => e);
    expect(failure).toMatchObject({ name: "SvcError" });
    expect(failure!.status).toBeUndefined();
  });

  test("keeps serving the last snapshot when the server stops, and resumes with Last-Event-ID after a restart", async () => {
    const dataDir = tempDir();
    let own = await startTestServer({ dataDir, streamHeartbeatMs: 200 });
    const { url, serverKey, adminKey, server } = own;
    expect((await own.api("/api/admin/killswitches", { body: { name: "payments", value: true } })).status).toBe(201);
    const lastEventIds: (string | null)[] = [];
    const c = client(
      {
        // Only the stream can bring the change after the restart.
        pollIntervalMs: 600_000,
        fetch: (input, init) => {
          if (String(input).includes("/stream")) lastEventIds.push(new Headers(init?.headers).get("last-event-id"));
          return fetch(input, init);
        },
      },
      { url, serverKey },
    );
    await c.ready();
    await waitFor(() => server.ctx.services.snapshots.listenerCount() > 0, 2000, "stream connected");
    const revision = c.snapshot()!.revision;
    await own.stop();

    await waitFor(() => c.errors.length >= 2, 3000, "errors reported while down");
    expect(c.isKilled("payments")).toBe(true);
    expect(c.snapshot()!.revision).toBe(revision);
    await c.ready();

    own = await startTestServer({ dataDir, port: server.port, streamHeartbeatMs: 200 });
    const toggled = await own.api("/api/admin/killswitches/payments/toggle", { key: adminKey, body: {} });
    expect(toggled.status).toBe(200);
    await waitFor(() => c.isKilled("payments") === false, 8000, "change after restart");
    expect(c.snapshot()!.revision).toBe(revision + 1);
    // Every connection names the revision the client holds: the first follows the initial load.
    expect(lastEventIds.length).toBeGreaterThanOrEqual(2);
    expect(new Set(lastEventIds)).toEqual(new Set([String(revision)]));
    c.close();
    await own.stop();
  }, 20_000);

  test("close() releases the stream and rejects a pending ready()", async () => {
    const { snapshots } = s.server.ctx.services;
    for (const other of clients) other.close();
    await waitFor(() => snapshots.listenerCount() === 0, 2000, "earlier streams released");
    const c = client();
    await c.ready();
    await waitFor(() => snapshots.listenerCount() === 1, 2000, "stream connected");
    c.close();
    await waitFor(() => snapshots.listenerCount() === 0, 2000, "stream released");
    expect(await c.ready().then(() => "resolved", () => "rejected")).toBe("resolved");
    const fresh = client({ baseUrl: "http://127.0.0.1:1" });
    const pending = fresh.ready();
    fresh.close();
    expect(await pending.then(() => "resolved", (e: SvcError) => e.message)).toContain("closed");
  });
});

describe("readEventStream", () => {
  test("parses events split anywhere, CRLF and CR line ends, comments and multi-line data", async () => {
    const text = ": hello\r\nid: 7\r\nevent: snapshot\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\nid: 8\rdata:x\r\r:ping\n\ndata: last\n\n";
    const bytes = new TextEncoder().encode(text);
    for (const size of [1, 2, 3, 7, bytes.length]) {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < bytes.length; i += size) controller.enqueue(bytes.slice(i, i + size));
          controller.close();
        },
      });
      const events: unknown[] = [];
      await readEventStream(body, (e) => events.push(e));
      expect(events, `chunk size ${size}`).toEqual([
        { event: "snapshot", data: '{"a":\n1}', id: "7" },
        { event: "message", data: "x", id: "8" },
        { event: "message", data: "last", id: "8" },
      ]);
    }
  });
});
