import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { currentRevision } from "../../src/lib/revisions";
import { TEST_ENGINE, expectErrorShape, startTestServer, type ApiResponse, type ProjectKeys, type TestServer } from "../helpers";

let s: TestServer;
let foreign: ProjectKeys;
let counter = 0;

const HEARTBEAT_MS = 150;

beforeAll(async () => {
  s = await startTestServer({ streamHeartbeatMs: HEARTBEAT_MS });
  foreign = await s.newProject("Foreign");
});
afterAll(() => s.stop());

const unique = (prefix: string) => `${prefix}-${++counter}-${Date.now()}`;
/** The database's epoch: part of every ETag and stream event id. */
const epoch = () => s.store.epoch;

/** An SDK call with the server key in X-SDK-Key (pass `key: null` for none). */
function sdk(path: string, init: { key?: string | null; headers?: Record<string, string>; body?: unknown; rawBody?: string; method?: string } = {}) {
  const key = init.key === undefined ? s.serverKey : init.key;
  const headers = { ...(key ? { "x-sdk-key": key } : {}), ...init.headers };
  return s.api(path, { key: null, headers, body: init.body, rawBody: init.rawBody, method: init.method });
}

async function createKillswitch(body: Record<string, unknown> = {}, adminKey = s.adminKey): Promise<string> {
  const name = (body.name as string | undefined) ?? unique("ks");
  const r = await s.api("/api/admin/killswitches", { key: adminKey, body: { name, ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return name;
}

async function createConfig(value: unknown, schema: unknown = { type: "object" }): Promise<string> {
  const name = unique("cfg");
  const r = await s.api("/api/admin/configs", { body: { name, schema, value } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return name;
}

async function toggle(name: string, body: Record<string, unknown> = {}) {
  const r = await s.api(`/api/admin/killswitches/${encodeURIComponent(name)}/toggle`, { body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

/** A raw SSE reader: collects events (and heartbeat comments) as the server sends them. */
async function openStream(path: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const res = await fetch(s.url + path, { headers: { "x-sdk-key": s.serverKey, ...headers }, signal: controller.signal });
  const events: { id: string; event: string; data: string; at: number }[] = [];
  let comments = 0;
  let buffer = "";
  let waiting = null as (() => void) | null;
  const done = (async () => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n\n")) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (block.startsWith(":")) comments++;
        else {
          const field = (name: string) => block.split("\n").find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2) ?? "";
          events.push({ id: field("id"), event: field("event"), data: field("data"), at: performance.now() });
        }
        waiting?.();
      }
    }
  })().catch(() => {});
  const until = async (check: () => boolean, timeoutMs = 2000) => {
    const deadline = performance.now() + timeoutMs;
    while (!check()) {
      if (performance.now() > deadline) throw new Error(`stream condition not met in ${timeoutMs} ms; events: ${events.map((e) => e.id).join(",")}`);
      await new Promise<void>((resolve) => {
        waiting = resolve;
        setTimeout(resolve, 20);
      });
    }
  };
  return {
    res,
    events,
    comments: () => comments,
    until,
    async close() {
      controller.abort();
      await done;
    },
  };
}

describe("GET /api/sdk/v1/snapshot", () => {
  test("holds exactly what is published on each env, with every section", async () => {
    const ks = await createKillswitch({ switches: { eu: true } });
    const cfg = await createConfig({ retries: 3 });
    await toggle(ks, { env: "dev" });
    expect((await s.api(`/api/admin/configs/${cfg}`, { method: "PATCH", body: { dev: { retries: 5 } } })).status).toBe(200);

    const dev = await sdk("/api/sdk/v1/snapshot?env=dev");
    const prod = await sdk("/api/sdk/v1/snapshot?env=prod");
    expect(dev.status).toBe(200);
    expect(dev.headers.get("content-type")).toBe("application/json");
    expect(dev.headers.get("cache-control")).toBe("no-cache");
    expect(dev.headers.get("vary")).toContain("Accept-Encoding");
    expect(Object.keys(dev.body).sort()).toEqual(
      ["configs", "env", "epoch", "experiments", "gates", "killswitches", "projectId", "revision", "rollouts", "translations", "universes"].sort(),
    );
    expect(dev.body).toMatchObject({ projectId: s.projectId, env: "dev", epoch: epoch(), gates: {}, universes: {}, experiments: {}, translations: {}, rollouts: {} });
    expect(dev.body.killswitches[ks]).toEqual({ value: true, switches: { eu: true }, version: 2 });
    expect(prod.body.killswitches[ks]).toEqual({ value: false, switches: { eu: true }, version: 1 });
    expect(dev.body.configs[cfg]).toEqual({ value: { retries: 5 }, version: 2 });
    expect(prod.body.configs[cfg]).toEqual({ value: { retries: 3 }, version: 1 });

    // The stored state, read through the services, is what was served.
    const { killswitches, configs } = s.server.ctx.services;
    for (const [env, body] of [["dev", dev.body], ["prod", prod.body]] as const) {
      expect(body.killswitches).toEqual(await killswitches.publishedForEnv(s.projectId, env));
      expect(body.configs).toEqual(await configs.publishedForEnv(s.projectId, env));
      expect(body.revision).toBe(await currentRevision(s.store, s.projectId, env));
    }
  });

  test("without env it serves the project's defaultEnv", async () => {
    const other = await s.newProject("Default env");
    const name = await createKillswitch({}, other.adminKey);
    const patched = await s.api(`/api/admin/projects/${other.projectId}`, { key: other.adminKey, method: "PATCH", body: { defaultEnv: "staging" } });
    expect(patched.status).toBe(200);
    const r = await sdk("/api/sdk/v1/snapshot", { key: other.serverKey });
    expect(r.status).toBe(200);
    expect(r.body.env).toBe("staging");
    expect(r.body.killswitches[name]).toEqual({ value: false, switches: {}, version: 1 });
    expect(r.headers.get("etag")).toBe(`"${epoch()}-${other.projectId}-staging-${r.body.revision}"`);
  });

  test("a bad env is VALIDATION naming env", async () => {
    for (const path of ["/api/sdk/v1/snapshot?env=production", "/api/sdk/v1/snapshot?env=", "/api/sdk/v1/stream?env=PROD"]) {
      const r = await sdk(path);
      expect(r.status, path).toBe(400);
      expect(expectErrorShape(r.body).code).toBe("VALIDATION");
      expect(r.body.detail).toContain("env");
    }
  });

  test("a strong ETag per revision; If-None-Match answers 304 with no body until the next publish", async () => {
    const ks = await createKillswitch();
    const first = await sdk("/api/sdk/v1/snapshot?env=prod");
    const etag = first.headers.get("etag")!;
    expect(etag).toBe(`"${epoch()}-${s.projectId}-prod-${first.body.revision}"`);

    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const r = await sdk("/api/sdk/v1/snapshot?env=prod", { headers: { "if-none-match": ifNoneMatch, "x-request-id": "poll-1" } });
      expect(r.status, ifNoneMatch).toBe(304);
      expect(r.text).toBe("");
      expect(r.headers.get("etag")).toBe(etag);
      expect(r.headers.get("cache-control")).toBe("no-cache");
      // The caller's id is echoed; none is made up for a poll no log line names (docs/api.md "Errors").
      expect(r.headers.get("x-request-id")).toBe("poll-1");
    }
    // Bearer works on the fast path too.
    const bearer = await s.api("/api/sdk/v1/snapshot?env=prod", { key: s.serverKey, headers: { "if-none-match": etag } });
    expect(bearer.status).toBe(304);

    const stale = await sdk("/api/sdk/v1/snapshot?env=prod", { headers: { "if-none-match": `"${s.projectId}-prod-0"` } });
    expect(stale.status).toBe(200);
    expect(stale.headers.get("etag")).toBe(etag);

    const toggled = await toggle(ks);
    const after = await sdk("/api/sdk/v1/snapshot?env=prod", { headers: { "if-none-match": etag } });
    expect(after.status).toBe(200);
    expect(after.body.revision).toBe(first.body.revision + 1);
    expect(after.body.killswitches[ks]).toEqual({ ...toggled.published, version: toggled.version });
    expect(after.headers.get("etag")).toBe(`"${epoch()}-${s.projectId}-prod-${first.body.revision + 1}"`);
    // Another env's tag never matches this one.
    const devTag = (await sdk("/api/sdk/v1/snapshot?env=dev")).headers.get("etag")!;
    expect((await sdk("/api/sdk/v1/snapshot?env=prod", { headers: { "if-none-match": devTag } })).status).toBe(200);
  });

  test("every publish bumps the revision of its env only", async () => {
    const ks = await createKillswitch();
    const cfg = await createConfig({ n: 1 });
    const rev = async (env: string) => (await sdk(`/api/sdk/v1/snapshot?env=${env}`)).body.revision as number;
    const before = { dev: await rev("dev"), staging: await rev("staging"), prod: await rev("prod") };
    await toggle(ks, { env: "staging" });
    expect(await rev("staging")).toBe(before.staging + 1);
    expect(await rev("dev")).toBe(before.dev);
    expect(await rev("prod")).toBe(before.prod);
    expect((await s.api(`/api/admin/killswitches/${ks}/value`, { method: "PUT", body: { env: "prod", value: true } })).status).toBe(200);
    expect(await rev("prod")).toBe(before.prod + 1);
    expect((await s.api(`/api/admin/configs/${cfg}`, { method: "PATCH", body: { value: { n: 2 } } })).status).toBe(200);
    expect(await rev("dev")).toBe(before.dev + 1);
    expect(await rev("staging")).toBe(before.staging + 2);
    expect(await rev("prod")).toBe(before.prod + 2);
  });

  test("a publish that commits while a build's last read is in flight is never hidden by that build: the writer reads its own write", async () => {
    // On PostgreSQL a build's closing revision read can be answered before another write commits and reach the
    // server after that write's announcement; the build then holds the older revision. Here the store's read is
    // wrapped to publish at exactly that moment (the read itself stays real). The toggle comes from another
    // process on the same store: this server's own publishes keep what their transaction read, and build nothing.
    const ks = await createKillswitch();
    // An entry for prod is kept, so the toggle below makes the server rebuild it once it hears of it.
    expect((await sdk("/api/sdk/v1/snapshot?env=prod")).body.killswitches[ks].value).toBe(false);
    const store = s.store as typeof s.store & { one: typeof s.store.one };
    const realOne = store.one.bind(store);
    let revisionReads = 0;
    let published: Promise<unknown> | undefined;
    store.one = (async (sql: string, ...params: unknown[]) => {
      const row = await realOne(sql, ...(params as never[]));
      if (sql.startsWith("SELECT revision FROM env_revisions") && params[0] === s.projectId && params[1] === "prod" && ++revisionReads === 2 && !published) {
        published = s.api(`/api/admin/killswitches/${ks}/value`, { method: "PUT", body: { env: "prod", value: false } });
        await published;
      }
      return row;
    }) as typeof store.one;
    try {
      // The entry goes stale, and the build started for it reads the revision twice; the second time, another publish lands.
      const child = Bun.spawn([process.execPath, join(import.meta.dir, "../fixtures/delivery-publisher.ts"), s.dataDir, s.projectId, ks, "prod"], {
        env: { ...process.env, SERVICE_STORE_URL: s.storeUrl ?? "" },
        stdout: "pipe",
        stderr: "pipe",
      });
      expect(await child.exited, await new Response(child.stderr).text()).toBe(0);
      // This server hears of it within its poll (SQLite) or at once (PostgreSQL's NOTIFY).
      for (let i = 0; i < 400 && !published; i++) await Bun.sleep(5);
      expect(published).toBeDefined();
      expect(((await published) as { status: number }).status).toBe(200);
    } finally {
      delete (store as { one?: unknown }).one;
    }
    const stored = await currentRevision(s.store, s.projectId, "prod");
    const seen = await sdk("/api/sdk/v1/snapshot?env=prod");
    expect(seen.body.revision).toBe(stored);
    // The toggle turned it on, the publish inside the build's read turned it off again.
    expect(seen.body.killswitches[ks].value).toBe(false);
  });

  test("gzip bytes when the client takes gzip, plain bytes otherwise", async () => {
    await createKillswitch({ switches: { a: true, b: false } });
    const headers = { "x-sdk-key": s.serverKey };
    const gz = await fetch(`${s.url}/api/sdk/v1/snapshot?env=prod`, { headers: { ...headers, "accept-encoding": "gzip, deflate" }, decompress: false } as RequestInit);
    expect(gz.status).toBe(200);
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    const zipped = new Uint8Array(await gz.arrayBuffer());
    const plain = await fetch(`${s.url}/api/sdk/v1/snapshot?env=prod`, { headers: { ...headers, "accept-encoding": "identity" }, decompress: false } as RequestInit);
    expect(plain.headers.get("content-encoding")).toBeNull();
    const text = await plain.text();
    expect(new TextDecoder().decode(Bun.gunzipSync(zipped))).toBe(text);
    expect(zipped.length).toBeLessThan(text.length);
    const refused = await fetch(`${s.url}/api/sdk/v1/snapshot?env=prod`, { headers: { ...headers, "accept-encoding": "gzip;q=0" }, decompress: false } as RequestInit);
    expect(refused.headers.get("content-encoding")).toBeNull();
  });

  test("a publish by another process on the same data file shows within a second", async () => {
    const ks = await createKillswitch();
    const before = await sdk("/api/sdk/v1/snapshot?env=prod");
    expect(before.body.killswitches[ks].value).toBe(false);
    const child = Bun.spawn([process.execPath, join(import.meta.dir, "../fixtures/delivery-publisher.ts"), s.dataDir, s.projectId, ks, "prod"], {
      // The child opens the same store: the data dir's file, or the server's PostgreSQL database.
      env: { ...process.env, SERVICE_STORE_URL: s.storeUrl ?? "" },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(await child.exited, await new Response(child.stderr).text()).toBe(0);
    const published = JSON.parse(await new Response(child.stdout).text()) as { version: number; revision: number; at: number };
    let seenAt = 0;
    for (;;) {
      const r = await sdk("/api/sdk/v1/snapshot?env=prod", { headers: { "if-none-match": before.headers.get("etag")! } });
      if (r.status === 200 && r.body.killswitches[ks].value === true) {
        seenAt = Date.now();
        expect(r.body.revision).toBe(published.revision);
        expect(r.body.killswitches[ks].version).toBe(published.version);
        break;
      }
      if (Date.now() - published.at > 2000) throw new Error("the other process's publish never showed");
      await Bun.sleep(20);
    }
    expect(seenAt - published.at).toBeLessThan(1000);
  });

  test("a browser on the project's domain gets CORS headers; another origin is refused; preflight is 204", async () => {
    const other = await s.newProject("Browser project");
    const patched = await s.api(`/api/admin/projects/${other.projectId}`, { key: other.adminKey, method: "PATCH", body: { domain: "example.com" } });
    expect(patched.status).toBe(200);
    const ok = await sdk("/api/sdk/v1/snapshot?env=prod", { key: other.serverKey, headers: { origin: "https://example.com" } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://example.com");
    expect(ok.headers.get("access-control-expose-headers")).toContain("ETag");
    const etag = ok.headers.get("etag")!;
    const notModified = await sdk("/api/sdk/v1/snapshot?env=prod", { key: other.serverKey, headers: { origin: "https://example.com", "if-none-match": etag } });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get("access-control-allow-origin")).toBe("https://example.com");

    for (const headers of [{ origin: "https://evil.test" }, { origin: "https://evil.test", "if-none-match": etag }] as Record<string, string>[]) {
      const evil = await sdk("/api/sdk/v1/snapshot?env=prod", { key: other.serverKey, headers });
      expect(evil.status).toBe(403);
      expect(expectErrorShape(evil.body).code).toBe("FORBIDDEN");
    }
    const evilOfrep = await sdk("/ofrep/v1/evaluate/flags", { key: other.serverKey, headers: { origin: "https://evil.test" }, body: {} });
    expect(evilOfrep.status).toBe(403);

    for (const path of ["/api/sdk/v1/snapshot", "/api/sdk/v1/stream", "/ofrep/v1/evaluate/flags", "/ofrep/v1/evaluate/flags/a/b"]) {
      const pre = await fetch(s.url + path, {
        method: "OPTIONS",
        headers: { origin: "https://example.com", "access-control-request-method": "POST", "access-control-request-headers": "x-sdk-key, content-type" },
      });
      expect(pre.status, path).toBe(204);
      expect(pre.headers.get("access-control-allow-origin")).toBe("https://example.com");
      expect(pre.headers.get("access-control-allow-headers")!.toLowerCase()).toContain("x-sdk-key");
    }
  });
});

describe("GET /api/sdk/v1/stream", () => {
  test("sends the current snapshot, then one event per publish on its env, and heartbeats", async () => {
    const ks = await createKillswitch();
    const stream = await openStream("/api/sdk/v1/stream?env=prod");
    expect(stream.res.status).toBe(200);
    expect(stream.res.headers.get("content-type")).toStartWith("text/event-stream");
    expect(stream.res.headers.get("cache-control")).toBe("no-cache");
    await stream.until(() => stream.events.length === 1);
    const first = stream.events[0]!;
    const current = (await sdk("/api/sdk/v1/snapshot?env=prod")).body;
    expect(first.event).toBe("snapshot");
    expect(first.id).toBe(`${epoch()}-${current.revision}`);
    expect(JSON.parse(first.data)).toEqual(current);

    await toggle(ks, { env: "dev" }); // another env: no event here
    const toggled = await toggle(ks);
    await stream.until(() => stream.events.length === 2);
    const second = stream.events[1]!;
    expect(second.id).toBe(`${epoch()}-${current.revision + 1}`);
    expect(JSON.parse(second.data).killswitches[ks]).toEqual({ ...toggled.published, version: toggled.version });

    await toggle(ks, { switchKey: "eu" });
    await stream.until(() => stream.events.length === 3);
    expect(JSON.parse(stream.events[2]!.data).killswitches[ks].switches).toEqual({ eu: true });

    await stream.until(() => stream.comments() >= 1, HEARTBEAT_MS * 4);
    expect(stream.events.map((e) => e.id)).toEqual([0, 1, 2].map((n) => `${epoch()}-${current.revision + n}`));
    await stream.close();
  });

  test("resumes with Last-Event-ID: nothing re-sent when it is current, the snapshot when it is stale", async () => {
    const ks = await createKillswitch();
    const revision = (await sdk("/api/sdk/v1/snapshot?env=prod")).body.revision as number;
    const resumed = await openStream("/api/sdk/v1/stream?env=prod", { "last-event-id": `${epoch()}-${revision}` });
    await resumed.until(() => resumed.comments() >= 2, HEARTBEAT_MS * 5);
    expect(resumed.events).toEqual([]);
    await toggle(ks);
    await resumed.until(() => resumed.events.length === 1);
    expect(resumed.events[0]!.id).toBe(`${epoch()}-${revision + 1}`);
    await resumed.close();

    const stale = await openStream("/api/sdk/v1/stream?env=prod", { "last-event-id": `${epoch()}-${revision}` });
    await stale.until(() => stale.events.length === 1);
    expect(stale.events[0]!.id).toBe(`${epoch()}-${revision + 1}`);
    expect(JSON.parse(stale.events[0]!.data).killswitches[ks].value).toBe(true);
    await stale.close();

    // The same revision number from another epoch (a restored database) names other content: the snapshot is sent.
    const otherEpoch = await openStream("/api/sdk/v1/stream?env=prod", { "last-event-id": `Zz9restored-${revision + 1}` });
    await otherEpoch.until(() => otherEpoch.events.length === 1);
    expect(otherEpoch.events[0]!.id).toBe(`${epoch()}-${revision + 1}`);
    await otherEpoch.close();
    // A bare revision (what older SDKs sent) is not trusted either.
    const bare = await openStream("/api/sdk/v1/stream?env=prod", { "last-event-id": String(revision + 1) });
    await bare.until(() => bare.events.length === 1);
    await bare.close();
  });

  test("a disconnect releases the subscription", async () => {
    const { snapshots } = s.server.ctx.services;
    const settled = async (count: number) => {
      const deadline = Date.now() + 2000;
      while (snapshots.listenerCount() !== count && Date.now() < deadline) await Bun.sleep(20);
      return snapshots.listenerCount();
    };
    // Earlier tests' streams are closed; their server side lets go asynchronously.
    expect(await settled(0)).toBe(0);
    const streams = await Promise.all([openStream("/api/sdk/v1/stream?env=dev"), openStream("/api/sdk/v1/stream")]);
    for (const st of streams) await st.until(() => st.events.length === 1);
    expect(snapshots.listenerCount()).toBe(2);
    for (const st of streams) await st.close();
    expect(await settled(0)).toBe(0);
  });

  test("a publish reads its env's snapshot once: the read its size check made is the entry served and streamed (issue 32)", async () => {
    const ks = await createKillswitch();
    const stream = await openStream("/api/sdk/v1/stream?env=prod");
    await stream.until(() => stream.events.length === 1);
    // Reads stay real; the killswitches section's query of prod is counted (the size check inside the toggle's
    // transaction reads every section once; a second read would be the snapshot built again after the commit).
    const store = s.store as typeof s.store & { all: typeof s.store.all };
    const realAll = store.all.bind(store);
    let sectionReads = 0;
    store.all = (async (sql: string, ...params: unknown[]) => {
      if (sql.includes("FROM killswitches e JOIN killswitch_envs l") && params[0] === s.projectId && params[1] === "prod") sectionReads++;
      return realAll(sql, ...(params as never[]));
    }) as typeof store.all;
    let served: ApiResponse;
    let toggled: any;
    try {
      toggled = await toggle(ks);
      await stream.until(() => stream.events.length === 2);
      served = await sdk("/api/sdk/v1/snapshot?env=prod");
    } finally {
      delete (store as { all?: unknown }).all;
    }
    expect(sectionReads).toBe(1);
    const stored = await currentRevision(s.store, s.projectId, "prod");
    expect(served.status).toBe(200);
    expect(served.body.revision).toBe(stored);
    expect(served.body.killswitches[ks]).toEqual({ ...toggled.published, version: toggled.version });
    expect(stream.events[1]!.id).toBe(`${epoch()}-${stored}`);
    expect(stream.events[1]!.data).toBe(served.text);
    await stream.close();
  });

  test("a publish in a project without segments reads the configs section once: the segments section has nothing to look up (issue 32)", async () => {
    const other = await s.newProject("Without segments");
    const name = unique("ks");
    expect((await s.api("/api/admin/killswitches", { key: other.adminKey, body: { name } })).status).toBe(201);
    expect((await s.api("/api/admin/configs", { key: other.adminKey, body: { name: unique("cfg"), schema: { type: "object" }, value: { limit: 1 } } })).status).toBe(201);
    const store = s.store as typeof s.store & { all: typeof s.store.all };
    const realAll = store.all.bind(store);
    let configReads = 0;
    store.all = (async (sql: string, ...params: unknown[]) => {
      if (sql.includes("FROM configs e JOIN config_values l") && params[0] === other.projectId && params[1] === "prod") configReads++;
      return realAll(sql, ...(params as never[]));
    }) as typeof store.all;
    try {
      const r = await s.api(`/api/admin/killswitches/${name}/toggle`, { key: other.adminKey, body: {} });
      expect(r.status).toBe(200);
    } finally {
      delete (store as { all?: unknown }).all;
    }
    expect(configReads).toBe(1);
    const snapshot = await sdk("/api/sdk/v1/snapshot?env=prod", { key: other.serverKey });
    expect(snapshot.body.killswitches[name].value).toBe(true);
    expect(snapshot.body.segments).toBeUndefined();
  });

  test("publish-to-delivery p99 under 50 ms", async () => {
    const ks = await createKillswitch();
    const stream = await openStream("/api/sdk/v1/stream?env=prod");
    await stream.until(() => stream.events.length === 1);
    const latencies: number[] = [];
    for (let i = 0; i < 40; i++) {
      const sent = performance.now();
      const n = stream.events.length;
      await s.api(`/api/admin/killswitches/${ks}/toggle`, { body: {} });
      await stream.until(() => stream.events.length === n + 1);
      latencies.push(stream.events[n]!.at - sent);
    }
    latencies.sort((a, b) => a - b);
    const p99 = latencies[Math.floor(latencies.length * 0.99)]!;
    // The 50 ms target is SQLite's (issue 3); on PostgreSQL a delivery also waits for the rebuild's round trips, measured in `bun run bench --only stores`.
    expect(p99).toBeLessThan(TEST_ENGINE === "postgres" ? 250 : 50);
    await stream.close();
  });
});

describe("OFREP", () => {
  let ks: string;
  let cfg: string;
  beforeAll(async () => {
    ks = await createKillswitch({ value: true, switches: { eu: false } });
    cfg = await createConfig({ retries: 3, mode: "fast" });
    await toggle(ks, { env: "dev" });
  });

  const evaluate = (key: string, body: unknown = { context: { targetingKey: "user-1" } }, init: { key?: string | null; headers?: Record<string, string> } = {}) =>
    sdk(`/ofrep/v1/evaluate/flags/${key}`, { ...init, body });

  test("a killswitch is a boolean flag with variant on/off and its version", async () => {
    const r = await evaluate(ks);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toStartWith("application/json");
    expect(r.body).toEqual({ key: ks, value: true, reason: "STATIC", variant: "on", metadata: { version: 1 } });
    const dev = await evaluate(ks, { context: { env: "dev" } });
    expect(dev.body).toEqual({ key: ks, value: false, reason: "STATIC", variant: "off", metadata: { version: 2 } });
    // Bearer works as well as X-SDK-Key.
    const bearer = await s.api(`/ofrep/v1/evaluate/flags/${ks}`, { key: s.serverKey, body: {} });
    expect(bearer.status).toBe(200);
  });

  test("name/switchKey (unencoded) is the sub-switch; a missing entry falls back to the flat value", async () => {
    expect((await evaluate(`${ks}/eu`)).body).toEqual({ key: `${ks}/eu`, value: false, reason: "STATIC", variant: "off", metadata: { version: 1 } });
    expect((await evaluate(`${ks}/us`)).body).toEqual({ key: `${ks}/us`, value: true, reason: "STATIC", variant: "on", metadata: { version: 1 } });
    expect((await evaluate(`${ks}%2Feu`)).body.value).toBe(false);
    const missing = await evaluate(`no-such/eu`);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ key: "no-such/eu", errorCode: "FLAG_NOT_FOUND" });
  });

  test("a config is an object flag with its published value", async () => {
    const r = await evaluate(cfg, {});
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ key: cfg, value: { retries: 3, mode: "fast" }, reason: "STATIC", metadata: { version: 1 } });
  });

  test("unknown flag is 404 FLAG_NOT_FOUND; bad bodies are 400 PARSE_ERROR / INVALID_CONTEXT", async () => {
    const unknown = await evaluate("nope");
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toStartWith("application/json");
    expect(unknown.body).toMatchObject({ key: "nope", errorCode: "FLAG_NOT_FOUND" });

    const cases: [string, string][] = [
      ["{not json", "PARSE_ERROR"],
      ["[1,2]", "PARSE_ERROR"],
      ['"text"', "PARSE_ERROR"],
      ['{"context": 5}', "INVALID_CONTEXT"],
      ['{"context": [1]}', "INVALID_CONTEXT"],
      ['{"context": {"env": "production"}}', "INVALID_CONTEXT"],
      ['{"context": {"env": 3}}', "INVALID_CONTEXT"],
    ];
    for (const [rawBody, errorCode] of cases) {
      const r = await sdk(`/ofrep/v1/evaluate/flags/${ks}`, { rawBody });
      expect(r.status, rawBody).toBe(400);
      expect(r.body, rawBody).toMatchObject({ key: ks, errorCode });
      expect(typeof r.body.errorDetails).toBe("string");
      const bulk = await sdk("/ofrep/v1/evaluate/flags", { rawBody });
      expect(bulk.status, rawBody).toBe(400);
      expect(bulk.body.errorCode, rawBody).toBe(errorCode);
    }
    // An empty body is an empty request, not an error.
    expect((await sdk(`/ofrep/v1/evaluate/flags/${ks}`, { method: "POST" })).status).toBe(200);
  });

  test("Object.prototype names are not flags unless a killswitch or config has that name", async () => {
    for (const key of ["constructor", "toString", "hasOwnProperty", "valueOf", "__proto__"]) {
      const r = await evaluate(key);
      expect(r.status, key).toBe(404);
      expect(r.body, key).toMatchObject({ key, errorCode: "FLAG_NOT_FOUND" });
    }
    const named = await s.api("/api/admin/configs", { body: { name: "valueOf", schema: true, value: { real: true } } });
    expect(named.status).toBe(201);
    const found = await evaluate("valueOf");
    expect(found.status).toBe(200);
    expect(found.body).toEqual({ key: "valueOf", value: { real: true }, reason: "STATIC", metadata: { version: 1 } });
    expect((await s.api(`/api/admin/configs/${named.body.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await evaluate("valueOf")).status).toBe(404);
  });

  test("bulk: every flag with an ETag; If-None-Match answers 304 until a publish", async () => {
    const r = await sdk("/ofrep/v1/evaluate/flags", { body: { context: { targetingKey: "u" } } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toStartWith("application/json");
    const flags = new Map((r.body.flags as any[]).map((f) => [f.key, f]));
    expect(flags.get(ks)).toEqual({ key: ks, value: true, reason: "STATIC", variant: "on", metadata: { version: 1 } });
    expect(flags.get(`${ks}/eu`)).toMatchObject({ value: false, variant: "off" });
    expect(flags.get(cfg)).toEqual({ key: cfg, value: { retries: 3, mode: "fast" }, reason: "STATIC", metadata: { version: 1 } });
    const snapshot = (await sdk("/api/sdk/v1/snapshot?env=prod")).body;
    expect([...flags.keys()].filter((k) => !k.includes("/")).sort()).toEqual(
      [...new Set([...Object.keys(snapshot.killswitches), ...Object.keys(snapshot.configs)])].sort(),
    );

    const etag = r.headers.get("etag")!;
    const same = await sdk("/ofrep/v1/evaluate/flags", { body: {}, headers: { "if-none-match": etag } });
    expect(same.status).toBe(304);
    expect(same.text).toBe("");
    const devTagged = await sdk("/ofrep/v1/evaluate/flags", { body: { context: { env: "dev" } }, headers: { "if-none-match": etag } });
    expect(devTagged.status).toBe(200);
    expect(new Map((devTagged.body.flags as any[]).map((f) => [f.key, f])).get(ks).value).toBe(false);

    await toggle(await createKillswitch());
    const changed = await sdk("/ofrep/v1/evaluate/flags", { body: {}, headers: { "if-none-match": etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).not.toBe(etag);
  });
});

describe("SDK paths refuse other credentials and never leak another project", () => {
  const paths: { method: string; path: string; body?: unknown }[] = [
    { method: "GET", path: "/api/sdk/v1/snapshot?env=prod" },
    { method: "GET", path: "/api/sdk/v1/stream?env=prod" },
    { method: "POST", path: "/ofrep/v1/evaluate/flags/some-flag", body: {} },
    { method: "POST", path: "/ofrep/v1/evaluate/flags", body: {} },
  ];

  test("no key 401, admin or client key 403, invalid or revoked key 401", async () => {
    const revoked = await s.api("/api/admin/keys", { body: { type: "server" } });
    expect((await s.api(`/api/admin/keys/${revoked.body.id}`, { method: "DELETE" })).status).toBe(204);
    const etag = (await sdk("/api/sdk/v1/snapshot?env=prod")).headers.get("etag")!;
    const cases: [string, Record<string, string>, number][] = [
      ["none", {}, 401],
      ["admin in X-SDK-Key", { "x-sdk-key": s.adminKey }, 403],
      ["admin as bearer", { authorization: `Bearer ${s.adminKey}` }, 403],
      ["client key", { "x-sdk-key": s.clientKey }, 403],
      ["unknown key", { "x-sdk-key": "sdk_server_0000000000000000000000" }, 401],
      ["revoked key", { "x-sdk-key": revoked.body.key }, 401],
    ];
    for (const { method, path, body } of paths) {
      for (const [label, headers, status] of cases) {
        // With the current tag too, so the 304 fast path is held to the same rules.
        for (const extra of [{}, { "if-none-match": etag }] as Record<string, string>[]) {
          const r = await s.api(path, { key: null, method, body, headers: { ...headers, ...extra } });
          expect(r.status, `${method} ${path} ${label}`).toBe(status);
          expect(expectErrorShape(r.body).code).toBe(status === 401 ? "UNAUTHORIZED" : "FORBIDDEN");
        }
      }
    }
  });

  test("a foreign project's server key sees only its own project, and cannot pick ours", async () => {
    const ours = await createKillswitch({ value: true });
    const etag = (await sdk("/api/sdk/v1/snapshot?env=prod")).headers.get("etag")!;

    const snap = await sdk("/api/sdk/v1/snapshot?env=prod", { key: foreign.serverKey, headers: { "if-none-match": etag } });
    expect(snap.status).toBe(200);
    expect(snap.body.projectId).toBe(foreign.projectId);
    expect(snap.text).not.toContain(ours);
    expect(snap.text).not.toContain(s.projectId);

    const flag = await sdk(`/ofrep/v1/evaluate/flags/${ours}`, { key: foreign.serverKey, body: {} });
    expect(flag.status).toBe(404);
    const bulk = await sdk("/ofrep/v1/evaluate/flags", { key: foreign.serverKey, body: {}, headers: { "if-none-match": etag } });
    expect(bulk.status).toBe(200);
    expect(bulk.text).not.toContain(ours);

    for (const { method, path, body } of paths) {
      const r = await sdk(path, { key: foreign.serverKey, method, body, headers: { "x-project-id": s.projectId } });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(expectErrorShape(r.body).code).toBe("FORBIDDEN");
    }
  });
});

test("a prepared snapshot (200 or 304) is answered without touching the database", async () => {
  // Its own server: the store is closed under it.
  const own = await startTestServer();
  try {
    const snapshot = await own.api("/api/sdk/v1/snapshot?env=prod", { key: null, headers: { "x-sdk-key": own.serverKey } });
    const etag = snapshot.headers.get("etag")!;
    await own.server.store.close();
    const fast = await own.api("/api/sdk/v1/snapshot?env=prod", { key: null, headers: { "x-sdk-key": own.serverKey, "if-none-match": etag } });
    expect(fast.status).toBe(304);
    // With an Origin the request takes the Elysia route: the same holds there.
    const routed = await own.api("/api/sdk/v1/snapshot?env=prod", { key: null, headers: { "x-sdk-key": own.serverKey, "if-none-match": etag, origin: "https://app.test" } });
    expect(routed.status).toBe(304);
    // The full body comes from the prepared bytes too, plain and gzip.
    const full = await own.api("/api/sdk/v1/snapshot?env=prod", { key: null, headers: { "x-sdk-key": own.serverKey } });
    expect(full.status).toBe(200);
    expect(full.text).toBe(snapshot.text);
    expect(full.headers.get("etag")).toBe(etag);
    const gz = await fetch(`${own.url}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": own.serverKey, "accept-encoding": "gzip" }, decompress: false } as RequestInit);
    expect(gz.status).toBe(200);
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    expect(new TextDecoder().decode(Bun.gunzipSync(new Uint8Array(await gz.arrayBuffer())))).toBe(snapshot.text);
  } finally {
    await own.stop().catch(() => {});
  }
});
