import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { SVC_SOURCE, type ServeProcess, type StoreArgs, freshStoreArgs, run, startServe } from "../cli/process";
import { tempDir } from "../helpers";

/**
 * Issue 30's "done when": a scheduled ramp runs each step once across three `svc serve` processes sharing one
 * store (the data dir's SQLite file, or one PostgreSQL database), with one SIGKILLed at a step's time. Each
 * server's runner looks every 100 ms (SERVICE_SCHEDULES_EVERY_MS) and claims due steps in the transaction that
 * applies them. Asserted on stored state: the gate's history (one version per step, in order) and one
 * `schedule.run` audit row per step.
 */

const servers: ServeProcess[] = [];
let store: StoreArgs | undefined;
const dirs: string[] = [];

afterAll(async () => {
  for (const s of servers) {
    s.proc.kill("SIGKILL");
    await s.proc.exited;
  }
  await store?.drop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

test("a scheduled ramp runs each step once across three servers with one SIGKILLed at a step's time", async () => {
  const dataDir = tempDir("svc-schedules-kill-");
  dirs.push(dataDir);
  store = await freshStoreArgs();
  const init = await run([...SVC_SOURCE, "init", "--data", dataDir, ...store.args, "--json"]);
  expect(init.code, init.stderr).toBe(0);
  const { adminKey } = JSON.parse(init.stdout) as { adminKey: string };
  const serve = () =>
    startServe([...SVC_SOURCE, "serve", "--port", "0", "--host", "127.0.0.1", "--data", dataDir, "--no-request-log", ...store!.args], {
      env: { SERVICE_SCHEDULES_EVERY_MS: "100" },
      timeoutMs: 30_000,
    });
  // One after another: three first starts of one SQLite file at once only wait on each other's migrations.
  for (let i = 0; i < 3; i++) servers.push(await serve());
  const call = async (base: string, path: string, init: { method?: string; body?: unknown } = {}) => {
    const res = await fetch(base + path, {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"),
      headers: { authorization: `Bearer ${adminKey}`, ...(init.body === undefined ? {} : { "content-type": "application/json" }) },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  expect((await call(servers[0]!.url, "/api/admin/gates", { body: { name: "ramped" } })).status).toBe(201);
  const t0 = Date.now();
  const step = (pct: number, offsetMs: number) => ({ change: { kind: "gate.rules", name: "ramped", env: "prod", rules: [{ conditions: [], passPercentage: pct }] }, runAt: new Date(t0 + offsetMs).toISOString() });
  const created = await call(servers[1]!.url, "/api/admin/schedules", { body: { steps: [step(5, 2_000), step(25, 4_000), step(100, 6_000)] } });
  expect(created.status).toBe(201);
  const id = created.body.id as string;

  // At step 2's time, one server dies without a word (no drain, no rollback on its side: its open transaction is lost).
  await Bun.sleep(Math.max(0, t0 + 4_000 - Date.now()));
  const victim = servers.shift()!;
  victim.proc.kill("SIGKILL");
  await victim.proc.exited;

  const done = await until("the ramp to finish", async () => {
    const got = await call(servers[0]!.url, `/api/admin/schedules/${id}`);
    return got.body.state !== "pending" && got.body;
  });
  expect(done.state).toBe("done");
  expect(done.steps.map((s: { step: number; state: string; error: string | null }) => [s.step, s.state, s.error])).toEqual([
    [1, "done", null],
    [2, "done", null],
    [3, "done", null],
  ]);
  const ranAt = done.steps.map((s: { ranAt: string }) => Date.parse(s.ranAt));
  expect([...ranAt].sort((a, b) => a - b)).toEqual(ranAt);

  // Each step published once, in order: versions 2, 3, 4 at 5 %, 25 %, 100 %.
  const history = (await call(servers[1]!.url, "/api/admin/gates/ramped/history?env=prod")).body as { version: number; action: string; actorType: string; rules: { passPercentage: number }[] }[];
  expect(history.map((h): (number | null)[] => [h.version, h.rules[0]?.passPercentage ?? null])).toEqual([
    [4, 100],
    [3, 25],
    [2, 5],
    [1, null],
  ]);
  expect(history.slice(0, 3).map((h) => h.actorType)).toEqual(["schedule", "schedule", "schedule"]);
  // One schedule.run row per step, each with its step, and nothing failed.
  const audit = (await call(servers[0]!.url, `/api/admin/audit?limit=100&resource=schedule`)).body.entries as { action: string; subjectId: string; detail: { step?: number } }[];
  const mine = audit.filter((e) => e.subjectId === id);
  expect(mine.map((e) => e.action).sort()).toEqual(["schedule.create", "schedule.run", "schedule.run", "schedule.run"]);
  expect(mine.filter((e) => e.action === "schedule.run").map((e) => e.detail.step).sort()).toEqual([1, 2, 3]);
}, 120_000);
