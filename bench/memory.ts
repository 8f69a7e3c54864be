/**
 * Memory of the server it starts (issue 32), beside the issue's targets, with the GC hint OFF whatever
 * `--no-ram-hint` says (the targets are stated without it):
 * - RSS at the first /healthz 200 [< 55 MB];
 * - RSS idle, 30 s after start with nothing asked of it, as the issue states it [< 55 MB] (`--duration` under 30
 *   shortens the wait, and says so);
 * - RSS idle again, SETTLE_SECONDS after the project was filled with 50 killswitches and 20 configs, as the
 *   delivery suite's (writes load their modules, SQLite's write paths and start two child processes: the config schema
 *   checker, which ends 10 s after its last check, and the WAL checkpointer, after ten quiet seconds): for scale, beside
 *   the same target;
 * - RSS peak under a `--connections` load of snapshot polls, full answers and 304s alternating [< 80 MB];
 * - RSS at the end of the run, a second after the load [< 65 MB]. The bare Bun.serve of the other
 * suites (bench/bare-server.ts, run by bun from source) answers the same snapshot bytes and 304 under the same
 * load afterwards: its RSS at start, peak and end stand beside each figure for scale. Figures come from /proc (VmRSS), Linux only.
 *
 * The page cache's state of the executable is set, not left to chance. Most of svc's resident memory is the
 * binary's own pages, mapped from the file (about 43 of 61 MB at the end of the run), and how many of them a
 * fault maps depends on how the kernel holds the file: a file just written (by the build, or a copy) is held in
 * large folios, and a fault maps more of it. The same binary measured 3.5 to 7 MB more at every step just
 * written than read back from disk, depending on how it was written (Linux 6.18; issue 32's closing note of
 * 2026-11-29), so runs of one binary disagreed by that much depending on what had last touched the file. The checked figures are those of the
 * binary read back from disk (its pages dropped from the cache first, as after a reboot); with `--binary` the
 * same scenario then runs on a copy just written, printed beside each figure.
 */
import { chmodSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Check, type Row, type Settings, type Target, BUN, DIST_SVC, dropPageCache, initProject, load, printChecks, rssMb, rssParts, startBare, startSvc, stop, watchPeakRss } from "./lib";

const IDLE_SECONDS = 30;
/** After the writes: past the config schema checker's 10 s idle end (CHECKER_IDLE_MS) and the WAL checkpointer's ten quiet turns, when their child processes end. */
const SETTLE_SECONDS = 20;
const TARGETS = { firstMb: 55, idleMb: 55, peakMb: 80, endMb: 65 } as const;

type ServerFigures = { firstMb: number; idleMb: number; filledMb: number; peakMb: number; endMb: number };
type Parts = NonNullable<ReturnType<typeof rssParts>>;

/** The file whose pages count as the server's own code and data: the binary, or bun running the source. */
const executableOf = (settings: Settings) => realpathSync(settings.binary ? (settings.executable ?? DIST_SVC) : BUN);
const partsText = (p: Parts | undefined) => (p ? `the executable's code ${p.codeMb} MB, its data ${p.dataMb} MB, anonymous ${p.anonMb} MB, other ${p.otherMb} MB` : "not readable here");

