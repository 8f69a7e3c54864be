import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { type RunningRelay, startRelay } from "../../src/modules/relays/edge/relay";
import { MAX_QUEUED_WRITES } from "../../src/modules/relays/service";
import { MAX_RELAYS_PER_PROJECT } from "../../src/modules/relays/store";
import { VERSION } from "../../src/version";
import { SVC_SOURCE, run, startServe } from "../cli/process";
import { type TestServer, startTestServer, tempDir } from "../helpers";

/**
 * Edge relays seen from the upstream (src/modules/relays): a real relay (startRelay, its own HTTP server and
 * relay.db) follows a real server, which lists it by the X-Svc-Relay header of its calls.
 */

let s: TestServer;
let relay: RunningRelay;
const relayDir = tempDir("svc-relays-");
/** A short window: a relay whose streams closed is stale this long after (90 s by default). */
const WINDOW_MS = 1_500;

type Relay = { id: string; name: string; version: string; address: string; firstSeenAt: string; lastSeenAt: string; lastStreamAt: string | null; streams: string[]; connected: boolean; stale: boolean };

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

async function listed(key: string = s.adminKey, q?: string): Promise<Relay[]> {
  const r = await s.api<Relay[]>(`/api/admin/relays${q !== undefined ? `?q=${encodeURIComponent(q)}` : ""}`, { key });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

const keyLookup = (key: string, header: string) => fetch(`${s.url}/api/sdk/v1/key`, { headers: { "x-sdk-key": key, "x-svc-relay": header } });

beforeAll(async () => {
  s = await startTestServer({ streamHeartbeatMs: 200, relayWindowMs: WINDOW_MS });
  relay = await startRelay({ port: 0, host: "127.0.0.1", dataDir: relayDir, upstream: s.url, key: s.serverKey, name: "edge-fra-1", quiet: true, logRequests: false, streamHeartbeatMs: 200 });
});

afterAll(async () => {
  await relay?.stop();
  await s?.stop();
  rmSync(relayDir, { recursive: true, force: true });
});

describe("edge relays seen from the upstream", () => {
  test("a relay is listed with its kept id, its name and version, connected while it streams every env", async () => {
    const id = relay.relay.disk.relayId();
    expect(id).toMatch(/^rly_[A-Za-z0-9]{20}$/);
    const seen = await until("the relay listed with its three streams", async () => {
      const [r] = await listed();
      return r && r.streams.length === 3 ? r : undefined;
    });
    expect(seen).toMatchObject({ id, name: "edge-fra-1", version: VERSION, streams: ["dev", "prod", "staging"], connected: true, stale: false });
    expect(seen.address).toContain("127.0.0.1");
    expect(seen.firstSeenAt <= seen.lastSeenAt).toBe(true);
    // Stored per project.
    const row = await s.store.one<{ name: string; version: string }>("SELECT name, version FROM relay_sightings WHERE project_id = ? AND relay_id = ?", s.projectId, id);
    expect(row).toEqual({ name: "edge-fra-1", version: VERSION });
    // Another project sees nothing of it.
    const other = await s.newProject("Other");
    expect(await listed(other.adminKey)).toEqual([]);
    // q filters id, name and address.
    expect((await listed(s.adminKey, "FRA-1")).map((r) => r.id)).toEqual([id]);
    expect((await listed(s.adminKey, id.slice(4, 12))).map((r) => r.id)).toEqual([id]);
    expect(await listed(s.adminKey, "nowhere")).toEqual([]);
    // A viewer may read.
    await s.addMember("vera@example.com", "viewer");
    const viewer = await s.accessTokenFor("vera@example.com");
    expect((await listed(viewer)).map((r) => r.id)).toEqual([id]);
  });

  test("a bad X-Svc-Relay header, or one on a browser key's call, is ignored: the request is answered, nothing is recorded", async () => {
    const p = await s.newProject("Bad headers");
    const bad = [
      "id=; name=x; version=1.0.0",
      "id=a b; name=x; version=1.0.0",
      `id=${"a".repeat(65)}; name=x; version=1.0.0`,
      `id=r1; name=${"n".repeat(65)}; version=1.0.0`,
      "id=r1; name=caf\u00e9; version=1.0.0",
      "id=r\u00ff1; name=x; version=1.0.0",
      "id=r1; name=x; version=1.0.0; extra=1",
      "name=x; id=r1; version=1.0.0",
      "id=r1;name=x;version=1.0.0",
      "id=r1; name=x; version=1 0",
      "garbage",
    ];
    for (const header of bad) {
      // Answered as without it (a control character would not get this far: the HTTP parser refuses it with 400).
      const res = await keyLookup(p.serverKey, header);
      expect({ header, status: res.status }).toEqual({ header, status: 200 });
    }
    // A well-formed header on a browser key's call (a public key: anyone could send it) is not a sighting either: only server keys' calls are.
    const minted = await s.api("/api/admin/keys", { key: p.adminKey, body: { type: "browser", env: "prod" } });
    expect(minted.status).toBe(201);
    const ofrep = await fetch(`${s.url}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { "x-sdk-key": minted.body.key, "content-type": "application/json", "x-svc-relay": "id=rly_public; name=anyone; version=1.0.0" }, body: JSON.stringify({ context: {} }) });
    expect(ofrep.status).toBe(200);
    await s.server.ctx.services.relays.flushed();
    expect(await s.store.one<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM relay_sightings WHERE project_id = ?", p.projectId)).toEqual({ n: 0 });
    expect(await listed(p.adminKey)).toEqual([]);
  });

  test("the throttle bounds writes: one sighting per relay per 30 s from the request path", async () => {
    const p = await s.newProject("Throttled");
    const header = "id=rly_throttled; name=ci-box; version=9.9.9";
    expect((await keyLookup(p.serverKey, header)).status).toBe(200);
    await s.server.ctx.services.relays.flushed();
    const first = await s.store.one<{ last_seen_at: string }>("SELECT last_seen_at FROM relay_sightings WHERE project_id = ? AND relay_id = ?", p.projectId, "rly_throttled");
    expect(first?.last_seen_at).toEqual(expect.any(String));
    for (let i = 0; i < 20; i++) expect((await keyLookup(p.serverKey, "id=rly_throttled; name=renamed; version=9.9.10")).status).toBe(200);
    await s.server.ctx.services.relays.flushed();
    // Not written again: neither the time nor the new name and version.
    expect(await s.store.one("SELECT name, version, last_seen_at FROM relay_sightings WHERE project_id = ? AND relay_id = ?", p.projectId, "rly_throttled")).toEqual({ name: "ci-box", version: "9.9.9", last_seen_at: first!.last_seen_at });
    const [seen] = await listed(p.adminKey);
    // Seen by a key lookup only: never streamed, so not connected.
    expect(seen).toMatchObject({ id: "rly_throttled", name: "ci-box", streams: [], lastStreamAt: null, connected: false, stale: true });
  });

  test("made-up relay ids cannot grow the table: a project keeps its 1,000 most recently seen, and at most 200 sightings wait", async () => {
    const p = await s.newProject("Made-up relays");
    const relays = s.server.ctx.services.relays;
    const header = (i: number) => `id=rly_fake${String(i).padStart(4, "0")}; name=flood; version=1.0.0`;
    for (let i = 0; i < MAX_RELAYS_PER_PROJECT + 10; i++) {
      expect((await keyLookup(p.serverKey, header(i))).status).toBe(200);
      if (i % 100 === 99) await relays.flushed();
    }
    await relays.flushed();
    const count = async () => (await s.store.one<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM relay_sightings WHERE project_id = ?", p.projectId))?.n;
    expect(await count()).toBe(MAX_RELAYS_PER_PROJECT);
    // The least recently seen went first; the newest is kept and listed.
    expect(await s.store.one("SELECT relay_id FROM relay_sightings WHERE project_id = ? AND relay_id = ?", p.projectId, "rly_fake0000")).toBeUndefined();
    expect(await s.store.one("SELECT relay_id FROM relay_sightings WHERE project_id = ? AND relay_id = ?", p.projectId, `rly_fake${MAX_RELAYS_PER_PROJECT + 9}`)).toEqual({ relay_id: `rly_fake${MAX_RELAYS_PER_PROJECT + 9}` });
    expect((await listed(p.adminKey)).length).toBe(MAX_RELAYS_PER_PROJECT);

    // All at once: every call is answered, and no more than MAX_QUEUED_WRITES request-path sightings ever wait in
    // memory (stream sightings and renewals of other relays in this file may wait beside them: not counted).
    const answers = await Promise.all(Array.from({ length: 600 }, (_, i) => keyLookup(p.serverKey, header(5000 + i)).then((r) => r.status)));
    expect(answers.every((status) => status === 200)).toBe(true);
    await relays.flushed();
    expect(relays.peakQueuedFromRequests).toBeLessThanOrEqual(MAX_QUEUED_WRITES);
    expect(relays.peakQueuedFromRequests).toBeGreaterThan(0);
    expect(await count()).toBe(MAX_RELAYS_PER_PROJECT);
  });

  test("a relay of a relay is not listed upstream: each upstream sees its direct relays", async () => {
    const dir = tempDir("svc-relays-chain-");
    const chained = await startRelay({ port: 0, host: "127.0.0.1", dataDir: dir, upstream: relay.url, key: s.serverKey, name: "edge-chained", quiet: true, logRequests: false, streamHeartbeatMs: 200 });
    try {
      await until("the chained relay connected", async () => ((await (await fetch(`${chained.url}/healthz`)).json()) as { relay: { connected: boolean } }).relay.connected);
      // What the chained relay forwards reaches the upstream through the first relay, under its name only.
      const sent = await fetch(`${chained.url}/api/sdk/v1/events`, { method: "POST", headers: { "x-sdk-key": s.serverKey, "content-type": "application/json" }, body: JSON.stringify({ events: [{ name: "chained-event" }] }) });
      expect(sent.status).toBeLessThan(300);
      await until("the event forwarded twice", async () => chained.relay.forwarder.queued() === 0 && chained.relay.forwarder.counts.delivered > 0 && relay.relay.forwarder.queued() === 0 && relay.relay.forwarder.counts.delivered > 0);
      await s.server.ctx.services.relays.flushed();
      expect((await listed()).map((r) => r.name)).toEqual(["edge-fra-1"]);
    } finally {
      await chained.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("DELETE forgets a sighting, audited; a viewer and an editor are refused, an unknown id is 404", async () => {
    const p = await s.newProject("Forget");
    expect((await keyLookup(p.serverKey, "id=rly_gone; name=old-box; version=1.0.0")).status).toBe(200);
    await s.server.ctx.services.relays.flushed();
    expect((await listed(p.adminKey)).map((r) => r.id)).toEqual(["rly_gone"]);
    const viewer = await s.accessTokenFor("vera@example.com");
    const refused = await s.api("/api/admin/relays/rly_gone", { method: "DELETE", key: viewer });
    expect(refused.status).toBe(403);
    // The viewer's token is bound to the main project: the relay of `p` is asked of the main project, refused the same.
    await s.addMember("ed@example.com", "editor");
    const editor = await s.accessTokenFor("ed@example.com");
    expect((await s.api("/api/admin/relays/rly_gone", { method: "DELETE", key: editor })).status).toBe(403);
    expect((await s.api("/api/admin/relays/rly_nobody", { method: "DELETE", key: p.adminKey })).status).toBe(404);
    const gone = await s.api("/api/admin/relays/rly_gone", { method: "DELETE", key: p.adminKey });
    expect(gone.status).toBe(204);
    expect(await listed(p.adminKey)).toEqual([]);
    expect(await s.store.one("SELECT action, subject_id, subject_name FROM audit_log WHERE project_id = ? AND action = 'relay.forget'", p.projectId)).toEqual({ action: "relay.forget", subject_id: "rly_gone", subject_name: "old-box" });
    expect(await s.store.one<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM relay_sightings WHERE project_id = ?", p.projectId)).toEqual({ n: 0 });
  });

  test("svc relays list|forget (--json) against a relay process started with svc serve --relay --relay-name", async () => {
    const dir = tempDir("svc-relays-proc-");
    const proc = await startServe([...SVC_SOURCE, "serve", "--relay", s.url, "--port", "0", "--host", "127.0.0.1", "--data", dir, "--no-request-log", "--relay-name", "edge-proc-1"], { env: { SERVICE_RELAY_KEY: s.serverKey } });
    const token = await s.api("/api/admin/tokens", { body: { name: "relays-cli", access: "read-write" } });
    expect(token.status).toBe(201);
    const env = { SERVICE_CLI_TOKEN: token.body.token, SERVICE_URL: s.url };
    try {
      const seen = await until("svc relays list to show the relay process connected", async () => {
        const r = await run([...SVC_SOURCE, "relays", "list", "--q", "edge-proc", "--json"], { env });
        expect(r.code, r.stderr).toBe(0);
        const [one] = JSON.parse(r.stdout) as Relay[];
        return one?.connected && one.streams.length === 3 ? one : undefined;
      });
      expect(seen).toMatchObject({ name: "edge-proc-1", version: VERSION, stale: false });
      const text = await run([...SVC_SOURCE, "relays", "list"], { env });
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(/edge-proc-1\s+connected\s+/);
      // Forgetting needs the manage permission: a read-write API token is refused (403).
      const refused = await run([...SVC_SOURCE, "relays", "forget", seen.id, "--json"], { env });
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain("cannot manage");
    } finally {
      expect(await proc.stop()).toBe(0);
      rmSync(dir, { recursive: true, force: true });
    }
    const owner = await s.accessTokenFor("owner@example.com");
    const forgot = await run([...SVC_SOURCE, "relays", "forget", (await listed()).find((r) => r.name === "edge-proc-1")!.id, "--json"], { env: { SERVICE_CLI_TOKEN: owner, SERVICE_URL: s.url } });
    expect(forgot.code, forgot.stderr).toBe(0);
    expect(JSON.parse(forgot.stdout)).toMatchObject({ deleted: true });
    expect((await listed()).map((r) => r.name)).not.toContain("edge-proc-1");
  });

  test("a relay that stops is stale once its streams have been closed for the window", async () => {
    const id = relay.relay.disk.relayId();
    await relay.stop();
    const seen = await until("the relay stale", async () => {
      const r = (await listed()).find((x) => x.id === id);
      return r && r.stale ? r : undefined;
    });
    expect(seen).toMatchObject({ id, connected: false, stale: true, streams: [] });
    expect(seen.lastStreamAt).toEqual(expect.any(String));
  });
});
