/**
 * Outbox (issue 15): 10,000 queued deliveries drained against a local
 * stand-in receiver (target under 10 s), and a SIGKILL mid-drain (target:
 * nothing lost; repeats only of what was in flight, each with the same
 * Idempotency-Key for the receiver to drop).
 *
 * Each run: `svc init`, one webhook connector subscribed to bug.created, the
 * server stopped, 10,000 `bug.created` events written straight into the
 * outbox (what 10,000 committed changes leave behind), then `svc serve`
 * started and timed from its `listening` line until the receiver has
 * answered 2xx for every event (fan-out, signing, sending and recording
 * included). The receiver is a Bun.serve in this process that counts
 * Idempotency-Keys. On the embedded SQLite store, and on PostgreSQL with
 * `--store postgres://…` (SVC_BENCH_PG; a database of its own is made there).
 */
import { SQL } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBase62 } from "../src/lib/ids";
import { emitEvent } from "../src/lib/outbox";
import { openStore, parseStoreTarget } from "../src/lib/store";
import { storeMigrations } from "../src/modules";
import { type Row, type Settings, type Target, initProject, spawnListening, svcCommand } from "./lib";

const EVENTS = 10_000;
const TARGET_MS = 10_000;
const SECRET_KEY = "7a".repeat(32);

type Receiver = { url: string; keys: Map<string, number>; total: number; stop(): void };

function receiver(): Receiver {
  const r: Receiver = { url: "", keys: new Map(), total: 0, stop: () => {} };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      await request.arrayBuffer();
      const key = request.headers.get("idempotency-key") ?? "";
      r.total++;
      r.keys.set(key, (r.keys.get(key) ?? 0) + 1);
      return new Response(null, { status: 204 });
    },
  });
  r.url = `http://127.0.0.1:${server.port}`;
  r.stop = () => server.stop(true);
  return r;
}

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) return false;
    await Bun.sleep(5);
  }
  return true;
}

function serve(settings: Settings, dataDir: string, storeUrl: string | undefined): Promise<Target> {
  const args = ["serve", "--port", "0", "--host", "127.0.0.1", "--data", dataDir, "--no-request-log", ...(storeUrl ? ["--store", storeUrl] : [])];
  // A killed server's claims are free again after 2 s (the default lease is 60 s).
  // The receiver is on 127.0.0.1: private targets allowed (issue 25 refuses them by default).
  return spawnListening(svcCommand(settings, ...args), { SERVICE_SECRET_KEY: SECRET_KEY, SERVICE_CONNECTOR_LEASE_MS: "2000", SERVICE_CONNECTOR_PRIVATE_TARGETS: "allow" });
}

async function stopTarget(t: Target, signal: "SIGTERM" | "SIGKILL" = "SIGTERM"): Promise<void> {
  t.proc.kill(signal);
  await t.proc.exited;
}

/** Writes `count` bug.created events into the outbox of project `projectId`, 1,000 per transaction (the server is stopped). */
async function queueEvents(dataDir: string, storeUrl: string | undefined, projectId: string, count: number): Promise<void> {
  const store = await openStore(parseStoreTarget(storeUrl, dataDir), { migrations: storeMigrations(), busyBudgetMs: 10_000 });
  try {
    for (let done = 0; done < count; done += 1000) {
      await store.write(async (tx) => {
        for (let i = done; i < Math.min(count, done + 1000); i++) {
          await emitEvent(tx, { projectId, type: "bug.created", payload: { id: `fb_bench${i}`, number: i + 1, type: "bug", title: `Bench bug ${i}`, priority: "high", status: "open" } });
        }
      });
    }
  } finally {
    await store.close();
  }
}

