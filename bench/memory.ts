/**
 * Memory of the server it starts (issue 32), beside the issue's targets, with the GC hint OFF whatever
 * `--no-ram-hint` says (the targets are stated without it):
 * - RSS at the first /healthz 200 [< 55 MB];
 * - RSS idle, 30 s after start with nothing asked of it, as the issue states it [< 55 MB] (`--duration` under 30
 *   shortens the wait, and says so);
 * - RSS idle again, SETTLE_SECONDS after the project was filled with 50 killswitches and 20 configs, as the
 *   delivery suite's (writes load their modules, SQLite's write paths and the config schema worker, which ends
 *   10 s after its last check): for scale, beside the same target;
 * - RSS peak under a `--connections` load of snapshot polls, full answers and 304s alternating [< 80 MB];
 * - RSS at the end of the run, a second after the load [< 65 MB]. The bare Bun.serve of the other
 * suites (bench/bare-server.ts, run by bun from source) answers the same snapshot bytes and 304 under the same
 * load afterwards: its RSS at start, peak and end stand beside each figure for scale. Figures come from /proc (VmRSS), Linux only.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Check, type Row, type Settings, type Target, initProject, load, printChecks, rssMb, startBare, startSvc, stop, watchPeakRss } from "./lib";

const IDLE_SECONDS = 30;
/** After the writes: past the config schema worker's 10 s idle end (WORKER_IDLE_MS) and the return of its memory (about 15 s, measured). */
const SETTLE_SECONDS = 20;
const TARGETS = { firstMb: 55, idleMb: 55, peakMb: 80, endMb: 65 } as const;

export async function runMemory(settings: Settings): Promise<{ rows: Row[]; figures: Record<string, number> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-memory-"));
  const targets: Target[] = [];
  const unhinted: Settings = { ...settings, ramHint: false };
  try {
    const keys = initProject(unhinted, dataDir);
    const startedAt = performance.now();
    const svc = await startSvc(unhinted, dataDir);
    targets.push(svc);
    const firstMb = rssMb(svc.proc.pid);
    const idleSeconds = Math.min(IDLE_SECONDS, Math.max(settings.duration, 5));
    const waitMs = idleSeconds * 1000 - (performance.now() - startedAt);
    if (waitMs > 0) await Bun.sleep(waitMs);
    const idleMb = rssMb(svc.proc.pid);

    const admin = { authorization: `Bearer ${keys.adminKey}`, "content-type": "application/json" };
    const post = async (path: string, body: unknown) => {
      const r = await fetch(svc.url + path, { method: "POST", headers: admin, body: JSON.stringify(body) });
      if (!r.ok) throw new Error(`POST ${path}: ${r.status} ${await r.text()}`);
    };
    for (let i = 0; i < 50; i++) await post("/api/admin/killswitches", { name: `killswitch-${i}`, value: i % 7 === 0, switches: { eu: i % 2 === 0, us: false } });
    for (let i = 0; i < 20; i++) await post("/api/admin/configs", { name: `config-${i}`, schema: { type: "object" }, value: { limit: 100 + i, label: `Config number ${i}` } });

    await Bun.sleep(SETTLE_SECONDS * 1000);
    const filledMb = rssMb(svc.proc.pid);

    const sdk = { "x-sdk-key": keys.serverKey, "accept-encoding": "identity" };
    const url = `${svc.url}/api/sdk/v1/snapshot?env=prod`;
    const first = await fetch(url, { headers: sdk });
    const body = await first.text();
    const etag = first.headers.get("etag") ?? "";
    const peak = watchPeakRss(svc.proc.pid);
    const rows = [await load(settings, "snapshot, full answers", { url, headers: sdk }), await load(settings, "snapshot, 304s", { url, headers: { ...sdk, "if-none-match": etag } }, "3xx")];
    const peakMb = peak();
    await Bun.sleep(1000);
    const endMb = rssMb(svc.proc.pid);
    await stop(targets.splice(0));

    // The baseline: the bare server answering the same snapshot bytes (and its 304) under the same load.
    const bare = await startBare(body, { etag });
    targets.push(bare);
    const bareFirstMb = rssMb(bare.proc.pid);
    const barePeak = watchPeakRss(bare.proc.pid);
    const bareUrl = `${bare.url}/api/sdk/v1/snapshot?env=prod`;
    rows.push(await load(settings, "bare, full answers", { url: bareUrl }), await load(settings, "bare, 304s", { url: bareUrl, headers: { "if-none-match": etag } }, "3xx"));
    const barePeakMb = barePeak();
    await Bun.sleep(1000);
    const bareEndMb = rssMb(bare.proc.pid);

    const check = (figure: string, value: number, target: number, bareMb: number): Check => ({ figure, value, unit: "MB", target: `< ${target} MB`, met: value < target, baseline: `bare Bun.serve (bun, from source) ${bareMb} MB` });
    printChecks([
      check("RSS at the first 200", firstMb, TARGETS.firstMb, bareFirstMb),
      check(`RSS idle, ${idleSeconds} s after start${idleSeconds < IDLE_SECONDS ? ` (--duration shortened the issue's ${IDLE_SECONDS} s)` : ""}`, idleMb, TARGETS.idleMb, bareFirstMb),
      check(`RSS idle, ${SETTLE_SECONDS} s after 70 writes (50 killswitches, 20 configs)`, filledMb, TARGETS.idleMb, bareFirstMb),
      check(`RSS peak under ${settings.connections} connections`, peakMb, TARGETS.peakMb, barePeakMb),
      check("RSS at the end of the run", endMb, TARGETS.endMb, bareEndMb),
    ]);
    return { rows, figures: { rssFirstMb: firstMb, rssIdleMb: idleMb, rssAfterWritesMb: filledMb, rssPeakMb: peakMb, rssEndMb: endMb, bareFirstMb, barePeakMb, bareEndMb, idleSeconds } };
  } finally {
    await stop(targets);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
