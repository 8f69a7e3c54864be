import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Registry } from "prom-client";
import { type Histogram, SDK_POLL_ROUTES, Telemetry, countAppends } from "../../lib/metrics";
import type { ServiceContext } from "../../lib/module";
import { VERSION } from "../../version";

/** The Prometheus text format, version 0.0.4 (what prom-client writes and every scraper reads). */
export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

type Labels = Record<string, string>;
type Sample = { metricName?: string; labels?: Labels; value: number };
type FamilyType = "counter" | "gauge" | "histogram";

/**
 * One metric family as prom-client's Registry takes it: `get()` runs at
 * every scrape and reads the counters the request path keeps as plain
 * numbers (src/lib/metrics.ts). prom-client writes the text format (HELP,
 * TYPE, label escaping, number formatting).
 */
export function family(name: string, help: string, type: FamilyType, read: () => Sample[] | Promise<Sample[]>) {
  return { name, help, type, get: async () => ({ name, help, type, aggregator: "sum", values: await read() }) };
}

/** A histogram's samples: cumulative `_bucket{le}` (through `+Inf`), `_sum` and `_count`. */
export function histogramSamples(name: string, h: Histogram, labels: Labels = {}): Sample[] {
  const out: Sample[] = [];
  let cumulative = 0;
  for (let i = 0; i <= h.bounds.length; i++) {
    cumulative += h.counts[i]!;
    out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: i < h.bounds.length ? String(h.bounds[i]) : "+Inf" }, value: cumulative });
  }
  out.push({ metricName: `${name}_sum`, labels, value: h.sum });
  out.push({ metricName: `${name}_count`, labels, value: h.count });
  return out;
}

function fileBytes(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}

/** The build and the request counters the pipeline keeps: the first families of every /metrics (svc serve's and an edge relay's). */
export function httpFamilies(t: Telemetry) {
  const perSeries = (visit: (labels: Labels, h: Histogram) => Sample[]) => () => {
    const out: Sample[] = [];
    for (const [route, byMethod] of t.routes) {
      for (const [method, series] of byMethod) {
        for (const [status, h] of series.byStatus) out.push(...visit({ method, route, status: String(status) }, h));
      }
    }
    return out;
  };
  return [
    family("svc_build_info", "The running version (always 1)", "gauge", () => [{ labels: { version: VERSION }, value: 1 }]),
    family(
      "svc_http_requests_total",
      "Requests answered, by method, route template (never the raw path) and status; `(unmatched)` when no route answered",
      "counter",
      perSeries((labels, h) => [{ labels, value: h.count }]),
    ),
    family(
      "svc_http_request_duration_seconds",
      "Time from receiving a request to handing over its response, by method, route template and status",
      "histogram",
      perSeries((labels, h) => histogramSamples("svc_http_request_duration_seconds", h, labels)),
    ),
  ];
}

/**
 * GET /metrics: the counters of this server in the Prometheus text format.
 * prom-client (and its default process metrics: CPU, memory, file
 * descriptors, event-loop lag) is loaded at the first scrape, not at start.
 */
export class OperationsService {
  readonly telemetry = new Telemetry();
  private registry: Promise<Registry> | undefined;

  constructor(private readonly ctx: ServiceContext) {
    if (ctx.options.eventStore) countAppends(ctx.options.eventStore, this.telemetry);
  }

  /** The whole exposition, computed now (store sizes and queue depths included). */
  async scrape(): Promise<string> {
    this.registry ??= this.createRegistry();
    return (await this.registry).metrics();
  }

  private async createRegistry(): Promise<Registry> {
    const { Registry, collectDefaultMetrics } = await import("prom-client");
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    for (const f of this.families()) registry.registerMetric(f as never);
    return registry;
  }

