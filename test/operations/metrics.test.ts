/**
 * GET /metrics: parsed with parse-prometheus-text-format (a pinned devDependency, a port of the Prometheus
 * Python client's parser), and also checked by `promtool check metrics` (Prometheus's own parser and linter)
 * when promtool is on the PATH (Debian: apt-get install prometheus). Asserts the families and exact values
 * after known traffic. That parser folds a histogram's labelled series into one entry, so the per-series
 * histogram checks read its `_count` and `_bucket` sample lines (`sampleLine`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { networkInterfaces } from "node:os";
import { type TestServer, TEST_ENGINE, startTestServer } from "../helpers";

type ParsedMetric = { labels?: Record<string, string>; value?: string; buckets?: Record<string, string>; count?: string; sum?: string };
type ParsedFamily = { name: string; help: string; type: string; metrics: ParsedMetric[] };
// The parser ships no types; this is the part of its API used here.
const parsePrometheus = require("parse-prometheus-text-format") as (text: string) => ParsedFamily[];

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

async function scrape(server: TestServer = s, headers: Record<string, string> = {}): Promise<Map<string, ParsedFamily>> {
  const r = await fetch(`${server.url}/metrics`, { headers });
  const text = await r.text();
  expect(r.status, text).toBe(200);
  expect(r.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  const promtool = Bun.which("promtool");
  if (promtool) {
    const check = Bun.spawnSync([promtool, "check", "metrics"], { stdin: new TextEncoder().encode(text) });
    const said = `${check.stdout}${check.stderr}`;
    // promtool exits 1 when the text does not parse, 3 for lint findings: prom-client's default
    // nodejs_active_*_total gauges have one (a gauge named _total); ours must have none.
    expect(check.exitCode === 0 || check.exitCode === 3, said).toBe(true);
    const findings = said.split("\n").filter((line) => line.trim() !== "");
    expect(findings.filter((line) => !line.startsWith("nodejs_")), said).toEqual([]);
  }
  lastText = text;
  return new Map(parsePrometheus(text).map((f) => [f.name, f]));
}

/** The text of the last scrape: histogram series are read from it. */
let lastText = "";

/** The value of the sample line `name{labels}` of the last scrape, labels in the order written. */
function sampleLine(name: string, labels: Record<string, string>): number | undefined {
  const key = `${name}{${Object.entries(labels).map(([k, v]) => `${k}="${v}"`).join(",")}} `;
  const line = lastText.split("\n").find((l) => l.startsWith(key));
  return line === undefined ? undefined : Number(line.slice(key.length));
}

/** The value of the sample of `name` whose labels include `labels` (undefined when there is none). */
function valueOf(families: Map<string, ParsedFamily>, name: string, labels: Record<string, string> = {}): number | undefined {
  const f = families.get(name);
  const m = f?.metrics.find((x) => Object.entries(labels).every(([k, v]) => x.labels?.[k] === v));
  if (!m) return undefined;
  return Number(m.value ?? m.count);
}

function sdk(path: string, headers: Record<string, string> = {}, key: string | null = s.serverKey) {
  return fetch(s.url + path, { headers: { ...(key ? { "x-sdk-key": key } : {}), ...headers } });
}

