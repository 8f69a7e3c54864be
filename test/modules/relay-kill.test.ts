import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { type RunningRelay, startRelay } from "../../src/modules/relays/edge/relay";
import { SVC_SOURCE, type ServeProcess, type StoreArgs, adminGet, freshStoreArgs, run, startServe } from "../cli/process";
import { tempDir } from "../helpers";

/**
 * The edge relay in front of a real `svc serve` process that is SIGKILLed and started again on the same
 * store (issue 28, part 3): what the relay acknowledged while the upstream was away reaches it once, in
 * order; nothing is lost or doubled; the relay says it is stale meanwhile and live again after.
 */

let upstream: ServeProcess | undefined;
let relay: RunningRelay | undefined;
let store: StoreArgs | undefined;
const dirs: string[] = [];

afterAll(async () => {
  await relay?.stop();
  if (upstream) {
    upstream.proc.kill("SIGKILL");
    await upstream.proc.exited;
  }
  await store?.drop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

type Health = { ok: boolean; relay: { connected: boolean; stale: boolean; queued: number } };
const health = async (url: string) => (await (await fetch(`${url}/healthz`)).json()) as Health;

test("an upstream SIGKILLed and restarted on the same store gets every forwarded event and intake item once", async () => {
  const dataDir = tempDir("svc-relay-upstream-");
  const relayDir = tempDir("svc-relay-kill-");
  dirs.push(dataDir, relayDir);
  store = await freshStoreArgs();
  const init = await run([...SVC_SOURCE, "init", "--data", dataDir, ...store.args, "--public-tickets", "--json"]);
  expect(init.code, init.stderr).toBe(0);
  const keys = JSON.parse(init.stdout) as { serverKey: string; clientKey: string; adminKey: string };
  const serve = (port: number) => startServe([...SVC_SOURCE, "serve", "--port", String(port), "--host", "127.0.0.1", "--data", dataDir, "--no-request-log", ...store!.args]);
  upstream = await serve(0);
  const port = upstream.port;
  relay = await startRelay({ port: 0, host: "127.0.0.1", dataDir: relayDir, upstream: upstream.url, key: keys.serverKey, quiet: true, logRequests: false });
  const edge = relay.url;
  await until("the relay to follow", async () => (await health(edge)).relay.connected);

  const post = (path: string, body: unknown, key = keys.serverKey) =>
    fetch(edge + path, { method: "POST", headers: { "x-sdk-key": key, "content-type": "application/json" }, body: JSON.stringify(body) });
  const units: string[] = [];
  const titles: string[] = [];
  const sendEvents = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const unit = `kill-${units.length}`;
      units.push(unit);
      expect((await post("/api/sdk/v1/events", { events: [{ name: "relay_kill", unitId: unit }] })).status).toBe(202);
    }
  };
  const fileBug = async () => {
    const title = `Relay kill bug ${titles.length}`;
    titles.push(title);
    expect((await post("/ops/bug", { title }, keys.clientKey)).status).toBe(202);
  };

  await sendEvents(3);
  await fileBug();
  await until("the queue to drain while the upstream is up", async () => (await health(edge)).relay.queued === 0);

  upstream.proc.kill("SIGKILL");
  await upstream.proc.exited;
  upstream = undefined;
  await until("the relay to notice", async () => !(await health(edge)).relay.connected);

  // Away: the relay still answers reads (marked stale) and takes what it forwards.
  const snapshot = await fetch(`${edge}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": keys.serverKey } });
  expect(snapshot.status).toBe(200);
  expect(snapshot.headers.get("x-svc-stale")).not.toBeNull();
  await snapshot.arrayBuffer();
  await sendEvents(4);
  await fileBug();
  await fileBug();
  expect((await health(edge)).relay.queued).toBe(6);
  upstream = await serve(port);
  await until("the queue to drain after the restart", async () => {
    const h = await health(edge);
    return h.relay.queued === 0 && h.relay.connected && !h.relay.stale;
  });
  const live = await fetch(`${edge}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": keys.serverKey } });
  expect(live.headers.get("x-svc-stale")).toBeNull();
  await live.arrayBuffer();

  const recent = await adminGet(`${upstream.url}/api/admin/events/relay_kill/recent?limit=100`, keys.adminKey);
  expect(recent.status).toBe(200);
  const stored = (recent.body.events as { unitId: string }[]).map((e) => e.unitId).sort();
  expect(stored).toEqual([...units].sort());
  const items = await adminGet(`${upstream.url}/api/admin/ops?q=${encodeURIComponent("Relay kill bug")}`, keys.adminKey);
  expect((items.body as { title: string }[]).map((i) => i.title).sort()).toEqual([...titles].sort());
}, 120_000);

test("svc serve --relay refuses what it cannot run with, saying why (exit 2), and never echoes the key", async () => {
  const dir = tempDir("svc-relay-usage-");
  dirs.push(dir);
  const cases: [string[], string][] = [
    [["--relay", "http://127.0.0.1:9"], "--relay needs --key"],
    [["--relay", "not a url", "--key", "sdk_server_abcdefghijklmnop"], "--relay: expected the upstream's URL"],
    [["--relay", "ftp://example.com", "--key", "sdk_server_abcdefghijklmnop"], "http:// or https://"],
    [["--relay", "http://127.0.0.1:9", "--key", "sdk_client_secretsecretsecret"], "--key: must be a server key"],
    [["--key", "sdk_server_abcdefghijklmnop"], "--key goes with --relay"],
    [["--relay", "http://127.0.0.1:9", "--key", "sdk_server_abcdefghijklmnop", "--edge-only"], "--edge-only does not go with --relay"],
  ];
  for (const [args, message] of cases) {
    const r = await run([...SVC_SOURCE, "serve", "--port", "0", "--data", dir, ...args]);
    expect([args.join(" "), r.code]).toEqual([args.join(" "), 2]);
    expect(r.stderr).toContain(message);
    expect(r.stderr).not.toContain("secretsecret");
  }
});