/** One server through the scenario: start, idle, 70 writes, settle, the load. Its figures, load rows, and the snapshot it answered. */
async function measureSvc(settings: Settings, idleSeconds: number): Promise<{ figures: ServerFigures; parts: { filled?: Parts; end?: Parts }; rows: Row[]; body: string; etag: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-memory-"));
  const targets: Target[] = [];
  try {
    const keys = initProject(settings, dataDir);
    const startedAt = performance.now();
    const svc = await startSvc(settings, dataDir);
    targets.push(svc);
    const firstMb = rssMb(svc.proc.pid);
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
    const executable = executableOf(settings);
    const filledParts = rssParts(svc.proc.pid, executable);

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
    const endParts = rssParts(svc.proc.pid, executable);
    return { figures: { firstMb, idleMb, filledMb, peakMb, endMb }, parts: { filled: filledParts, end: endParts }, rows, body, etag };
  } finally {
    await stop(targets);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function runMemory(settings: Settings): Promise<{ rows: Row[]; figures: Record<string, number> }> {
  const unhinted: Settings = { ...settings, ramHint: false };
  const idleSeconds = Math.min(IDLE_SECONDS, Math.max(settings.duration, 5));
  const targets: Target[] = [];
  const scratch = mkdtempSync(join(tmpdir(), "svc-bench-memory-binary-"));
  try {
    // From source the executable is bun, which runs this suite too: its mapped pages cannot be dropped.
    const dropped = settings.binary && dropPageCache(DIST_SVC);
    console.log(settings.binary ? (dropped ? "dist/svc read back from disk (its pages dropped from the page cache first)" : "dist/svc as the page cache holds it (dd could not drop it)") : "svc from source: the page cache is left as it is");
    const { figures: svc, parts, rows, body, etag } = await measureSvc(unhinted, idleSeconds);

    // The same scenario on a copy of the binary just written (one write, as a build or a copy writes it).
    let written: ServerFigures | undefined;
    if (settings.binary) {
      const copy = join(scratch, "svc");
      writeFileSync(copy, readFileSync(DIST_SVC));
      chmodSync(copy, 0o755);
      written = (await measureSvc({ ...unhinted, executable: copy }, idleSeconds)).figures;
    }

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

    const check = (figure: string, key: keyof ServerFigures, target: number, bareMb: number): Check => ({
      figure,
      value: svc[key],
      unit: "MB",
      target: `< ${target} MB`,
      met: svc[key] < target,
      baseline: `${written ? `the binary just written ${written[key]} MB, ` : ""}bare Bun.serve (bun, from source) ${bareMb} MB`,
    });
    printChecks([
      check("RSS at the first 200", "firstMb", TARGETS.firstMb, bareFirstMb),
      check(`RSS idle, ${idleSeconds} s after start${idleSeconds < IDLE_SECONDS ? ` (--duration shortened the issue's ${IDLE_SECONDS} s)` : ""}`, "idleMb", TARGETS.idleMb, bareFirstMb),
      check(`RSS idle, ${SETTLE_SECONDS} s after 70 writes (50 killswitches, 20 configs)`, "filledMb", TARGETS.idleMb, bareFirstMb),
      check(`RSS peak under ${settings.connections} connections`, "peakMb", TARGETS.peakMb, barePeakMb),
      check("RSS at the end of the run", "endMb", TARGETS.endMb, bareEndMb),
    ]);
    // What the figures are made of: most is the executable's own pages, which the load pages in and keeps.
    console.log(`  svc's RSS 20 s after the writes: ${partsText(parts.filled)}`);
    console.log(`  svc's RSS at the end of the run: ${partsText(parts.end)}`);
    const partFigures: Record<string, number> = parts.end
      ? { rssEndCodeMb: parts.end.codeMb, rssEndDataMb: parts.end.dataMb, rssEndAnonMb: parts.end.anonMb, rssEndOtherMb: parts.end.otherMb }
      : {};
    const writtenFigures: Record<string, number> = written
      ? { writtenFirstMb: written.firstMb, writtenIdleMb: written.idleMb, writtenAfterWritesMb: written.filledMb, writtenPeakMb: written.peakMb, writtenEndMb: written.endMb }
      : {};
    return {
      rows,
      figures: { rssFirstMb: svc.firstMb, rssIdleMb: svc.idleMb, rssAfterWritesMb: svc.filledMb, rssPeakMb: svc.peakMb, rssEndMb: svc.endMb, ...writtenFigures, ...partFigures, bareFirstMb, barePeakMb, bareEndMb, idleSeconds, pageCacheDropped: dropped ? 1 : 0 },
    };
  } finally {
    await stop(targets);
    rmSync(scratch, { recursive: true, force: true });
  }
}
