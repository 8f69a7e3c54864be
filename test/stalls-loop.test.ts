import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { EventRow } from "../src/lib/eventstore";
import { type TestServer, startTestServer } from "./helpers";

/**
 * Issue 25, items 3 and 4: no request over events, and no slow upload, may
 * hold the server's request loop. Each test measures GET /healthz while the
 * hostile work runs, and asks every answer within 100 ms.
 */

/** Every /healthz answer's latency (ms), asked one after another until `work` settles (at least once). */
async function healthzWhile(url: string, work: Promise<unknown>): Promise<number[]> {
  let settled = false;
  void work.then(
    () => (settled = true),
    () => (settled = true),
  );
  const latencies: number[] = [];
  do {
    const start = performance.now();
    const res = await fetch(`${url}/healthz`);
    await res.text();
    latencies.push(performance.now() - start);
    expect(res.status).toBe(200);
    await Bun.sleep(5);
  } while (!settled);
  return latencies;
}

describe("queries over events run off the request loop (item 3)", () => {
  let ts: TestServer;
  let readOnly: string;
  /** A whole hour, some days back: the events of these tests fall in [T0, T0 + 1 h). */
  const T0 = Math.floor(Date.now() / 3_600_000) * 3600 - 48 * 3600;
  const EVENTS = 400_000;
  const UNITS = 150_000;

  beforeAll(async () => {
    ts = await startTestServer({ alertsEveryMs: 0, experimentsEveryMs: 0, rolloutsEveryMs: 0 });
    const event = await ts.api("/api/admin/events", { body: { name: "purchase", properties: [{ name: "country", type: "string" }] } });
    expect(event.status).toBe(201);
    expect((await ts.api("/api/admin/metrics", { body: { name: "buyers", kind: "unique", event: "purchase" } })).status).toBe(201);
    expect((await ts.api("/api/admin/metrics", { body: { name: "german-purchases", kind: "count", event: "purchase", filters: [{ property: "country", op: "eq", value: "de" }] } })).status).toBe(201);
    const token = await ts.api("/api/admin/tokens", { body: { name: "reader", access: "read-only" } });
    expect(token.status).toBe(201);
    readOnly = token.body.token;
    // Straight into the event store, as the benches do: a few hundred thousand events in one hour.
    const { analytics } = ts.server.ctx.services;
    const countries = ["de", "fr", "us", "gb"];
    for (let start = 0; start < EVENTS; start += 20_000) {
      const rows: EventRow[] = [];
      for (let i = start; i < start + 20_000; i++) {
        rows.push({ projectId: ts.projectId, name: "purchase", ts: T0 * 1000 + (i % 3_600_000), unitId: `u${(i * 7919) % UNITS}`, value: 1, props: { country: countries[i % 4]! } });
      }
      await analytics.append(rows);
    }
  }, 120_000);
  afterAll(() => ts.stop());

  const series = (metric: string, body: unknown) => ts.api(`/api/admin/metrics/${metric}/series`, { body, key: readOnly });

  test("a metric series over 400,000 raw events (unique units, a filter) answers in full while /healthz answers within 100 ms", async () => {
    // Unaligned windows read the raw events (no roll-up answers them): the distinct units of every event, then a filter per event.
    const unique = series("buyers", { from: T0 - 1, to: T0 + 3599, bucket: 3600 });
    const latencies = await healthzWhile(ts.url, unique);
    const answer = await unique;
    expect(answer.status).toBe(200);
    expect(answer.body.rows).toBeDefined();
    const filtered = series("german-purchases", { from: T0 - 1, to: T0 + 3599, bucket: 60 });
    latencies.push(...(await healthzWhile(ts.url, filtered)));
    const counted = await filtered;
    expect(counted.status).toBe(200);
    const sum = (body: any) => body.rows.reduce((n: number, p: { v: number }) => n + p.v, 0);
    expect(sum(answer.body)).toBe(UNITS);
    expect(sum(counted.body)).toBe(EVENTS / 4);
    expect(Math.max(...latencies)).toBeLessThan(100);
  }, 60_000);

  test("several series at once: each answers, and /healthz stays within 100 ms", async () => {
    const all = Promise.all([0, 1, 2].map(() => series("german-purchases", { from: T0 - 1, to: T0 + 3599, bucket: 600 })));
    const latencies = await healthzWhile(ts.url, all);
    for (const r of await all) expect(r.status).toBe(200);
    expect(Math.max(...latencies)).toBeLessThan(100);
  }, 60_000);
});
