/**
 * SDK delivery figures (issue targets in brackets), with 50 killswitches and 20 configs, svc at default
 * settings (request log on: SDK polls counted in /metrics, not logged):
 * - the snapshot 304 path (If-None-Match) against a bare Bun.serve answering the same 304 on the same core [>= 0.8;
 *   issue 32: >= 0.9, and >= 1.2x svc's own full identity answer];
 * - the full snapshot against the bare server answering the same bytes on the same core [>= 0.7];
 *   both with the server under test pinned to core 0 and the load generator (wrk when installed) to core 1,
 *   bare and svc in PAIRED_ROUNDS pairs, each two runs back to back; the ratio is the median over
 *   the pairs of svc's requests over bare's;
 * - GrowthBook's `GET /api/features/{key}` 304 against the snapshot 304 in the same run, in pairs [>= 0.8];
 * - the gzip snapshot; toggle latency, sequential HTTP toggles [p50 < 2 ms];
 * - OFREP bulk 304 with a browser key (POST /ofrep/v1/evaluate/flags, `{"context":{…}}`, If-None-Match: what
 *   browser apps poll) against the snapshot 304 of the same svc, in pairs (the median) [>= 0.8]; for scale, a bare
 *   Bun.serve reading the same POST's body before its 304 (BENCH_READ_BODY), against the bare GET 304 and the bulk 304;
 * - publish-to-SSE-delivery: toggle, then time until the stream event arrives [p99 < 50 ms];
 * - issue 32's two toggle figures, from a Node client on keep-alive connections (bench/node-toggle.mjs): toggle p50
 *   [<= 3.5 ms] and toggle ack -> SSE event p50 / p90 [<= 0.3 / 0.5 ms];
 * - svc RSS at start, peak under load, and after [< 100 MB].
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  LOAD_CPU,
  type PinnedRow,
  type Row,
  SERVER_CPU,
  type Settings,
  type Target,
  WRK,
  canPin,
  initProject,
  latencyRow,
  loadAverage,
  loadPinned,
  median,
  percentile,
  round,
  rssMb,
  startBare,
  startSvc,
  stop,
  watchPeakRss,
} from "./lib";

/** The issue states its throughput targets for 2 load-generator threads (as wrk -t2 would run). */
const LOAD_THREADS = 2;
/** Issue 32's targets for the matching poll: its rate against the full identity answer's, and against a bare Bun.serve 304's. */
const NOT_MODIFIED_VS_FULL = 1.2;
const NOT_MODIFIED_VS_BARE = 0.9;
/** Runs of the bare server answering the OFREP POST (a figure for scale, compared with no target). */
const ROUNDS = 2;
/**
 * The bare-vs-svc comparisons run as this many pairs, two runs back to back, each half the set duration (at least
 * 2 s), and take the median of the pairs' ratios. On a shared machine one server's rate swings by a quarter
 * from one run to the next (measured: 81k to 106k req/s for the same bare server within a minute); a pair's two
 * runs meet the same spell, and the median leaves out the pair a swing fell between.
 */
const PAIRED_ROUNDS = 8;

function pairSeconds(settings: Settings): number {
  return Math.max(2, Math.round(settings.duration / 2));
}

const rate = (r: PinnedRow) => r.requestsPerSec;
const perCpu = (r: PinnedRow) => r.perCpuSecond;

/** Pair by pair, `of` of run i of `a` over `of` of run i of `b` (NaN where a run lacks the figure). */
function pairedRatios(a: PinnedRow[], b: PinnedRow[], of: (r: PinnedRow) => number | undefined): number[] {
  return a.map((r, i) => (of(r) ?? Number.NaN) / (of(b[i]!) ?? Number.NaN));
}

function meanOf(runs: PinnedRow[], of: (r: PinnedRow) => number | undefined): number {
  return runs.reduce((n, r) => n + (of(r) ?? Number.NaN), 0) / runs.length;
}

/** The lowest and highest of the pairs' ratios, for the reader to see how far one pair can go. */
function spread(values: number[]): string {
  return `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`;
}

function describeRun(r: PinnedRow): string {
  const cpu = r.serverCpuPct === undefined ? "" : `; server core ${r.serverCpuPct} % busy, generator core ${r.generatorCpuPct} % busy`;
  const perCpu = r.perCpuSecond === undefined ? "" : `; ${r.perCpuSecond} per server CPU-second`;
  return `  done: ${r.name}: ${r.requestsPerSec} req/s${perCpu}${cpu}`;
}