  private families() {
    const t = this.telemetry;
    const { services, options } = this.ctx;
    return [
      ...httpFamilies(t),
      family("svc_sdk_polls_total", "SDK poll traffic by endpoint (snapshot, stream connects, ofrep) and result (the HTTP status)", "counter", () => {
        const byKey = new Map<string, Sample>();
        for (const [route, endpoint] of Object.entries(SDK_POLL_ROUTES)) {
          for (const series of t.routes.get(route)?.values() ?? []) {
            for (const [status, h] of series.byStatus) {
              const key = `${endpoint} ${status}`;
              const sample = byKey.get(key) ?? { labels: { endpoint, result: String(status) }, value: 0 };
              sample.value += h.count;
              byKey.set(key, sample);
            }
          }
        }
        return [...byKey.values()];
      }),
      family("svc_sse_streams_open", "Open SDK event streams (GET /api/sdk/v1/stream)", "gauge", () => [{ value: services.snapshots.listenerCount() }]),
      family(
        "svc_publish_to_stream_seconds",
        "From a publish (its revision bump) to the new snapshot being handed to the open streams of that env",
        "histogram",
        () => histogramSamples("svc_publish_to_stream_seconds", t.delivery),
      ),
      family("svc_events_accepted_total", "Event rows committed to the event store (analytics events, exposures, tracked errors)", "counter", () => [
        { value: t.eventsAccepted },
      ]),
      family(
        "svc_error_occurrences_dropped_total",
        "Error occurrences not stored because of a per-project limit, by reason (new_errors_per_minute: their error would have been new past the project's allowance of new errors a minute; browser_new_errors_per_hour: sent with a browser key, past browser keys' allowance of new errors an hour)",
        "counter",
        () => [
          { labels: { reason: "new_errors_per_minute" }, value: services.errors.heldBack.droppedNewErrors },
          { labels: { reason: "browser_new_errors_per_hour" }, value: services.errors.heldBack.droppedBrowserNewErrors },
        ],
      ),
      family(
        "svc_error_queue_items_skipped_total",
        "New or regressed errors tracked without a queue item because of a per-project limit, by reason (error_items_per_minute: the project's allowance of error items a minute)",
        "counter",
        () => [{ labels: { reason: "error_items_per_minute" }, value: services.errors.heldBack.skippedItems }],
      ),
      family("svc_event_queue_rows", "Event rows taken but not committed yet (the event store's group-commit queue)", "gauge", () => [{ value: t.eventsPending }]),
      family("svc_event_spool_rows", "Event rows waiting in the local spool for the analytics upstream (SERVICE_ANALYTICS_URL; 0 without one)", "gauge", () => {
        const spool = options.eventStore as { pending?: () => number } | undefined;
        return [{ value: typeof spool?.pending === "function" ? spool.pending() : 0 }];
      }),
      family("svc_store_up", "Whether the store answered this scrape's queries (1) or not (0: its gauges below are left out)", "gauge", async () => [
        { value: (await this.storeGauges()) ? 1 : 0 },
      ]),
      family("svc_outbox_pending_events", "Outbox events not yet fanned out to connectors", "gauge", async () => {
        const g = await this.storeGauges();
        return g ? [{ value: g.outbox }] : [];
      }),
      family("svc_connector_deliveries_pending", "Connector deliveries waiting for their next attempt", "gauge", async () => {
        const g = await this.storeGauges();
        return g ? [{ value: g.deliveries }] : [];
      }),
      family("svc_store_size_bytes", "Size of each store: SQLite files (main, events, spool) or the PostgreSQL database (pg_database_size)", "gauge", async () => {
        const g = await this.storeGauges();
        return [...this.fileSizes("db"), ...(g?.databaseBytes !== undefined ? [{ labels: { store: "main" }, value: g.databaseBytes }] : [])];
      }),
      family("svc_store_wal_size_bytes", "Size of each SQLite store's write-ahead log (its -wal file)", "gauge", () => this.fileSizes("wal")),
      family("svc_http_body_reads", "Request bodies being read now (still arriving from their clients)", "gauge", () => [{ value: t.bodies.reading }]),
      family(
        "svc_http_body_refusals_total",
        "Request bodies refused before they were read whole: `timeout` (408, past the read deadline), `per_client` (429, too many at once from one address), `server` (503, too many at once)",
        "counter",
        () => Object.entries(t.bodies.refused).map(([reason, value]) => ({ labels: { reason }, value })),
      ),
    ];
  }

  /** The SQLite files beside the server: the main store (when SQLite), events.db and the analytics spool. */
  private fileSizes(kind: "db" | "wal"): Sample[] {
    const { store, options } = this.ctx;
    const files: [string, string][] = [];
    if (store.engine === "sqlite") files.push(["main", store.location]);
    if (options.dataDir) {
      files.push(["events", join(options.dataDir, "events.db")], ["spool", join(options.dataDir, "events-spool.db")]);
    }
    const out: Sample[] = [];
    for (const [name, path] of files) {
      if (!existsSync(path)) continue;
      const bytes = fileBytes(kind === "db" ? path : `${path}-wal`);
      if (bytes !== undefined) out.push({ labels: { store: name }, value: bytes });
    }
    return out;
  }

  /** The store's gauges, one query round per scrape (several families share it); undefined when the store did not answer. */
  private gauges: { at: number; value: Promise<StoreGauges | undefined> } | undefined;

  private storeGauges(): Promise<StoreGauges | undefined> {
    const now = performance.now();
    if (this.gauges && now - this.gauges.at < 1000) return this.gauges.value;
    const value = this.readStoreGauges().catch((err) => {
      this.ctx.log.warn("/metrics: the store did not answer; its gauges are left out of this scrape", { error: String(err) });
      return undefined;
    });
    this.gauges = { at: now, value };
    return value;
  }

  private async readStoreGauges(): Promise<StoreGauges> {
    const { store } = this.ctx;
    // Both counts use partial indexes on the pending rows, so they stay cheap however long the history.
    const outbox = await store.one<{ n: number | string }>("SELECT count(*) AS n FROM outbox_events WHERE fanned_out_at IS NULL");
    const deliveries = await store.one<{ n: number | string }>("SELECT count(*) AS n FROM connector_deliveries WHERE status = 'pending'");
    let databaseBytes: number | undefined;
    if (store.engine === "postgres") {
      databaseBytes = Number((await store.one<{ n: number | string }>("SELECT pg_database_size(current_database()) AS n"))?.n ?? 0);
    }
    return { outbox: Number(outbox?.n ?? 0), deliveries: Number(deliveries?.n ?? 0), databaseBytes };
  }
}

type StoreGauges = { outbox: number; deliveries: number; databaseBytes?: number };
