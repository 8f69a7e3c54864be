import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createClient, readEventStream, type Client, type Snapshot, type SvcError } from "../../src/sdk";
import { dropStore, freshStoreUrl, startTestServer, tempDir, type TestServer } from "../helpers";

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
  await Promise.all(clients.map((c) => c.close()));
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
    const snap = c.snapshot()!;
    // The server's tag: `"<epoch>-<projectId>-<env>-<revision>"`, or without the epoch from a server that sends none.
    expect(tags.at(-1)).toBe(`"${snap.epoch ? `${snap.epoch}-` : ""}${s.projectId}-prod-${snap.revision}"`);
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
    // The restart must find the same data: on PostgreSQL runs one database kept across both starts.
    const store = await freshStoreUrl();
    let own = await startTestServer({ dataDir, store, streamHeartbeatMs: 200 });
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

    own = await startTestServer({ dataDir, store, port: server.port, streamHeartbeatMs: 200 });
    const toggled = await own.api("/api/admin/killswitches/payments/toggle", { key: adminKey, body: {} });
    expect(toggled.status).toBe(200);
    await waitFor(() => c.isKilled("payments") === false, 8000, "change after restart");
    expect(c.snapshot()!.revision).toBe(revision + 1);
    // Every connection names the revision the client holds: the first follows the initial load (a poll: the revision
    // alone), later ones send back the id of the stream event that brought it (`<revision>` or `<epoch>-<revision>`).
    expect(lastEventIds.length).toBeGreaterThanOrEqual(2);
    expect(lastEventIds[0]).toBe(String(revision));
    for (const id of lastEventIds) expect(id === String(revision) || id === `${c.snapshot()!.epoch}-${revision}`).toBe(true);
    c.close();
    await own.stop();
    await dropStore(store);
  }, 20_000);

  test("never goes backwards: a slow poll answer that lands after newer stream events is ignored", async () => {
    // An in-process proxy in front of the real server (the client's fetch): it holds back the answer to one poll.
    type Hold = {
      taken: boolean;
      captured: PromiseWithResolvers<string | null>;
      forward: PromiseWithResolvers<void>;
      answered: PromiseWithResolvers<{ status: number; snapshot: Snapshot }>;
      release: PromiseWithResolvers<void>;
      consumed: PromiseWithResolvers<void>;
    };
    let hold: Hold | null = null;
    let holding = false;
    const streamConnected = Promise.withResolvers<void>();
    const laterTags: (string | null)[] = [];
    const c = client({
      pollIntervalMs: 50,
      fetch: async (input, init) => {
        const url = String(input);
        if (url.includes("/stream")) {
          const res = await fetch(input, init);
          // The server subscribes the stream before it answers: from here on, publishes arrive by stream.
          if (res.ok) streamConnected.resolve();
          return res;
        }
        if (!holding || !hold) {
          laterTags.push(new Headers(init?.headers).get("if-none-match"));
          return fetch(input, init);
        }
        // Every other poll while the scenario runs: "not modified", so newer snapshots can only come by stream.
        const h = hold;
        if (h.taken) return new Response(null, { status: 304 });
        h.taken = true;
        h.captured.resolve(new Headers(init?.headers).get("if-none-match"));
        await h.forward.promise;
        const upstream = await fetch(input, init);
        const text = await upstream.text();
        h.answered.resolve({ status: upstream.status, snapshot: JSON.parse(text) });
        await h.release.promise;
        const headers: Record<string, string> = { "content-type": "application/json" };
        const tag = upstream.headers.get("etag");
        if (tag) headers.etag = tag;
        const held = new Response(text, { status: upstream.status, headers });
        // Tells the test once the client has read the answer (its handling runs before this timer).
        const json = held.json.bind(held);
        held.json = async () => {
          try {
            return await json();
          } finally {
            setTimeout(() => h.consumed.resolve(), 0);
          }
        };
        return held;
      },
    });
    await c.ready();
    await streamConnected.promise;
    const base = c.snapshot()!.revision;
    const revisions: number[] = [];
    c.onChange((snap) => revisions.push(snap.revision));

    hold = {
      taken: false,
      captured: Promise.withResolvers(),
      forward: Promise.withResolvers(),
      answered: Promise.withResolvers(),
      release: Promise.withResolvers(),
      consumed: Promise.withResolvers(),
    };
    holding = true;
    // The next poll asks with the tag of revision `base`...
    expect(await hold.captured.promise).toEndWith(`-prod-${base}"`);
    // ...a publish (base + 1) arrives by stream...
    expect((await s.api("/api/admin/configs/banner", { method: "PATCH", body: { prod: "race-1" } })).status).toBe(200);
    await waitFor(() => c.snapshot()!.revision === base + 1, 2000, "first publish by stream");
    // ...the held poll reaches the server now and gets base + 1 in full...
    hold.forward.resolve();
    const answered = await hold.answered.promise;
    expect(answered.status).toBe(200);
    expect(answered.snapshot.revision).toBe(base + 1);
    // ...a toggle (base + 2) arrives by stream before that answer is delivered...
    const toggled = await s.api("/api/admin/killswitches/search/toggle", { body: {} });
    expect(toggled.status).toBe(200);
    await waitFor(() => c.snapshot()!.revision === base + 2, 2000, "toggle by stream");
    const killed = c.isKilled("search");
    expect(killed).toBe(toggled.body.value);
    // ...and then the older answer lands.
    hold.release.resolve();
    await hold.consumed.promise;

    expect(c.snapshot()!.revision).toBe(base + 2);
    expect(c.isKilled("search")).toBe(killed);
    expect(c.getConfig("banner", "")).toBe("race-1");
    expect(revisions).toEqual([base + 1, base + 2]);
    // The next poll names the newest revision, not the stale answer's tag.
    holding = false;
    laterTags.length = 0;
    await waitFor(() => laterTags.length > 0, 2000, "a later poll");
    expect(laterTags[0]).toEndWith(`-prod-${base + 2}"`);
    c.close();
    expect((await s.api("/api/admin/killswitches/search/toggle", { body: {} })).status).toBe(200);
  });

  test("a snapshot of another epoch is taken even with a lower revision; within one epoch only a higher one", async () => {
    // A stand-in for the server's snapshot endpoint, answering whatever `served` says, in full every time
    // (as a cache that ignores If-None-Match would), so the client sees even a repeat of its own revision.
    const base = { projectId: "prj_fake", env: "prod", killswitches: {}, gates: {}, universes: {}, experiments: {}, translations: {} };
    let served: Record<string, unknown> = { ...base, epoch: "e1", revision: 10, configs: { banner: { value: "e1-10", version: 1 } } };
    let requests = 0;
    const fake = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(req) {
        if (new URL(req.url).pathname !== "/api/sdk/v1/snapshot") return new Response("not found", { status: 404 });
        requests++;
        return Response.json(served, { headers: { etag: `"${served.epoch === undefined ? "" : `${served.epoch}-`}${served.projectId}-${served.env}-${served.revision}"` } });
      },
    });
    try {
      const c = client({ stream: false, pollIntervalMs: 20 }, { url: fake.url.origin, serverKey: "sdk_server_fake" });
      await c.ready();
      const seen: string[] = [];
      c.onChange((snap) => seen.push(`${snap.epoch}/${snap.revision}`));
      const serve = async (next: Record<string, unknown>) => {
        served = next;
        const after = requests;
        await waitFor(() => requests >= after + 3, 2000, "three polls");
      };
      const state = () => [c.snapshot()!.epoch, c.snapshot()!.revision, c.getConfig("banner", "")];
      expect(state()).toEqual(["e1", 10, "e1-10"]);

      // Same epoch: a lower revision and the same revision with other content are both ignored.
      await serve({ ...base, epoch: "e1", revision: 9, configs: { banner: { value: "e1-9", version: 1 } } });
      expect(state()).toEqual(["e1", 10, "e1-10"]);
      await serve({ ...base, epoch: "e1", revision: 10, configs: { banner: { value: "e1-10-other", version: 1 } } });
      expect(state()).toEqual(["e1", 10, "e1-10"]);
      // A restored database: a new epoch with a lower revision is taken, then counts up from there.
      await serve({ ...base, epoch: "e2", revision: 3, configs: { banner: { value: "e2-3", version: 1 } } });
      expect(state()).toEqual(["e2", 3, "e2-3"]);
      await serve({ ...base, epoch: "e2", revision: 4, configs: { banner: { value: "e2-4", version: 1 } } });
      expect(state()).toEqual(["e2", 4, "e2-4"]);
      // A server that sends no epoch counts as epoch "": another epoch once, then revisions compare.
      await serve({ ...base, revision: 2, configs: { banner: { value: "none-2", version: 1 } } });
      expect(state()).toEqual(["", 2, "none-2"]);
      await serve({ ...base, revision: 1, configs: { banner: { value: "none-1", version: 1 } } });
      expect(state()).toEqual(["", 2, "none-2"]);
      expect(seen).toEqual(["e2/3", "e2/4", "/2"]);
      expect(c.errors).toEqual([]);
      c.close();
    } finally {
      fake.stop(true);
    }
  });

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
