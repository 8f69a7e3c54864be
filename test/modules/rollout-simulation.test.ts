import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { type Client, createClient } from "../../src/sdk";
import { rmSync } from "node:fs";
import { type TestServer, dropStore, freshStoreUrl, startTestServer, tempDir } from "../helpers";
import { seededRandom as rng } from "../seeded-random";

// The rollout monitor end to end, with the server's injected clock: synthetic users evaluate the
// gate through the real SDK (which logs their exposures), some of them err (captureError, the SDK's
// tracked errors), and the monitor's rounds run as time moves. Stage lengths are an hour; the clock
// jumps, the traffic is stamped with the same clock (the SDK's `now` option).

let ts: TestServer;
let now = Date.parse("2026-11-24T09:00:00.000Z");
const MINUTE = 60_000;
const everyone = [{ name: "everyone", conditions: [], passPercentage: 100 }];
const STAGES = [
  { percent: 10, minutes: 60 },
  { percent: 30, minutes: 60 },
  { percent: 60, minutes: 60 },
  { percent: 100, minutes: 0 },
];

const monitor = () => ts.server.ctx.services.rollouts.monitor;
const rollout = async (id: string) => (await ts.api(`/api/admin/rollouts/${id}`)).body;

async function sdkClient(): Promise<Client> {
  const sdk = createClient({ baseUrl: ts.url, sdkKey: ts.serverKey, env: "prod", stream: false, pollIntervalMs: 3_600_000, flushIntervalMs: 3_600_000, now: () => now });
  await sdk.ready();
  return sdk;
}

/** One seeded stream per group: see traffic. */
type GroupRandom = { old: () => number; new: () => number };
const groupRandom = (seed: number): GroupRandom => ({ old: rng(seed), new: rng(seed + 1_000_003) });

/**
 * `users` users (fresh ids per call) evaluate `gate`; each errs with chance
 * `errorRate`, times `lift` for those the gate lets through (the new rules).
 * Which users the gate lets through changes from run to run (each rollout
 * hashes with a salt of its own), so each group draws from a seeded stream
 * of its own: the k-th user of a group errs or not alike on every run, and
 * the test's verdict does not hang on which users fell in which group. With
 * one stream for all, the 30 % test's estimate varied by ±0.01 around 0.06
 * from run to run, and its interval missed 0 in about one run in a hundred.
 */
async function traffic(sdk: Client, gate: string, prefix: string, users: number, errorRate: number, lift: number, random: GroupRandom): Promise<{ on: number }> {
  let on = 0;
  for (let i = 0; i < users; i++) {
    const user = `${prefix}-${i}`;
    const enabled = sdk.isEnabled(gate, { user_id: user });
    if (enabled) on++;
    if ((enabled ? random.new : random.old)() < errorRate * (enabled ? lift : 1)) sdk.captureError(new Error(enabled ? "new checkout failed" : "old checkout failed"), { unitId: user });
    if (i % 2000 === 1999) await sdk.flush();
  }
  await sdk.flush();
  return { on };
}

beforeAll(async () => {
  ts = await startTestServer({ rolloutsEveryMs: 0, alertsEveryMs: 0, experimentsEveryMs: 0, clock: () => now });
});
afterAll(() => ts.stop());

