/**
 * Foundation figures: an authenticated admin GET and /healthz against a bare Bun.serve answering the same bytes;
 * and the cold start of the compiled binary: exec to the first /healthz 200 on an initialised data dir [< 50 ms],
 * beside a compiled bare Bun.serve answering /healthz (bench/bare-healthz.ts, the same build flags) started the
 * same way, alternating, in the same run [issue 32: svc's median at most 3x the bare one's].
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { COMPILE_FLAGS, freePort } from "../scripts/build";
import { BUN, DIST_SVC, ROOT, type Row, SERVER_CPU, type Settings, type Target, canPin, initProject, latencyRow, load, loadAverage, median, pinned, rssMb, startBare, startSvc, stop } from "./lib";

const COLD_STARTS = 15;
/** Issue 32: svc's median cold start against the compiled bare server's, started the same way in the same run. */
const COLD_START_VS_BARE_TARGET = 3;

/** `entry` compiled into `out` with svc's own compile flags (scripts/build.ts). */
function compile(entry: string, out: string): void {
  const built = Bun.spawnSync([BUN, "build", ...COMPILE_FLAGS, entry, "--outfile", out], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (built.exitCode !== 0) throw new Error(`bun build ${entry} failed: ${built.stderr.toString()}`);
}

/**
 * The compiled binary to time: dist/svc with `--binary` (as built), otherwise a fresh build of the sources by
 * `npm run build`'s own script into a temp dir (so the figure is of the code as it is now).
 */
function binaryFor(settings: Settings, dir: string): string {
  if (settings.binary) return DIST_SVC;
  const scripts = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
  // The build embeds dist/svc-sdk.tgz, which its prebuild step packs (npm and bun run it before build; here by hand).
  const packed = Bun.spawnSync([BUN, ...scripts.prebuild!.replace(/^bun /, "").split(/\s+/)], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (packed.exitCode !== 0) throw new Error(`prebuild failed: ${packed.stderr.toString()}`);
  const out = join(dir, "svc");
  const built = Bun.spawnSync([BUN, join(ROOT, "scripts/build.ts"), "--outfile", out], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (built.exitCode !== 0) throw new Error(`bun run build failed: ${built.stderr.toString()}`);
  return out;
}

/** Exec of `binary serve …` to its first /healthz 200, the binary pinned to the server core (milliseconds). */
async function coldStart(binary: string, dataDir: string): Promise<number> {
  const port = await freePort();
  const start = performance.now();
  const proc = Bun.spawn(pinned([binary, "serve", "--port", String(port), "--host", "127.0.0.1", "--data", dataDir], SERVER_CPU), { stdout: "ignore", stderr: "pipe" });
  let exited = false;
  void proc.exited.then(() => (exited = true));
  for (;;) {
    if (exited) throw new Error(`${binary} serve exited before answering: ${await new Response(proc.stderr).text()}`);
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status === 200, () => false);
    if (ok) break;
    // Refused connections come back at once; a short pause keeps this loop off the server's core.
    await Bun.sleep(0.5);
  }
  const ms = performance.now() - start;
  proc.kill("SIGTERM");
  await proc.exited;
  return ms;
}

/** svc's and the compiled bare server's cold starts, COLD_STARTS each, alternating (a slow spell hits both). */
async function coldStarts(settings: Settings): Promise<{ rows: Row[]; medianMs: number; minMs: number; bareMedianMs: number }> {
  const dir = mkdtempSync(join(tmpdir(), "svc-bench-cold-"));
  try {
    const binary = binaryFor(settings, dir);
    const bare = join(dir, "bare-healthz");
    compile("bench/bare-healthz.ts", bare);
    const dataDir = join(dir, "data");
    const init = Bun.spawnSync([binary, "init", "--data", dataDir, "--json"]);
    if (init.exitCode !== 0) throw new Error(`svc init failed: ${init.stderr.toString()}`);
    const samples: number[] = [];
    const bareSamples: number[] = [];
    for (let i = 0; i < COLD_STARTS; i++) {
      samples.push(await coldStart(binary, dataDir));
      bareSamples.push(await coldStart(bare, dataDir));
    }
    const where = `${canPin ? `, core ${SERVER_CPU}` : ""}, ${COLD_STARTS} runs`;
    const rows = [latencyRow(`cold start: exec to first /healthz 200 (${settings.binary ? "dist/svc" : "fresh build"}${where})`, samples), latencyRow(`cold start: compiled bare Bun.serve, exec to first /healthz 200${where}`, bareSamples)];
    return { rows, medianMs: median(samples), minMs: Math.min(...samples), bareMedianMs: median(bareSamples) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runFoundation(settings: Settings): Promise<{ rows: Row[]; figures: Record<string, number> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-"));
  const targets: Target[] = [];
  try {
    const keys = initProject(settings, dataDir);
    const svc = await startSvc(settings, dataDir);
    targets.push(svc);
    const admin = { authorization: `Bearer ${keys.adminKey}` };
    const sample = await fetch(`${svc.url}/api/admin/projects/current`, { headers: admin });
    if (sample.status !== 200) throw new Error(`svc answered ${sample.status} to the authenticated route`);
    const body = await sample.text();
    const bare = await startBare(body);
    targets.push(bare);

    const rows: Row[] = [];
    for (const [name, request] of [
      [`bare Bun.serve, same ${body.length}-byte JSON`, { url: `${bare.url}/` }],
      ["svc GET /healthz", { url: `${svc.url}/healthz` }],
      ["svc GET /api/admin/projects/current (admin key)", { url: `${svc.url}/api/admin/projects/current`, headers: admin }],
    ] as const) {
      rows.push(await load(settings, name, request));
      console.log(`  done: ${name}`);
    }
    const rssAfterMb = rssMb(svc.proc.pid);
    await stop(targets.splice(0));
    const loadBefore = loadAverage();
    const cold = await coldStarts(settings);
    rows.push(...cold.rows);
    const coldVsBare = cold.medianMs / cold.bareMedianMs;
    console.log(`  cold start: median ${cold.medianMs.toFixed(1)} ms, min ${cold.minMs.toFixed(1)} ms (target < 50 ms) ${cold.medianMs < 50 ? "ok" : "MISS"}; load average ${loadBefore}`);
    console.log(
      `  issue 32: cold start vs compiled bare Bun.serve: ${cold.medianMs.toFixed(1)} ms / ${cold.bareMedianMs.toFixed(1)} ms = ${coldVsBare.toFixed(2)}x (target <= ${COLD_START_VS_BARE_TARGET}x) ${coldVsBare <= COLD_START_VS_BARE_TARGET ? "ok" : "MISS"}`,
    );
    return {
      rows,
      figures: {
        adminGetVsBare: rows[2]!.requestsPerSec! / rows[0]!.requestsPerSec!,
        rssAfterMb,
        coldStartMedianMs: cold.medianMs,
        coldStartMinMs: cold.minMs,
        coldStartBareMedianMs: cold.bareMedianMs,
        coldStartVsBare: coldVsBare,
        loadAverageBeforeColdStart: loadBefore,
      },
    };
  } finally {
    await stop(targets);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
