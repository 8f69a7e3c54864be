import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
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

type Answer = { status: number; headers: Record<string, string>; body: any };
type Upload = { answer: Promise<Answer>; closed: Promise<boolean>; stop(): void };

/**
 * A POST over a raw socket whose body comes a few bytes at a time, as a slow (or hostile) client sends it:
 * `length` is the declared Content-Length (absent: chunked). `answer` settles with the first whole answer, or
 * when the connection ends without one (status 0), at the latest after `giveUpMs`; `closed` says whether the
 * server closed the connection within a second of answering.
 */
function slowUpload(port: number, path: string, headers: Record<string, string>, length?: number, giveUpMs = 6000): Upload {
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => undefined);
  let received = "";
  const head = [`POST ${path} HTTP/1.1`, "Host: 127.0.0.1", "Content-Type: application/json", ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  head.push(length === undefined ? "Transfer-Encoding: chunked" : `Content-Length: ${length}`);
  const piece = (text: string) => (length === undefined ? `${text.length.toString(16)}\r\n${text}\r\n` : text);
  socket.write(`${head.join("\r\n")}\r\n\r\n${piece('{"events":[')}`);
  const drip = setInterval(() => {
    if (!socket.destroyed) socket.write(piece(" "));
  }, 40);
  const { promise: answer, resolve } = Promise.withResolvers<Answer>();
  const { promise: closed, resolve: closing } = Promise.withResolvers<boolean>();
  const parse = (): Answer | undefined => {
    const end = received.indexOf("\r\n\r\n");
    if (end < 0) return undefined;
    const [statusLine = "", ...lines] = received.slice(0, end).split("\r\n");
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const at = line.indexOf(":");
      if (at > 0) headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
    }
    const text = received.slice(end + 4);
    if (text.length < Number(headers["content-length"] ?? 0)) return undefined;
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    return { status: Number(statusLine.split(" ")[1] ?? 0) || 0, headers, body };
  };
  let answered = false;
  socket.on("data", (d) => {
    received += d.toString("latin1");
    const whole = parse();
    if (!whole || answered) return;
    answered = true;
    clearInterval(drip);
    resolve(whole);
    setTimeout(() => closing(socket.destroyed), 1000);
  });
  socket.on("close", () => {
    clearInterval(drip);
    clearTimeout(giveUp);
    closing(true);
    resolve(parse() ?? { status: 0, headers: {}, body: received });
  });
  const giveUp = setTimeout(() => socket.destroy(), giveUpMs);
  return {
    answer,
    closed,
    stop: () => {
      clearInterval(drip);
      socket.destroy();
    },
  };
}

