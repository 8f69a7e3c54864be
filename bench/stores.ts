/**
 * The two stores side by side (issue 10): sequential toggle latency and the
 * snapshot 304 throughput on SQLite and on PostgreSQL (a throwaway cluster
 * on loopback, started here), and three servers on one PostgreSQL against
 * one on snapshot throughput (the load split over the three).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { startCluster } from "../test/support/postgres-cluster";
import { ROOT, type Row, type Settings, type Target, latencyRow, load, spawnListening, stop, svcCommand } from "./lib";

type Keys = { adminKey: string; serverKey: string };

function init(settings: Settings, dataDir: string, store?: string): Keys {
  const args = ["init", "--data", dataDir, "--json", ...(store ? ["--store", store] : [])];
  const result = Bun.spawnSync(svcCommand(settings, ...args), { cwd: ROOT });
  if (result.exitCode !== 0) throw new Error(`svc init failed: ${result.stderr.toString()}`);
  return JSON.parse(result.stdout.toString());
}

function serve(settings: Settings, dataDir: string, store?: string): Promise<Target> {
  return spawnListening(svcCommand(settings, "serve", "--port", "0", "--host", "127.0.0.1", "--data", dataDir, "--no-request-log", ...(store ? ["--store", store] : [])));
}

async function toggleLatency(settings: Settings, url: string, keys: Keys, label: string): Promise<Row> {
  const admin = { authorization: `Bearer ${keys.adminKey}`, "content-type": "application/json" };
  const created = await fetch(`${url}/api/admin/killswitches`, { method: "POST", headers: admin, body: JSON.stringify({ name: "bench" }) });
  if (!created.ok) throw new Error(`create answered ${created.status}`);
  const samples: number[] = [];
  for (let i = 0; i < settings.samples; i++) {
    const start = performance.now();
    const r = await fetch(`${url}/api/admin/killswitches/bench/toggle`, { method: "POST", headers: admin, body: "{}" });
    await r.arrayBuffer();
    samples.push(performance.now() - start);
    if (!r.ok) throw new Error(`toggle answered ${r.status}`);
  }
  return latencyRow(`${label}: toggle, ${settings.samples} sequential`, samples);
}

async function etagOf(url: string, keys: Keys): Promise<string> {
  const r = await fetch(`${url}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": keys.serverKey } });
  await r.arrayBuffer();
  return r.headers.get("etag")!;
}

export async function runStores(settings: Settings): Promise<{ rows: Row[]; figures: Record<string, number> }> {
  const rows: Row[] = [];
  const figures: Record<string, number> = {};
  const targets: Target[] = [];
  const cluster = await startCluster();
  try {
    // SQLite
    const sqliteDir = mkdtempSync(join(tmpdir(), "svc-bench-sqlite-"));
    const sqliteKeys = init(settings, sqliteDir);
    const sqlite = await serve(settings, sqliteDir);
    targets.push(sqlite);
    rows.push(await toggleLatency(settings, sqlite.url, sqliteKeys, "SQLite"));
    figures.sqliteToggleP50Ms = rows.at(-1)!.p50Ms;
    const sqliteEtag = await etagOf(sqlite.url, sqliteKeys);
    rows.push(await load(settings, "SQLite: snapshot 304", { url: `${sqlite.url}/api/sdk/v1/snapshot?env=prod`, headers: { "x-sdk-key": sqliteKeys.serverKey, "if-none-match": sqliteEtag } }, "3xx"));
    figures.sqlite304ReqPerSec = rows.at(-1)!.requestsPerSec!;
    await stop(targets.splice(0));
    if (!cluster) {
      console.log("  PostgreSQL half skipped: no PostgreSQL server binaries (apt-get install -y postgresql)");
      return { rows, figures };
    }
    // PostgreSQL: one server
    const admin = new SQL({ url: cluster.url, max: 1 });
    await admin.unsafe("CREATE DATABASE bench");
    await admin.close();
    const pgUrl = cluster.url.replace(/\/postgres$/, "/bench");
    const pgDir = mkdtempSync(join(tmpdir(), "svc-bench-pg-"));
    const pgKeys = init(settings, pgDir, pgUrl);
    const pg = await serve(settings, pgDir, pgUrl);
    targets.push(pg);
    rows.push(await toggleLatency(settings, pg.url, pgKeys, "PostgreSQL"));
    figures.postgresToggleP50Ms = rows.at(-1)!.p50Ms;
    const pgEtag = await etagOf(pg.url, pgKeys);
    const conditional = { "x-sdk-key": pgKeys.serverKey, "if-none-match": pgEtag };
    rows.push(await load(settings, "PostgreSQL, 1 server: snapshot 304", { url: `${pg.url}/api/sdk/v1/snapshot?env=prod`, headers: conditional }, "3xx"));
    figures.postgres304ReqPerSec = rows.at(-1)!.requestsPerSec!;
    // Three servers on the same database, the same total connections split over them.
    for (let i = 0; i < 2; i++) targets.push(await serve(settings, mkdtempSync(join(tmpdir(), "svc-bench-pg-")), pgUrl));
    for (const t of targets) await etagOf(t.url, pgKeys);
    const split = { ...settings, connections: Math.max(1, Math.round(settings.connections / 3)) };
    const three = await Promise.all(targets.map((t, i) => load(split, `PostgreSQL, server ${i + 1} of 3: snapshot 304`, { url: `${t.url}/api/sdk/v1/snapshot?env=prod`, headers: conditional }, "3xx")));
    rows.push(...three);
    const total = three.reduce((sum, r) => sum + (r.requestsPerSec ?? 0), 0);
    rows.push({ name: "PostgreSQL, 3 servers together: snapshot 304", requestsPerSec: total, p50Ms: Math.max(...three.map((r) => r.p50Ms)), p99Ms: Math.max(...three.map((r) => r.p99Ms)), failed: three.reduce((s, r) => s + (r.failed ?? 0), 0) });
    figures.postgresThreeServers304ReqPerSec = total;
    figures.threeVsOneServer = total / figures.postgres304ReqPerSec;
    return { rows, figures };
  } finally {
    await stop(targets);
    cluster?.stop();
  }
}
