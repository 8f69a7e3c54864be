/**
 * `bun run bench [--duration 10] [--connections 50] [--samples 200] [--binary] [--no-ram-hint] [--only SUITE[,SUITE…]: foundation|delivery|stores|dashboard|gates|observability|experiments|intake|outbox|rollouts|relay|memory] [--store postgres://…]`
 *
 * Loads svc and a bare Bun.serve answering the same bytes, in the same run, on
 * loopback with autocannon; prints one table per suite and the headline
 * ratios, and writes everything to bench/results.json (gitignored).
 * `--binary` measures the compiled dist/svc (run `bun run build` first); svc runs
 * with the Dockerfile's GC hint unless `--no-ram-hint`.
 */
import { writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { runDashboard } from "./dashboard";
import { runDelivery } from "./delivery";
import { runExperiments } from "./experiments";
import { runFoundation } from "./foundation";
import { runGates } from "./gates";
import { runIntake } from "./intake";
import { runMemory } from "./memory";
import { runObservability } from "./observability";
import { runOutbox } from "./outbox";
import { runRelay } from "./relay";
import { runRollouts } from "./rollouts";
import { runStores } from "./stores";
import { ROOT, type Row, type Settings, printTable } from "./lib";

const SUITES: Record<string, (s: Settings) => Promise<{ rows: Row[]; figures: Record<string, number> }>> = {
  foundation: runFoundation,
  delivery: runDelivery,
  stores: runStores,
  dashboard: runDashboard,
  gates: runGates,
  observability: runObservability,
  experiments: runExperiments,
  intake: runIntake,
  outbox: runOutbox,
  rollouts: runRollouts,
  relay: runRelay,
  memory: runMemory,
};

const { values: flags } = parseArgs({
  args: process.argv.slice(2),
  options: {
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "50" },
    samples: { type: "string", default: "200" },
    binary: { type: "boolean", default: false },
    "no-ram-hint": { type: "boolean", default: false },
    only: { type: "string" },
    // observability, experiments, rollouts: a PostgreSQL cluster for their store halves (each suite makes its own database there).
    store: { type: "string" },
  },
  strict: true,
});
const settings: Settings = {
  duration: Number(flags.duration),
  connections: Number(flags.connections),
  samples: Number(flags.samples),
  binary: flags.binary === true,
  ramHint: flags["no-ram-hint"] !== true,
};
if (flags.store) process.env.SVC_BENCH_PG = flags.store;
// `--only` takes one suite or several, comma-separated (`--only foundation,memory`), run in the order given.
const chosen = flags.only ? flags.only.split(",").map((name) => name.trim()) : Object.keys(SUITES);
if (!(settings.duration > 0) || !Number.isInteger(settings.connections) || settings.connections < 1 || !Number.isInteger(settings.samples) || settings.samples < 1 || chosen.some((n) => !SUITES[n])) {
  console.error("usage: bun run bench [--duration SECONDS] [--connections N] [--samples N] [--binary] [--no-ram-hint] [--only SUITE[,SUITE…]: foundation|delivery|stores|dashboard|gates|observability|experiments|intake|outbox|rollouts|relay|memory] [--store postgres://…]");
  process.exit(2);
}

console.log(`${settings.connections} connections, ${settings.duration} s per load run, ${cpus().length} CPUs, bun ${Bun.version}, svc from ${settings.binary ? "dist/svc" : "sources"}, GC hint ${settings.ramHint ? "on (as the Dockerfile ships)" : "off"}`);
const report: Record<string, unknown> = { at: new Date().toISOString(), bun: Bun.version, cpus: cpus().length, cpuModel: cpus()[0]?.model, settings };
let failed = false;
for (const name of chosen) {
  console.log(`\n== ${name}`);
  const result = await SUITES[name]!(settings);
  printTable(result.rows);
  // Small figures (p-values) keep three significant digits; the rest two decimals.
  for (const [figure, value] of Object.entries(result.figures)) console.log(`${figure}: ${Math.abs(value) < 1 && value !== 0 ? value.toPrecision(3) : Math.round(value * 100) / 100}`);
  report[name] = result;
  failed ||= result.rows.some((r) => (r.failed ?? 0) > 0);
}
console.log("\nautocannon records latency in whole milliseconds: p50 0 means under 1 ms (the delivery suite's wrk runs record microseconds).");
writeFileSync(join(ROOT, "bench/results.json"), `${JSON.stringify(report, null, 2)}\n`);
console.log("written to bench/results.json");
if (failed) {
  console.error("some requests failed: the figures above are not comparable");
  process.exitCode = 1;
}
