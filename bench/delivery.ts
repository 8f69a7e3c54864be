/**
 * SDK delivery figures (issue targets in brackets), with 50 killswitches and 20 configs,
 * loaded by autocannon with 2 worker threads:
 * - the snapshot 304 path (If-None-Match) against a bare Bun.serve answering the same 304 [>= 70 %];
 * - the full snapshot, plain and gzip, against the bare server answering the same bytes [>= 15k req/s];
 * - toggle latency, sequential HTTP toggles [p50 < 2 ms];
 * - publish-to-SSE-delivery: toggle, then time until the stream event arrives [p99 < 50 ms];
 * - svc RSS at start, peak under load, and after [< 100 MB].
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Row, type Settings, type Target, initProject, latencyRow, load, rssMb, startBare, startSvc, stop, watchPeakRss } from "./lib";

/** The issue states its throughput targets for 2 load-generator threads (as wrk -t2 would run). */
const LOAD_THREADS = 2;

export async function runDelivery(settings: Settings): Promise<{ rows: Row[]; figures: Record<string, number> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-delivery-"));
  const targets: Target[] = [];
  try {
    const keys = initProject(settings, dataDir);
    const svc = await startSvc(settings, dataDir);
    targets.push(svc);
    const rssStartMb = rssMb(svc.proc.pid);

    const admin = { authorization: `Bearer ${keys.adminKey}`, "content-type": "application/json" };
    const post = async (path: string, body: unknown) => {
      const r = await fetch(svc.url + path, { method: "POST", headers: admin, body: JSON.stringify(body) });
      if (!r.ok) throw new Error(`POST ${path}: ${r.status} ${await r.text()}`);
    };
    for (let i = 0; i < 50; i++) await post("/api/admin/killswitches", { name: `killswitch-${i}`, value: i % 7 === 0, switches: { eu: i % 2 === 0, us: false } });
    for (let i = 0; i < 20; i++) {
      await post("/api/admin/configs", {
        name: `config-${i}`,
        schema: { type: "object", properties: { limit: { type: "integer" }, label: { type: "string" }, tags: { type: "array" } } },
        value: { limit: 100 + i, label: `Config number ${i}`, tags: ["a", "b", "c"] },
      });
    }

    const sdk = { "x-sdk-key": keys.serverKey };
    const snapshotUrl = `${svc.url}/api/sdk/v1/snapshot?env=prod`;
    const plain = await fetch(snapshotUrl, { headers: { ...sdk, "accept-encoding": "identity" } });
    const body = await plain.text();
    const etag = plain.headers.get("etag")!;
    const gz = await fetch(snapshotUrl, { headers: { ...sdk, "accept-encoding": "gzip" }, decompress: false } as RequestInit);
    const gzip = new Uint8Array(await gz.arrayBuffer());
    const bare = await startBare(body, { gzip, etag });
    targets.push(bare);
    const bareUrl = `${bare.url}/api/sdk/v1/snapshot?env=prod`;
    console.log(`  snapshot ${body.length} bytes (${gzip.length} gzip)`);

    const peakRss = watchPeakRss(svc.proc.pid);
    const conditional = { ...sdk, "if-none-match": etag };
    const identity = { ...sdk, "accept-encoding": "identity" };
    const rows: Row[] = [];
    for (const [name, url, headers, expect] of [
      ["bare Bun.serve, snapshot 304", bareUrl, conditional, "3xx"],
      ["svc snapshot, If-None-Match -> 304", snapshotUrl, conditional, "3xx"],
      ["bare Bun.serve, full snapshot", bareUrl, identity, "2xx"],
      ["svc snapshot, full body", snapshotUrl, identity, "2xx"],
      ["svc snapshot, full body gzip", snapshotUrl, { ...sdk, "accept-encoding": "gzip" }, "2xx"],
    ] as const) {
      rows.push(await load(settings, name, { url, headers }, expect, LOAD_THREADS));
      console.log(`  done: ${name}`);
    }
    const rssPeakMb = peakRss();

    // Toggle latency: sequential admin toggles, one HTTP round trip each.
    const toggleMs: number[] = [];
    for (let i = 0; i < settings.samples; i++) {
      const start = performance.now();
      const r = await fetch(`${svc.url}/api/admin/killswitches/killswitch-1/toggle`, { method: "POST", headers: admin, body: "{}" });
      await r.arrayBuffer();
      toggleMs.push(performance.now() - start);
      if (!r.ok) throw new Error(`toggle answered ${r.status}`);
    }
    rows.push(latencyRow(`toggle, ${settings.samples} sequential`, toggleMs));

    // Publish to SSE delivery: from sending the toggle until its event arrives on an open stream.
    const stream = await fetch(`${svc.url}/api/sdk/v1/stream?env=prod`, { headers: sdk });
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
    const deliveryMs: number[] = [];
    for (let i = 0; i < settings.samples; i++) {
      const start = performance.now();
      const eventArrived = nextEvent();
      const toggled = fetch(`${svc.url}/api/admin/killswitches/killswitch-2/toggle`, { method: "POST", headers: admin, body: "{}" });
      await eventArrived;
      deliveryMs.push(performance.now() - start);
      await (await toggled).arrayBuffer();
    }
    await reader.cancel();
    rows.push(latencyRow(`publish -> SSE delivery, ${settings.samples} samples`, deliveryMs));

    return {
      rows,
      figures: {
        snapshot304VsBare: rows[1]!.requestsPerSec! / rows[0]!.requestsPerSec!,
        snapshotFullVsBare: rows[3]!.requestsPerSec! / rows[2]!.requestsPerSec!,
        snapshotFullReqPerSec: rows[3]!.requestsPerSec!,
        toggleP50Ms: rows[5]!.p50Ms,
        sseDeliveryP99Ms: rows[6]!.p99Ms,
        rssStartMb,
        rssPeakMb,
        rssAfterMb: rssMb(svc.proc.pid),
      },
    };
  } finally {
    await stop(targets);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