describe("guarded rollouts under simulated traffic", () => {
  test("a healthy change walks every stage to 100 % and is published", async () => {
    await ts.api("/api/admin/gates", { body: { name: "healthy-checkout" } });
    const r = (await ts.api("/api/admin/rollouts", { body: { gate: "healthy-checkout", env: "prod", rules: everyone, stages: STAGES } })).body;
    const random = groupRandom(1);
    for (let stage = 0; stage < 3; stage++) {
      // A client per stage: it reads the stage's snapshot at start.
      const sdk = await sdkClient();
      try {
        now += MINUTE;
        const { on } = await traffic(sdk, "healthy-checkout", `h${stage}`, 4000, 0.2, 1, random);
        expect(on / 4000).toBeCloseTo(STAGES[stage]!.percent / 100, 1);
        // Before its hour is up the stage holds.
        const early = (await monitor().checkAll(now)).find((o) => o.rolloutId === r.id)!;
        expect(early.check!.decision).toBe("none");
        now += 60 * MINUTE;
        const round = (await monitor().checkAll(now)).find((o) => o.rolloutId === r.id)!;
        expect(round.check).toMatchObject({ stage, decision: "advance", stale: false });
        const errors = round.check!.metrics[0]!;
        expect(errors.metric).toBe("errors");
        expect(errors.new.n + errors.old.n).toBe(4000);
        expect(errors.new.n).toBe(on);
        expect(errors.regression).toBe(false);
        expect((await rollout(r.id)).stage).toBe(stage + 1);
      } finally {
        await sdk.close();
      }
    }
    const final = (await monitor().checkAll(now + MINUTE)).find((o) => o.rolloutId === r.id)!;
    expect(final.check!.decision).toBe("complete");
    const done = await rollout(r.id);
    expect(done).toMatchObject({ status: "completed", percent: 100, outcome: { kind: "completed", auto: true } });
    expect((await ts.api("/api/admin/gates/healthy-checkout")).body.envs.prod.rules).toEqual(everyone);
    const checks = (await ts.api(`/api/admin/rollouts/${r.id}/checks`)).body as { decision: string }[];
    expect(checks.map((c) => c.decision).reverse()).toEqual(["none", "advance", "none", "advance", "none", "advance", "complete"]);
  });

  test("30 % more errors with the change: rolled back at the first stage with the data; the snapshot goes back", async () => {
    await ts.api("/api/admin/gates", { body: { name: "risky-checkout" } });
    const r = (await ts.api("/api/admin/rollouts", { body: { gate: "risky-checkout", env: "prod", rules: everyone, stages: STAGES } })).body;
    const sdk = await sdkClient();
    const random = groupRandom(2);
    try {
      now += MINUTE;
      await traffic(sdk, "risky-checkout", "r0", 20_000, 0.2, 1.3, random);
      now += 60 * MINUTE;
      const before = (await ts.api("/api/sdk/v1/snapshot?env=prod", { key: ts.serverKey })).body.revision;
      const round = (await monitor().checkAll(now)).find((o) => o.rolloutId === r.id)!;
      expect(round.check!.decision).toBe("rollback");
      const errors = round.check!.metrics[0]!;
      expect(errors.regression).toBe(true);
      expect(errors.interval![0]).toBeGreaterThan(0);
      const back = await rollout(r.id);
      expect(back).toMatchObject({ status: "rolled_back", stage: 0, outcome: { kind: "rolled_back", auto: true, by: "system@svc.local", metric: "errors" } });
      expect(back.outcome.reason).toContain("errors got higher");
      expect(back.outcome.interval[0]).toBeGreaterThan(0);
      // The rollback is published like any change: a new revision without the rollout; every unit has the old rules.
      const snap = (await ts.api("/api/sdk/v1/snapshot?env=prod", { key: ts.serverKey })).body;
      expect(snap.revision).toBeGreaterThan(before);
      expect(snap.rollouts[r.id]).toBeUndefined();
      const fresh = await sdkClient();
      for (let i = 0; i < 200; i++) expect(fresh.isEnabled("risky-checkout", { user_id: `r0-${i}` })).toBe(false);
      await fresh.close();
      const auditRows = (await ts.api("/api/admin/audit?action=rollout.rollback")).body.entries as { subjectId: string; actorEmail: string }[];
      expect(auditRows.find((a) => a.subjectId === r.id)?.actorEmail).toBe("system@svc.local");
      // Connectors hear it: the outbox holds the event.
      const events = await ts.store.all<{ type: string; payload: string }>("SELECT type, payload FROM outbox_events WHERE type = 'rollout.rolled_back'");
      expect(events.some((e) => JSON.parse(e.payload).rolloutId === r.id)).toBe(true);
    } finally {
      await sdk.close();
    }
  });

  test("stale data holds the stage: with the ingest lag over two minutes nothing advances", async () => {
    await ts.api("/api/admin/gates", { body: { name: "lagging" } });
    const r = (await ts.api("/api/admin/rollouts", { body: { gate: "lagging", env: "prod", rules: everyone, stages: [{ percent: 50, minutes: 1 }, { percent: 100, minutes: 0 }] } })).body;
    const store = ts.server.ctx.services.analytics.eventStore;
    const original = store.ingestLagMs;
    store.ingestLagMs = () => 5 * MINUTE;
    try {
      now += 10 * MINUTE;
      const round = (await monitor().checkAll(now)).find((o) => o.rolloutId === r.id)!;
      expect(round.check).toMatchObject({ decision: "wait", stale: true, ingestLagMs: 5 * MINUTE });
      expect((await rollout(r.id)).stage).toBe(0);
    } finally {
      store.ingestLagMs = original;
    }
    const round = (await monitor().checkAll(now)).find((o) => o.rolloutId === r.id)!;
    expect(round.check!.decision).toBe("advance");
  });

  test("a restart mid-stage picks up where it was: the stage's start and the last check are in the store", async () => {
    const dataDir = tempDir();
    const storeUrl = await freshStoreUrl();
    const options = { rolloutsEveryMs: 0, alertsEveryMs: 0, experimentsEveryMs: 0, clock: () => now, dataDir, store: storeUrl };
    const first = await startTestServer(options);
    await first.api("/api/admin/gates", { body: { name: "restarted" } });
    const r = (await first.api("/api/admin/rollouts", { body: { gate: "restarted", env: "prod", rules: everyone, stages: [{ percent: 20, minutes: 30 }, { percent: 100, minutes: 0 }] } })).body;
    now += 10 * MINUTE;
    await first.server.ctx.services.rollouts.monitor.checkAll(now);
    await first.server.stop();
    const second = await startTestServer(options);
    try {
      const check = async () => (await second.server.ctx.services.rollouts.monitor.checkAll(now)).find((o) => o.rolloutId === r.id)!.check!.decision;
      const kept = (await second.api(`/api/admin/rollouts/${r.id}`, { key: first.adminKey })).body;
      expect(kept).toMatchObject({ status: "running", stage: 0, lastCheck: { decision: "none" } });
      now += 15 * MINUTE;
      expect(await check()).toBe("none");
      now += 10 * MINUTE;
      expect(await check()).toBe("advance");
    } finally {
      await second.server.stop();
      rmSync(dataDir, { recursive: true, force: true });
      await dropStore(storeUrl);
    }
  });
});

