/**
 * The edge relay (issue 28, part 3; targets in brackets), with 50 killswitches and 20 configs:
 * - the relay's snapshot 304 path against `svc serve`'s in the same run, each pinned in turn to the same
 *   core (the other idle), the load generator on the other, alternating ROUNDS times [>= 0.9];
 * - upstream toggle -> relay -> SDK: from sending a toggle to `svc serve` until its event arrives on a
 *   stream opened on the relay [p99 < 100 ms].
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LOAD_CPU, type PinnedRow, type Row, SERVER_CPU, type Settings, type Target, WRK, canPin, initProject, latencyRow, loadAverage, loadPinned, pinned, spawnListening, startSvc, stop, svcCommand } from "./lib";

const LOAD_THREADS = 2;
const ROUNDS = 2;

export async function runRelay(settings: Settings): Promise<{ rows: Row[]; figures: Record<string, number> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-relay-up-"));
  const relayDir = mkdtempSync(join(tmpdir(), "svc-bench-relay-"));
  const targets: Target[] = [];
  try {
    const keys = initProject(settings, dataDir);
    const loadBefore = loadAverage();
    const svc = await startSvc(settings, dataDir, { requestLog: true, cpu: SERVER_CPU });
    targets.push(svc);
    const admin = { authorization: `Bearer ${keys.adminKey}`, "content-type": "application/json" };
    const post = async (path: string, body: unknown) => {
      const r = await fetch(svc.url + path, { method: "POST", headers: admin, body: JSON.stringify(body) });
      if (!r.ok) throw new Error(`POST ${path}: ${r.status} ${await r.text()}`);
      await r.arrayBuffer();
    };
    for (let i = 0; i < 50; i++) await post("/api/admin/killswitches", { name: `killswitch-${i}`, value: i % 7 === 0, switches: { eu: i % 2 === 0, us: false } });
    for (let i = 0; i < 20; i++) {
      await post("/api/admin/configs", { name: `config-${i}`, schema: { type: "object" }, value: { limit: 100 + i, label: `Config number ${i}`, tags: ["a", "b", "c"] } });
    }
    const relay = await spawnListening(
      pinned(svcCommand(settings, "serve", "--relay", svc.url, "--port", "0", "--host", "127.0.0.1", "--data", relayDir, "--no-request-log"), SERVER_CPU),
      { SERVICE_RELAY_KEY: keys.serverKey },
    );
    // Stopped first: the upstream going away first would only make it log that it lost its streams.
    targets.unshift(relay);
    const sdk = { "x-sdk-key": keys.serverKey };
    const svcUrl = `${svc.url}/api/sdk/v1/snapshot?env=prod`;
    const relayUrl = `${relay.url}/api/sdk/v1/snapshot?env=prod`;
    const tagOf = async (url: string) => {
      const r = await fetch(url, { headers: sdk });
      await r.arrayBuffer();
      return r.headers.get("etag");
    };
    const etag = await tagOf(svcUrl);
    for (let i = 0; (await tagOf(relayUrl)) !== etag; i++) {
      if (i > 200) throw new Error("the relay did not reach the upstream's snapshot");
      await Bun.sleep(50);
    }
    console.log(
      canPin
        ? `  svc and the relay pinned to core ${SERVER_CPU} (one loaded at a time), ${WRK ? "wrk" : "autocannon"} to core ${LOAD_CPU}; load average ${loadBefore} before`
        : `  NOT pinned (taskset or a second CPU missing); load average ${loadBefore}`,
    );
    const conditional = { ...sdk, "if-none-match": etag! };
    const rows: Row[] = [];
    const svcRuns: PinnedRow[] = [];
    const relayRuns: PinnedRow[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const s = await loadPinned(settings, `svc serve snapshot 304 (run ${round})`, { url: svcUrl, headers: conditional }, "3xx", LOAD_THREADS, svc.proc.pid);
      console.log(`  done: ${s.name}: ${s.requestsPerSec} req/s`);
      const r = await loadPinned(settings, `relay snapshot 304 (run ${round})`, { url: relayUrl, headers: conditional }, "3xx", LOAD_THREADS, relay.proc.pid);
      console.log(`  done: ${r.name}: ${r.requestsPerSec} req/s`);
      svcRuns.push(s);
      relayRuns.push(r);
    }
    rows.push(...svcRuns, ...relayRuns);
    const sum = (runs: PinnedRow[]) => runs.reduce((n, r) => n + r.requestsPerSec!, 0);
    const ratio = sum(relayRuns) / sum(svcRuns);
    console.log(`  relay 304 vs svc serve 304: ${ratio.toFixed(2)} by req/s (target >= 0.9) ${ratio >= 0.9 ? "ok" : "MISS"}`);

    // Upstream toggle -> relay -> SDK: a stream on the relay, toggles on the upstream.
    const stream = await fetch(`${relay.url}/api/sdk/v1/stream?env=prod`, { headers: sdk });
    const reader = stream.body!.getReader();
    const decoder = new TextDecoder();
    let buffered = "";
    const nextEvent = async (): Promise<string> => {
      for (;;) {
        const end = buffered.indexOf("\n\n");
        if (end !== -1) {
          const block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          if (!block.startsWith(":")) return block;
          continue;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error("stream ended");
        buffered += decoder.decode(value, { stream: true });
      }
    };
    await nextEvent(); // the current snapshot
    const viaRelayMs: number[] = [];
    for (let i = 0; i < settings.samples; i++) {
      const start = performance.now();
      const arrived = nextEvent();
      const toggled = fetch(`${svc.url}/api/admin/killswitches/killswitch-2/toggle`, { method: "POST", headers: admin, body: "{}" });
      await arrived;
      viaRelayMs.push(performance.now() - start);
      await (await toggled).arrayBuffer();
    }
    await reader.cancel();
    const viaRelay = latencyRow(`upstream toggle -> relay -> SDK stream, ${settings.samples} samples`, viaRelayMs);
    rows.push(viaRelay);
    console.log(`  toggle -> relay -> SDK p99 ${viaRelay.p99Ms} ms (target < 100) ${viaRelay.p99Ms < 100 ? "ok" : "MISS"}`);
    return {
      rows,
      figures: {
        relay304VsServe: ratio,
        relay304ReqPerSec: sum(relayRuns) / ROUNDS,
        serve304ReqPerSec: sum(svcRuns) / ROUNDS,
        toggleViaRelayP50Ms: viaRelay.p50Ms,
        toggleViaRelayP99Ms: viaRelay.p99Ms,
        loadAverageBefore: loadBefore,
        loadAverageAfter: loadAverage(),
      },
    };
  } finally {
    await stop(targets);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(relayDir, { recursive: true, force: true });
  }
}