/** Whether a run's rate was set by the generator: its core saturated while the server's was not. */
function generatorBound(r: PinnedRow): boolean {
  return r.generatorCpuPct !== undefined && r.serverCpuPct !== undefined && r.generatorCpuPct >= 95 && r.serverCpuPct < 90;
}

export async function runDelivery(settings: Settings): Promise<{ rows: Row[]; figures: Record<string, number> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-delivery-"));
  const targets: Target[] = [];
  try {
    const keys = initProject(settings, dataDir);
    const loadBefore = loadAverage();
    const svc = await startSvc(settings, dataDir, { requestLog: true, cpu: SERVER_CPU });
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
    const bare = await startBare(body, { gzip, etag, cpu: SERVER_CPU });
    targets.push(bare);
    const bareUrl = `${bare.url}/api/sdk/v1/snapshot?env=prod`;
    console.log(`  snapshot ${body.length} bytes (${gzip.length} gzip)`);

    const peakRss = watchPeakRss(svc.proc.pid);
    const conditional = { ...sdk, "if-none-match": etag };
    const identity = { ...sdk, "accept-encoding": "identity" };
    console.log(
      canPin
        ? `  servers pinned to core ${SERVER_CPU}, ${WRK ? "wrk" : "autocannon"} to core ${LOAD_CPU}; load average ${loadBefore} before`
        : `  NOT pinned (taskset or a second CPU missing): the ratios below share cores with the generator; load average ${loadBefore}`,
    );
    const rows: Row[] = [];
    // Both comparisons in one loop, each round a pair of each: shorter runs, more of them, and the 304 and the full
    // answer of the same round meet the same spell too (the "304 vs full" figure). The full pair runs svc first, so
    // every pair compared is two runs back to back: bare and svc 304, svc 304 and svc full, svc and bare full.
    const kinds = [
      { label: "304 (If-None-Match)", headers: conditional, expect: "3xx" as const },
      { label: "full body", headers: identity, expect: "2xx" as const },
    ];
    const runs = kinds.map(() => ({ bare: [] as PinnedRow[], svc: [] as PinnedRow[] }));
    const paired = { ...settings, duration: pairSeconds(settings) };
    for (let round = 1; round <= PAIRED_ROUNDS; round++) {
      for (const [k, { label, headers, expect }] of kinds.entries()) {
        const runBare = () => loadPinned(paired, `bare Bun.serve, ${label} (pair ${round})`, { url: bareUrl, headers }, expect, LOAD_THREADS, bare.proc.pid);
        const runSvc = () => loadPinned(paired, `svc snapshot, ${label} (pair ${round})`, { url: snapshotUrl, headers }, expect, LOAD_THREADS, svc.proc.pid);
        const [first, second] = k === 0 ? [runBare, runSvc] : [runSvc, runBare];
        const a = await first();
        console.log(describeRun(a));
        const b = await second();
        console.log(describeRun(b));
        runs[k]!.bare.push(k === 0 ? a : b);
        runs[k]!.svc.push(k === 0 ? b : a);
      }
    }
    const summary = (k: number) => {
      const { bare: bareRuns, svc: svcRuns } = runs[k]!;
      rows.push(...bareRuns, ...svcRuns);
      if ([...bareRuns, ...svcRuns].some(generatorBound)) {
        console.log(`  WARNING: ${kinds[k]!.label}: the generator's core was saturated while the server's was not: that rate is the generator's, the ratio understates nothing about svc`);
      }
      const byRate = pairedRatios(svcRuns, bareRuns, rate);
      return {
        ratio: median(byRate),
        // The same comparison per CPU-second each server used: steady when other work shares the core.
        cpuRatio: median(pairedRatios(svcRuns, bareRuns, perCpu)),
        spread: `pairs ${spread(byRate)}`,
        svcPerSec: meanOf(svcRuns, rate),
        barePerSec: meanOf(bareRuns, rate),
        svcPerCpuSecond: meanOf(svcRuns, perCpu),
        bareGeneratorCpu: Math.max(...bareRuns.map((r) => r.generatorCpuPct ?? 0)),
      };
    };
    const notModified = summary(0);
    const full = summary(1);
    // svc's 304 against its own full answer, round by round.
    const vsFullRatios = pairedRatios(runs[0]!.svc, runs[1]!.svc, rate);
    const vsFullPerCpuRatios = pairedRatios(runs[0]!.svc, runs[1]!.svc, perCpu);

    // Browser apps poll the bulk OFREP call with a browser key: its 304 against the snapshot 304, in pairs below.
    const minted = await fetch(`${svc.url}/api/admin/keys`, { method: "POST", headers: admin, body: JSON.stringify({ type: "browser", name: "bench" }) });
    if (!minted.ok) throw new Error(`minting a browser key: ${minted.status} ${await minted.text()}`);
    const browserKey = ((await minted.json()) as { key: string }).key;
    const bulkUrl = `${svc.url}/ofrep/v1/evaluate/flags`;
    const bulkBody = JSON.stringify({ context: { targetingKey: "user-42", country: "CH" } });
    const bulkFirst = await fetch(bulkUrl, { method: "POST", headers: { "x-sdk-key": browserKey, "content-type": "application/json" }, body: bulkBody });
    await bulkFirst.arrayBuffer();
    const bulkHeaders = { "x-sdk-key": browserKey, "content-type": "application/json", "if-none-match": bulkFirst.headers.get("etag")! };
    const bulkRuns: PinnedRow[] = [];
    // Each bulk run is paired with a snapshot 304 run of the same svc just before it: the ratio is the pairs' median.
    const snapshotBeside: PinnedRow[] = [];
    for (let round = 1; round <= PAIRED_ROUNDS; round++) {
      const s = await loadPinned(paired, `svc snapshot 304 (pair ${round}, beside OFREP bulk)`, { url: snapshotUrl, headers: conditional }, "3xx", LOAD_THREADS, svc.proc.pid);
      console.log(describeRun(s));
      const r = await loadPinned(paired, `svc OFREP bulk, browser key, 304 (pair ${round})`, { url: bulkUrl, method: "POST", headers: bulkHeaders, body: bulkBody }, "3xx", LOAD_THREADS, svc.proc.pid);
      console.log(describeRun(r));
      snapshotBeside.push(s);
      bulkRuns.push(r);
    }
    rows.push(...snapshotBeside, ...bulkRuns);
    // For scale: reading a POST's body costs any Bun server, so a bare one answers the same POST (body read, then 304).
    const barePost = await startBare(body, { etag, cpu: SERVER_CPU, readBody: true });
    targets.push(barePost);
    const barePostRuns: PinnedRow[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const r = await loadPinned(settings, `bare Bun.serve, POST 304 reading the body (run ${round})`, { url: `${barePost.url}/ofrep/v1/evaluate/flags`, method: "POST", headers: { "x-sdk-key": browserKey, "content-type": "application/json", "if-none-match": etag }, body: bulkBody }, "3xx", LOAD_THREADS, barePost.proc.pid);
      console.log(describeRun(r));
      barePostRuns.push(r);
    }
    rows.push(...barePostRuns);
    const barePostPerSec = meanOf(barePostRuns, rate);
    const bulkPerSec = meanOf(bulkRuns, rate);
    const bulkRatios = pairedRatios(bulkRuns, snapshotBeside, rate);
    const bulkVsSnapshot = median(bulkRatios);
    // A POST with a body costs the generator more than a GET: when its core saturates, the per CPU-second figure is the fairer one.
    const bulkVsSnapshotPerCpu = median(pairedRatios(bulkRuns, snapshotBeside, perCpu));
    console.log(
      `  OFREP bulk 304 (browser key) vs snapshot 304: ${bulkVsSnapshot.toFixed(2)} by req/s, median of ${PAIRED_ROUNDS} pairs (pairs ${spread(bulkRatios)}) (target >= 0.8) ${bulkVsSnapshot >= 0.8 ? "ok" : "MISS"}; ${bulkVsSnapshotPerCpu.toFixed(2)} by requests per CPU-second`,
    );
    const bareGetPerSec = notModified.barePerSec;
    console.log(
      `  for scale: bare POST 304 reading the body vs bare GET 304: ${(barePostPerSec / bareGetPerSec).toFixed(2)}; OFREP bulk 304 vs bare POST 304: ${(bulkPerSec / barePostPerSec).toFixed(2)}`,
    );
    const gzipRun = await loadPinned(settings, "svc snapshot, full body gzip", { url: snapshotUrl, headers: { ...sdk, "accept-encoding": "gzip" } }, "2xx", LOAD_THREADS);
    console.log(describeRun(gzipRun));
    rows.push(gzipRun);
    for (const [label, c, target] of [["snapshot 304", notModified, 0.8], ["full snapshot", full, 0.7]] as const) {
      console.log(`  ${label} vs bare: ${c.ratio.toFixed(2)} by req/s, median of ${PAIRED_ROUNDS} pairs (${c.spread}) (target >= ${target}) ${c.ratio >= target ? "ok" : "MISS"}; ${c.cpuRatio.toFixed(2)} by requests per CPU-second`);
    }
    // Issue 32: a poll whose tag matches touches the key check and the revision only, so it beats the full answer
    // and comes near the bare 304. By req/s the generator may set both rates (its core saturated): the per
    // CPU-second ratios are the server's own cost, and hold when other work shares the machine.
    const vsFull = median(vsFullRatios);
    const vsFullPerCpu = median(vsFullPerCpuRatios);
    // Three decimals: at two, 0.8996 would print as 0.90 beside its MISS.
    const verdict = (value: number, target: number) => `${value.toFixed(3)} ${value >= target ? "ok" : "MISS"}`;
    console.log(`  issue 32: snapshot 304 vs full identity answer (target >= ${NOT_MODIFIED_VS_FULL}): by req/s ${verdict(vsFull, NOT_MODIFIED_VS_FULL)}, median of ${PAIRED_ROUNDS} rounds (${spread(vsFullRatios)}); by requests per CPU-second ${verdict(vsFullPerCpu, NOT_MODIFIED_VS_FULL)}`);
    console.log(`  issue 32: snapshot 304 vs bare Bun.serve 304 (target >= ${NOT_MODIFIED_VS_BARE}): by req/s ${verdict(notModified.ratio, NOT_MODIFIED_VS_BARE)}, median of ${PAIRED_ROUNDS} pairs (${notModified.spread}); by requests per CPU-second ${verdict(notModified.cpuRatio, NOT_MODIFIED_VS_BARE)}`);
    const growthbook = await growthbook304(settings, svc.url, keys.serverKey, snapshotUrl, conditional, svc.proc.pid);
    rows.push(...growthbook.rows);
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
    const toggleRow = latencyRow(`toggle, ${settings.samples} sequential`, toggleMs);
    rows.push(toggleRow);

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
    const sseRow = latencyRow(`publish -> SSE delivery, ${settings.samples} samples`, deliveryMs);
    rows.push(sseRow);
    const fromNode = await nodeToggles(settings, svc.url, keys.adminKey, keys.serverKey);
    if (fromNode) rows.push(...fromNode.rows);

    return {
      rows,
      figures: {
        snapshot304VsBare: notModified.ratio,
        snapshotFullVsBare: full.ratio,
        snapshot304VsBarePerCpu: notModified.cpuRatio,
        snapshotFullVsBarePerCpu: full.cpuRatio,
        snapshot304ReqPerSec: notModified.svcPerSec,
        snapshot304VsFull: vsFull,
        snapshot304VsFullPerCpu: vsFullPerCpu,
        growthbook304VsSnapshot304: growthbook.ratio,
        growthbook304ReqPerSec: growthbook.perSec,
        snapshotFullReqPerSec: full.svcPerSec,
        ofrepBulk304ReqPerSec: bulkPerSec,
        ofrepBulk304VsSnapshot304: bulkVsSnapshot,
        ofrepBulk304VsSnapshot304PerCpu: bulkVsSnapshotPerCpu,
        barePost304VsBareGet304: barePostPerSec / bareGetPerSec,
        ofrepBulk304VsBarePost304: bulkPerSec / barePostPerSec,
        bareRunsGeneratorCpuPct: Math.max(notModified.bareGeneratorCpu, full.bareGeneratorCpu),
        loadAverageBefore: loadBefore,
        loadAverageAfter: loadAverage(),
        toggleP50Ms: toggleRow.p50Ms,
        sseDeliveryP99Ms: sseRow.p99Ms,
        ...fromNode?.figures,
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

/** Issue 32's goals for the two toggle figures it measured from a Node client. */
const NODE_TOGGLE_P50_MS = 3.5;
const ACK_TO_EVENT_P50_MS = 0.3;
const ACK_TO_EVENT_P90_MS = 0.5;

/**
 * Issue 32's toggle p50 (Node client, keep-alive) and toggle ack -> SSE event p50 / p90, measured as it did: by
 * `node` running bench/node-toggle.mjs against the same svc. Undefined (and said) when node is not on the PATH.
 */
async function nodeToggles(settings: Settings, url: string, adminKey: string, serverKey: string) {
  const node = Bun.which("node");
  if (!node) {
    console.log("  issue 32 toggle figures: node is not on the PATH, not measured");
    return undefined;
  }
  const run = Bun.spawn([node, join(import.meta.dir, "node-toggle.mjs"), url, adminKey, serverKey, String(settings.samples)], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
  if (code !== 0) throw new Error(`node bench/node-toggle.mjs exited ${code}: ${err}`);
  const { toggleMs, ackToEventMs } = JSON.parse(out) as { toggleMs: number[]; ackToEventMs: number[] };
  const p = (samples: number[], at: number) => round(percentile(samples, at), 3);
  const toggleP50 = p(toggleMs, 0.5);
  const ackP50 = p(ackToEventMs, 0.5);
  const ackP90 = p(ackToEventMs, 0.9);
  const verdict = (value: number, goal: number) => (value <= goal ? "ok" : "MISS");
  console.log(`  issue 32: toggle p50, Node client, keep-alive: ${toggleP50} ms (goal <= ${NODE_TOGGLE_P50_MS} ms; 11-23 build 3.79, issue day 4.81) ${verdict(toggleP50, NODE_TOGGLE_P50_MS)}`);
  console.log(
    `  issue 32: toggle ack -> SSE event p50 / p90: ${ackP50} / ${ackP90} ms (goal <= ${ACK_TO_EVENT_P50_MS} / ${ACK_TO_EVENT_P90_MS} ms; 11-23 build 0.25 / 0.32, issue day 0.49 / 0.83) ${verdict(ackP50, ACK_TO_EVENT_P50_MS)} / ${verdict(ackP90, ACK_TO_EVENT_P90_MS)}`,
  );
  return {
    rows: [latencyRow(`toggle, Node client keep-alive, ${toggleMs.length} sequential`, toggleMs), latencyRow(`toggle ack -> SSE event (Node), ${ackToEventMs.length} samples`, ackToEventMs)],
    figures: { nodeToggleP50Ms: toggleP50, toggleAckToSseP50Ms: ackP50, toggleAckToSseP90Ms: ackP90 },
  };
}

/**
 * GrowthBook SDKs poll `GET /api/features/{key}` (the key in the path) with If-None-Match: its 304 against the
 * snapshot's own 304 on the same svc, in PAIRED_ROUNDS pairs (the median of their ratios), so a slow spell on
 * the machine hits both.
 */
async function growthbook304(settings: Settings, baseUrl: string, serverKey: string, snapshotUrl: string, snapshotHeaders: Record<string, string>, pid: number) {
  const url = `${baseUrl}/api/features/${serverKey}?env=prod`;
  const first = await fetch(url);
  await first.arrayBuffer();
  const headers = { "if-none-match": first.headers.get("etag")! };
  const gbRuns: PinnedRow[] = [];
  const snapshotRuns: PinnedRow[] = [];
  const paired = { ...settings, duration: pairSeconds(settings) };
  for (let round = 1; round <= PAIRED_ROUNDS; round++) {
    const s = await loadPinned(paired, `svc snapshot 304 (pair ${round}, beside GrowthBook)`, { url: snapshotUrl, headers: snapshotHeaders }, "3xx", LOAD_THREADS, pid);
    console.log(describeRun(s));
    const g = await loadPinned(paired, `svc GET /api/features/{key} 304 (pair ${round})`, { url, headers }, "3xx", LOAD_THREADS, pid);
    console.log(describeRun(g));
    snapshotRuns.push(s);
    gbRuns.push(g);
  }
  const ratios = pairedRatios(gbRuns, snapshotRuns, rate);
  const ratio = median(ratios);
  console.log(`  GrowthBook /api/features 304 vs snapshot 304: ${ratio.toFixed(2)} by req/s, median of ${PAIRED_ROUNDS} pairs (pairs ${spread(ratios)}) (target >= 0.8) ${ratio >= 0.8 ? "ok" : "MISS"}`);
  return { rows: [...snapshotRuns, ...gbRuns], ratio, perSec: meanOf(gbRuns, rate) };
}