describe("several servers on one store", () => {
  test("rounds of two servers at the same moment advance a stage once", async () => {
    const dataDir = tempDir();
    const storeUrl = await freshStoreUrl();
    const options = { rolloutsEveryMs: 0, alertsEveryMs: 0, experimentsEveryMs: 0, clock: () => now, dataDir, store: storeUrl };
    const a = await startTestServer(options);
    const b = await startTestServer(options);
    try {
      await a.api("/api/admin/gates", { body: { name: "shared" } });
      const r = (await a.api("/api/admin/rollouts", { body: { gate: "shared", env: "prod", rules: everyone, stages: [{ percent: 10, minutes: 1 }, { percent: 50, minutes: 1 }, { percent: 100, minutes: 0 }] } })).body;
      for (let round = 0; round < 3; round++) {
        now += 2 * MINUTE;
        await Promise.all([a.server.ctx.services.rollouts.monitor.checkAll(now), b.server.ctx.services.rollouts.monitor.checkAll(now)]);
      }
      const done = (await a.api(`/api/admin/rollouts/${r.id}`)).body;
      expect(done.status).toBe("completed");
      const rows = await a.store.all<{ action: string }>("SELECT action FROM audit_log WHERE subject_id = ? ORDER BY seq", r.id);
      expect(rows.map((x) => x.action)).toEqual(["rollout.create", "rollout.advance", "rollout.advance", "rollout.complete"]);
      // The gate was published once.
      const history = (await a.api("/api/admin/gates/shared/history?env=prod")).body as unknown[];
      expect(history.length).toBe(2);
    } finally {
      await a.server.stop();
      await b.server.stop();
      rmSync(dataDir, { recursive: true, force: true });
      await dropStore(storeUrl);
    }
  });
});

describe("tracked errors from the real @sentry/node feed the error rate", () => {
  test("errors Sentry reports for the units with the change count in the new group's rate", async () => {
    // Sentry stamps events with the wall clock: this server's clock is the wall clock too.
    const real = await startTestServer({ rolloutsEveryMs: 0, alertsEveryMs: 0, experimentsEveryMs: 0 });
    try {
      await real.api("/api/admin/gates", { body: { name: "sentry-watched" } });
      const r = (await real.api("/api/admin/rollouts", { body: { gate: "sentry-watched", env: "prod", rules: everyone, stages: [{ percent: 50, minutes: 60 }, { percent: 100, minutes: 0 }] } })).body;
      const sdk = createClient({ baseUrl: real.url, sdkKey: real.serverKey, env: "prod", stream: false, flushIntervalMs: 3_600_000 });
      await sdk.ready();
      const withChange: string[] = [];
      for (let i = 0; i < 40; i++) if (sdk.isEnabled("sentry-watched", { user_id: `s-${i}` })) withChange.push(`s-${i}`);
      await sdk.flush();
      await sdk.close();
      expect(withChange.length).toBeGreaterThan(5);
      const failing = withChange.slice(0, 5);
      const dsn = `http://${real.serverKey}@127.0.0.1:${new URL(real.url).port}/1`;
      const child = Bun.spawn([process.execPath, join(import.meta.dir, "..", "fixtures", "sentry-rollout", "main.ts"), dsn, ...failing], { stdout: "pipe", stderr: "pipe" });
      const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
      expect(code, err).toBe(0);
      expect(JSON.parse(out)).toMatchObject({ flushed: true, sent: 5 });
      const round = (await real.server.ctx.services.rollouts.monitor.checkAll(Date.now() + 1000)).find((o) => o.rolloutId === r.id)!;
      const errors = round.check!.metrics[0]!;
      expect(errors.new).toEqual({ n: withChange.length, mean: 5 / withChange.length });
      expect(errors.old).toEqual({ n: 40 - withChange.length, mean: 0 });
    } finally {
      await real.stop();
    }
  });
});