async function createKillswitch(name: string): Promise<void> {
  const r = await s.api("/api/admin/killswitches", { body: { name } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

describe("GET /metrics", () => {
  test("the exposition parses and carries every family", async () => {
    expect((await s.api("/healthz", { key: null })).status).toBe(200);
    const families = await scrape();
    for (const name of [
      "svc_build_info",
      "svc_http_requests_total",
      "svc_http_request_duration_seconds",
      "svc_sdk_polls_total",
      "svc_sse_streams_open",
      "svc_publish_to_stream_seconds",
      "svc_events_accepted_total",
      "svc_error_occurrences_dropped_total",
      "svc_error_queue_items_skipped_total",
      "svc_event_queue_rows",
      "svc_event_spool_rows",
      "svc_store_up",
      "svc_outbox_pending_events",
      "svc_connector_deliveries_pending",
      "svc_store_size_bytes",
      "svc_store_wal_size_bytes",
      "process_cpu_seconds_total",
      "process_resident_memory_bytes",
    ]) {
      expect(families.has(name), name).toBe(true);
    }
    expect(families.get("svc_http_request_duration_seconds")!.type).toBe("HISTOGRAM");
    expect(families.get("svc_sdk_polls_total")!.type).toBe("COUNTER");
    expect(valueOf(families, "svc_store_up")).toBe(1);
    expect(valueOf(families, "process_resident_memory_bytes")).toBeGreaterThan(1_000_000);
    const main = valueOf(families, "svc_store_size_bytes", { store: "main" });
    expect(main).toBeGreaterThan(0);
    if (TEST_ENGINE === "sqlite") {
      expect(valueOf(families, "svc_store_wal_size_bytes", { store: "main" })).toBeGreaterThanOrEqual(0);
      expect(valueOf(families, "svc_store_size_bytes", { store: "events" })).toBeGreaterThan(0);
    }
  });

  test("after N conditional polls the 304 counter is N, on the fast path and by route template", async () => {
    await createKillswitch("metrics-poll");
    const first = await sdk("/api/sdk/v1/snapshot?env=prod");
    const etag = first.headers.get("etag")!;
    await first.arrayBuffer();
    const before = await scrape();
    const polls = (route: Map<string, ParsedFamily>, result: string) => valueOf(route, "svc_sdk_polls_total", { endpoint: "snapshot", result }) ?? 0;
    const N = 25;
    for (let i = 0; i < N; i++) {
      const r = await sdk("/api/sdk/v1/snapshot?env=prod", { "if-none-match": etag });
      expect(r.status).toBe(304);
    }
    // Two failures: an unknown key (401, answered by the Elysia route) and a bad env (400).
    expect((await sdk("/api/sdk/v1/snapshot?env=prod", {}, "sdk_server_nosuchkeynosuchkey00")).status).toBe(401);
    expect((await sdk("/api/sdk/v1/snapshot?env=production")).status).toBe(400);
    const after = await scrape();
    expect(polls(after, "304") - polls(before, "304")).toBe(N);
    expect(polls(after, "401") - polls(before, "401")).toBe(1);
    expect(polls(after, "400") - polls(before, "400")).toBe(1);
    const labels = { method: "GET", route: "/api/sdk/v1/snapshot", status: "304" };
    expect((valueOf(after, "svc_http_requests_total", labels) ?? 0) - (valueOf(before, "svc_http_requests_total", labels) ?? 0)).toBe(N);
    const total = valueOf(after, "svc_http_requests_total", labels)!;
    expect(sampleLine("svc_http_request_duration_seconds_count", labels)).toBe(total);
    expect(sampleLine("svc_http_request_duration_seconds_bucket", { ...labels, le: "+Inf" })).toBe(total);
    // A 304 from memory answers in well under 100 ms.
    expect(sampleLine("svc_http_request_duration_seconds_bucket", { ...labels, le: "0.1" })).toBe(total);
  });

  test("OFREP polls and stream connects are counted by endpoint", async () => {
    await createKillswitch("metrics-ofrep");
    const before = await scrape();
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${s.url}/ofrep/v1/evaluate/flags/metrics-ofrep`, {
        method: "POST",
        headers: { "x-sdk-key": s.serverKey, "content-type": "application/json" },
        body: JSON.stringify({ context: { env: "prod" } }),
      });
      expect(r.status).toBe(200);
      await r.arrayBuffer();
    }
    const bulk = await fetch(`${s.url}/ofrep/v1/evaluate/flags`, {
      method: "POST",
      headers: { "x-sdk-key": s.serverKey, "content-type": "application/json" },
      body: JSON.stringify({ context: { env: "prod" } }),
    });
    expect(bulk.status).toBe(200);
    await bulk.arrayBuffer();
    const after = await scrape();
    const ofrep = (f: Map<string, ParsedFamily>) => valueOf(f, "svc_sdk_polls_total", { endpoint: "ofrep", result: "200" }) ?? 0;
    expect(ofrep(after) - ofrep(before)).toBe(4);
    // Two routes, each under its template (never the flag's key from the path).
    expect(valueOf(after, "svc_http_requests_total", { route: "/ofrep/v1/evaluate/flags/*" })).toBeGreaterThanOrEqual(3);
    const routes = after.get("svc_http_requests_total")!.metrics.map((m) => m.labels!.route!);
    expect(routes.some((r) => r.includes("metrics-ofrep"))).toBe(false);
  });

  test("routes are labelled by template; unknown paths collapse into (unmatched); odd methods into other", async () => {
    await createKillswitch("metrics-template");
    expect((await s.api("/api/admin/killswitches/metrics-template")).status).toBe(200);
    expect((await s.api("/api/admin/no-such-thing-1")).status).toBe(404);
    expect((await s.api("/api/admin/no-such-thing-2")).status).toBe(404);
    const odd = await fetch(`${s.url}/healthz`, { method: "PROPFIND" });
    await odd.arrayBuffer();
    const families = await scrape();
    const series = families.get("svc_http_requests_total")!.metrics.map((m) => m.labels!);
    expect(series.some((l) => l.route === "/api/admin/killswitches/:id" && l.method === "GET" && l.status === "200")).toBe(true);
    expect(series.some((l) => l.route!.includes("metrics-template") || l.route!.includes("no-such-thing"))).toBe(false);
    expect(valueOf(families, "svc_http_requests_total", { route: "(unmatched)", status: "404", method: "GET" })).toBeGreaterThanOrEqual(2);
    expect(series.some((l) => l.method === "other")).toBe(true);
    expect(series.some((l) => l.method === "PROPFIND")).toBe(false);
  });

  test("open streams are a gauge; a publish that reaches them is timed", async () => {
    await createKillswitch("metrics-stream");
    const before = await scrape();
    const delivered = (f: Map<string, ParsedFamily>) => Number(f.get("svc_publish_to_stream_seconds")!.metrics[0]!.count ?? 0);
    const controller = new AbortController();
    const res = await fetch(`${s.url}/api/sdk/v1/stream?env=prod`, { headers: { "x-sdk-key": s.serverKey }, signal: controller.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let seen = "";
    const events = async (n: number) => {
      while ((seen.match(/event: snapshot\n/g) ?? []).length < n) {
        const { value, done } = await reader.read();
        if (done) throw new Error("stream ended");
        seen += decoder.decode(value, { stream: true });
      }
    };
    await events(1);
    expect(valueOf(await scrape(), "svc_sse_streams_open")).toBe((valueOf(before, "svc_sse_streams_open") ?? 0) + 1);
    expect((await s.api("/api/admin/killswitches/metrics-stream/toggle", { body: {} })).status).toBe(200);
    await events(2);
    // The histogram is observed right after the listeners ran, in the same tick as the event was queued.
    const after = await scrape();
    expect(delivered(after) - delivered(before)).toBe(1);
    controller.abort();
    await reader.cancel().catch(() => {});
    const deadline = Date.now() + 5000;
    while ((valueOf(await scrape(), "svc_sse_streams_open") ?? 0) > (valueOf(before, "svc_sse_streams_open") ?? 0) && Date.now() < deadline) await Bun.sleep(50);
    const closed = await scrape();
    expect(valueOf(closed, "svc_sse_streams_open")).toBe(valueOf(before, "svc_sse_streams_open") ?? 0);
    // The connect itself is an SDK poll of the stream endpoint.
    const connects = (f: Map<string, ParsedFamily>) => valueOf(f, "svc_sdk_polls_total", { endpoint: "stream", result: "200" }) ?? 0;
    expect(connects(closed) - connects(before)).toBe(1);
  });

  test("events accepted count the committed rows", async () => {
    const before = valueOf(await scrape(), "svc_events_accepted_total") ?? 0;
    const r = await s.api("/api/sdk/v1/events", { key: s.serverKey, body: { events: [{ name: "metrics.a" }, { name: "metrics.b", value: 2 }, { name: "metrics.a" }] } });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    const after = await scrape();
    expect((valueOf(after, "svc_events_accepted_total") ?? 0) - before).toBe(3);
    expect(valueOf(after, "svc_event_queue_rows")).toBe(0);
  });

  test("without SERVICE_METRICS_TOKEN: loopback only, and never through a proxy", async () => {
    for (const header of ["x-forwarded-for", "forwarded", "x-real-ip"]) {
      const r = await fetch(`${s.url}/metrics`, { headers: { [header]: header === "forwarded" ? "for=203.0.113.7" : "203.0.113.7" } });
      expect(r.status, header).toBe(403);
      expect(await r.json()).toMatchObject({ code: "FORBIDDEN", error: "/metrics answers loopback peers only" });
    }
    // Another address of this machine is not loopback.
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && !i.internal && i.family === "IPv4");
    if (!external) return;
    const wide = await startTestServer({ host: "0.0.0.0" });
    try {
      const r = await fetch(`http://${external.address}:${wide.server.port}/metrics`);
      expect(r.status).toBe(403);
      expect((await r.json()).code).toBe("FORBIDDEN");
      const local = await fetch(`http://127.0.0.1:${wide.server.port}/metrics`);
      expect(local.status).toBe(200);
      await local.arrayBuffer();
    } finally {
      await wide.stop();
    }
  });

  test("with SERVICE_METRICS_TOKEN: the bearer token is required, from anywhere", async () => {
    const token = "metrics-token-0123456789abcdef";
    const guarded = await startTestServer({ metricsToken: token });
    try {
      const refused: Record<string, string>[] = [{}, { authorization: "Bearer wrong-token-0123456789" }, { authorization: token }, { authorization: `Basic ${token}` }];
      for (const headers of refused) {
        const r = await fetch(`${guarded.url}/metrics`, { headers });
        expect(r.status, JSON.stringify(headers)).toBe(401);
        expect(await r.json()).toMatchObject({ code: "UNAUTHORIZED", error: "Missing or invalid metrics token" });
      }
      const families = await scrape(guarded, { authorization: `Bearer ${token}` });
      expect(families.has("svc_http_requests_total")).toBe(true);
      // A proxy may relay it: the token is what counts.
      const relayed = await fetch(`${guarded.url}/metrics`, { headers: { authorization: `Bearer ${token}`, "x-forwarded-for": "203.0.113.7" } });
      expect(relayed.status).toBe(200);
      await relayed.arrayBuffer();
    } finally {
      await guarded.stop();
    }
  });

  test("a browser at /metrics gets the dashboard's Metrics page, not the exposition", async () => {
    const r = await fetch(`${s.url}/metrics`, { headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" }, redirect: "manual" });
    // Not signed in: the dashboard sends the browser to sign in and back.
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe("/signin?redirect=%2Fmetrics");
    // A scraper names the server as its config does (compose: `svc:8080`); a browser under a foreign name is refused.
    const named = await fetch(`${s.url}/metrics`, { headers: { host: "svc:8080" } });
    expect(named.status).toBe(200);
    await named.arrayBuffer();
    const foreign = await fetch(`${s.url}/metrics`, { headers: { host: "evil.example:8080", accept: "text/html" }, redirect: "manual" });
    expect(foreign.status).toBe(400);
    expect((await foreign.json()).error).toBe("This server does not answer to that host name");
    // Prometheus's own Accept gets the exposition.
    const prometheus = await fetch(`${s.url}/metrics`, {
      headers: { accept: "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1" },
    });
    expect(prometheus.status).toBe(200);
    expect(await prometheus.text()).toContain("# TYPE svc_http_requests_total counter");
  });

  test("the OpenAPI document lists /metrics as text/plain with its 401 and 403", async () => {
    const doc = (await s.api("/openapi/json", { key: null })).body;
    const op = doc.paths["/metrics"].get;
    expect(Object.keys(op.responses["200"].content)).toEqual(["text/plain"]);
    expect(op.responses["401"]).toBeDefined();
    expect(op.responses["403"]).toBeDefined();
  });
});

describe("the snapshot fast path", () => {
  test("a key polled a moment ago and then revoked is refused at once", async () => {
    const minted = await s.api("/api/admin/keys", { body: { type: "server" } });
    expect(minted.status).toBe(201);
    const key = minted.body.key as string;
    const first = await sdk("/api/sdk/v1/snapshot?env=prod", {}, key);
    expect(first.status).toBe(200);
    const etag = first.headers.get("etag")!;
    await first.arrayBuffer();
    for (let i = 0; i < 3; i++) expect((await sdk("/api/sdk/v1/snapshot?env=prod", { "if-none-match": etag }, key)).status).toBe(304);
    expect((await s.api(`/api/admin/keys/${minted.body.id}`, { method: "DELETE" })).status).toBe(204);
    const after = await sdk("/api/sdk/v1/snapshot?env=prod", { "if-none-match": etag }, key);
    expect(after.status).toBe(401);
    expect((await after.json()).code).toBe("UNAUTHORIZED");
  });

  test("the caller's X-Request-Id is echoed on a 304 from memory; with X-Project-Id of another project it is refused", async () => {
    const first = await sdk("/api/sdk/v1/snapshot?env=prod");
    const etag = first.headers.get("etag")!;
    await first.arrayBuffer();
    const echoed = await sdk("/api/sdk/v1/snapshot?env=prod", { "if-none-match": etag, "x-request-id": "poll-42" });
    expect(echoed.status).toBe(304);
    expect(echoed.headers.get("x-request-id")).toBe("poll-42");
    // A remembered key is not a pass for another project.
    const other = await s.newProject("Other");
    const refused = await sdk("/api/sdk/v1/snapshot?env=prod", { "if-none-match": etag, "x-project-id": other.projectId });
    expect(refused.status).toBe(403);
  });
});