/** The value of one sample of /metrics (undefined when absent). */
async function metric(url: string, sample: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${sample} `));
  return line === undefined ? undefined : Number(line.slice(sample.length + 1));
}

describe("slow uploads (item 4)", () => {
  test("every route that reads a body stops waiting for it at the read deadline: 408 BAD_REQUEST, the connection closed, nothing stored, /healthz within 100 ms meanwhile", async () => {
    const ts = await startTestServer({ bodyReads: { timeoutMs: 500 } });
    try {
      const port = Number(new URL(ts.url).port);
      const uploads = [
        slowUpload(port, "/api/admin/killswitches", { Authorization: `Bearer ${ts.adminKey}` }, 4000),
        slowUpload(port, "/api/sdk/v1/events", { "X-SDK-Key": ts.serverKey }, 4000),
        slowUpload(port, "/api/sdk/v1/events", { "X-SDK-Key": ts.serverKey }),
        slowUpload(port, `/api/1/envelope/?sentry_key=${ts.serverKey}`, {}, 4000),
        slowUpload(port, "/ops/bug", { "X-SDK-Key": ts.clientKey }, 4000),
        slowUpload(port, "/ofrep/v1/evaluate/flags", { "X-SDK-Key": ts.serverKey }, 4000),
      ];
      const answers = Promise.all(uploads.map((u) => u.answer));
      const latencies = await healthzWhile(ts.url, answers);
      for (const answer of await answers) {
        expect(answer.status).toBe(408);
        expect(answer.body).toEqual({ error: "Request body timed out", code: "BAD_REQUEST", detail: "the whole body must arrive within 0.5 s" });
        expect(answer.headers.connection).toBe("close");
      }
      // The rest of a late body is not waited for: the server hangs up.
      for (const upload of uploads) expect(await upload.closed).toBe(true);
      expect(Math.max(...latencies)).toBeLessThan(100);
      expect((await ts.api("/api/admin/killswitches")).body).toEqual([]);
      expect(await metric(ts.url, 'svc_http_body_refusals_total{reason="timeout"}')).toBe(6);
      expect(await metric(ts.url, "svc_http_body_reads")).toBe(0);
      // A body that arrives in time is taken as before.
      expect((await ts.api("/api/admin/killswitches", { body: { name: "after" } })).status).toBe(201);
    } finally {
      await ts.stop();
    }
  }, 30_000);

  test("one client reads at most perClient bodies at once: more is 429 Too many requests with Retry-After; slots come back when its uploads end", async () => {
    const ts = await startTestServer({ bodyReads: { perClient: 3 } });
    const uploads: Upload[] = [];
    try {
      const port = Number(new URL(ts.url).port);
      for (let i = 0; i < 3; i++) uploads.push(slowUpload(port, "/api/sdk/v1/events", { "X-SDK-Key": ts.serverKey }, 4000, 20_000));
      // Until the server reads all three (it answers nothing meanwhile), bodies are still taken.
      const deadline = Date.now() + 5000;
      while ((await metric(ts.url, "svc_http_body_reads")) !== 3 && Date.now() < deadline) await Bun.sleep(20);
      const refused = ts.api("/api/sdk/v1/events", { body: { events: [{ name: "signup" }] }, key: ts.serverKey });
      const latencies = await healthzWhile(ts.url, refused);
      const answer = await refused;
      expect(answer.status).toBe(429);
      expect(answer.body).toEqual({ error: "Too many requests", code: "BAD_REQUEST", detail: "at most 3 request bodies are read at once from one client address" });
      expect(answer.headers.get("retry-after")).toBe("1");
      // Refused before a byte of it is read; the connection stays open for the client's next request.
      const raw = slowUpload(port, "/api/admin/killswitches", { Authorization: `Bearer ${ts.adminKey}` }, 4000);
      expect((await raw.answer).status).toBe(429);
      expect((await raw.answer).headers["retry-after"]).toBe("1");
      raw.stop();
      expect(Math.max(...latencies)).toBeLessThan(100);
      expect(await metric(ts.url, 'svc_http_body_refusals_total{reason="per_client"}')).toBe(2);
      for (const u of uploads) u.stop();
      // The slow clients hung up: their slots are free again.
      let after = await ts.api("/api/sdk/v1/events", { body: { events: [{ name: "signup" }] }, key: ts.serverKey });
      for (let i = 0; after.status === 429 && i < 50; i++) {
        await Bun.sleep(20);
        after = await ts.api("/api/sdk/v1/events", { body: { events: [{ name: "signup" }] }, key: ts.serverKey });
      }
      expect(after.status).toBe(202);
      expect(await metric(ts.url, "svc_http_body_reads")).toBe(0);
    } finally {
      for (const u of uploads) u.stop();
      await ts.stop();
    }
  }, 30_000);

  test("the server reads at most `max` bodies at once: more is 503 Unavailable with Retry-After", async () => {
    const ts = await startTestServer({ bodyReads: { max: 2, perClient: 100 } });
    const uploads: Upload[] = [];
    try {
      const port = Number(new URL(ts.url).port);
      for (let i = 0; i < 2; i++) uploads.push(slowUpload(port, "/ofrep/v1/evaluate/flags", { "X-SDK-Key": ts.serverKey }, 4000, 20_000));
      const deadline = Date.now() + 5000;
      while ((await metric(ts.url, "svc_http_body_reads")) !== 2 && Date.now() < deadline) await Bun.sleep(20);
      const refused = ts.api("/api/admin/killswitches", { body: { name: "refused" } });
      const latencies = await healthzWhile(ts.url, refused);
      const answer = await refused;
      expect(answer.status).toBe(503);
      expect(answer.body).toEqual({ error: "Unavailable" });
      expect(answer.headers.get("retry-after")).toBe("1");
      expect(Math.max(...latencies)).toBeLessThan(100);
      expect(await metric(ts.url, 'svc_http_body_refusals_total{reason="server"}')).toBe(1);
      expect((await ts.api("/api/admin/killswitches")).body).toEqual([]);
    } finally {
      for (const u of uploads) u.stop();
      await ts.stop();
    }
  }, 30_000);
});