/** One engine: the timed drain of EVENTS, then a SIGKILL mid-drain of another EVENTS. */
async function runEngine(settings: Settings, label: string, storeUrl: string | undefined, rows: Row[], figures: Record<string, number>): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-outbox-"));
  const recv = receiver();
  try {
    // init writes to the data dir's SQLite file; on PostgreSQL the server's first start (SERVICE_INIT_ADMIN_KEY) makes the project.
    let adminKey: string;
    let first: Target;
    if (storeUrl) {
      adminKey = `sdk_admin_${randomBase62(32)}`;
      first = await spawnListening(svcCommand(settings, "serve", "--port", "0", "--host", "127.0.0.1", "--data", dataDir, "--no-request-log", "--store", storeUrl), {
        SERVICE_SECRET_KEY: SECRET_KEY,
        SERVICE_INIT_ADMIN_KEY: adminKey,
        SERVICE_CONNECTOR_PRIVATE_TARGETS: "allow",
      });
    } else {
      adminKey = initProject(settings, dataDir).adminKey;
      first = await serve(settings, dataDir, storeUrl);
    }
    const api = (path: string, body?: unknown) =>
      fetch(first.url + path, { method: body ? "POST" : "GET", headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" }, body: body ? JSON.stringify(body) : undefined }).then((r) => r.json() as Promise<any>);
    const projectId = (await api("/api/admin/projects/current")).id as string;
    const hook = await api("/api/admin/connectors", { provider: "webhook", name: "bench", events: ["bug.created"], config: { url: `${recv.url}/hook` } });
    await stopTarget(first);

    // 1. The timed drain.
    await queueEvents(dataDir, storeUrl, projectId, EVENTS);
    let started = performance.now();
    const server = await serve(settings, dataDir, storeUrl);
    const listening = performance.now();
    const done = await waitUntil(() => recv.keys.size >= EVENTS, 120_000);
    const drainMs = performance.now() - listening;
    const startMs = listening - started;
    await stopTarget(server);
    const lost = EVENTS - recv.keys.size;
    const repeats = recv.total - recv.keys.size;
    rows.push({ name: `outbox ${label}: drain ${EVENTS.toLocaleString("en")} queued deliveries`, requests: recv.total, requestsPerSec: Math.round(recv.keys.size / (drainMs / 1000)), p50Ms: Math.round(drainMs), p99Ms: Math.round(drainMs), failed: done ? 0 : lost });
    figures[`outbox_${label}_drain_ms`] = drainMs;
    figures[`outbox_${label}_deliveries_per_s`] = recv.keys.size / (drainMs / 1000);
    figures[`outbox_${label}_lost`] = lost;
    figures[`outbox_${label}_repeats`] = repeats;
    console.log(
      `  ${label}: ${recv.keys.size.toLocaleString("en")} of ${EVENTS.toLocaleString("en")} delivered in ${(drainMs / 1000).toFixed(2)} s after listening (start ${Math.round(startMs)} ms), ` +
        `${Math.round(recv.keys.size / (drainMs / 1000)).toLocaleString("en")}/s, ${repeats} repeats; target < ${TARGET_MS / 1000} s: ${drainMs < TARGET_MS && lost === 0 ? "met" : "NOT met"}`,
    );

    // 2. SIGKILL mid-drain, then a restart on the same store.
    recv.keys.clear();
    recv.total = 0;
    await queueEvents(dataDir, storeUrl, projectId, EVENTS);
    started = performance.now();
    const victim = await serve(settings, dataDir, storeUrl);
    await waitUntil(() => recv.keys.size >= EVENTS / 3, 60_000);
    await stopTarget(victim, "SIGKILL");
    const atKill = recv.keys.size;
    const survivor = await serve(settings, dataDir, storeUrl);
    const complete = await waitUntil(() => recv.keys.size >= EVENTS, 120_000);
    await Bun.sleep(3000);
    await stopTarget(survivor);
    const killLost = EVENTS - recv.keys.size;
    const killRepeats = recv.total - recv.keys.size;
    figures[`outbox_${label}_sigkill_lost`] = killLost;
    figures[`outbox_${label}_sigkill_repeats`] = killRepeats;
    rows.push({ name: `outbox ${label}: SIGKILL mid-drain, restart`, requests: recv.total, p50Ms: Math.round(performance.now() - started), p99Ms: Math.round(performance.now() - started), failed: complete ? killLost : EVENTS });
    console.log(
      `  ${label} SIGKILL at ${atKill.toLocaleString("en")}/${EVENTS.toLocaleString("en")}: ${killLost} lost, ${killRepeats} repeated (same Idempotency-Key; a receiver that drops repeats sees each once; bound: the 64 calls in flight)`,
    );
    void hook;
  } finally {
    recv.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function runOutbox(settings: Settings): Promise<{ rows: Row[]; figures: Record<string, number> }> {
  const rows: Row[] = [];
  const figures: Record<string, number> = {};
  await runEngine(settings, "sqlite", undefined, rows, figures);
  const pg = process.env.SVC_BENCH_PG;
  if (pg) {
    const admin = new SQL({ url: pg, max: 1 });
    const name = `bench_outbox_${randomBase62(8).toLowerCase()}`;
    await admin.unsafe(`CREATE DATABASE ${name}`);
    const url = new URL(pg);
    url.pathname = `/${name}`;
    try {
      await runEngine(settings, "postgres", url.toString(), rows, figures);
    } finally {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await admin.close();
    }
  } else console.log("  PostgreSQL half skipped: pass --store postgres://USER@HOST:PORT/DB (or SVC_BENCH_PG)");
  return { rows, figures };
}
