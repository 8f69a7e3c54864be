/**
 * The server's operational counters, kept as plain numbers where requests
 * are answered and turned into the Prometheus text format only when
 * /metrics is scraped (src/modules/operations/service.ts reads them through
 * prom-client collectors). Nothing here imports prom-client: the poll path
 * pays a few map lookups and additions per request, never a label object,
 * a string key or a registry call, and the server does not load prom-client
 * until the first scrape.
 */
import type { BodyCounts } from "./pipeline";

/** Request latency buckets (seconds): a poll answers in well under a millisecond, an admin write in a few. */
export const LATENCY_BUCKETS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Publish-to-stream delay buckets (seconds): a rebuild takes a few store reads, more on PostgreSQL. */
export const DELIVERY_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Routes whose traffic is SDK polling (the `svc_sdk_polls_total` endpoints); OFREP has two routes. */
export const SDK_POLL_ROUTES: Readonly<Record<string, string>> = {
  "/api/sdk/v1/snapshot": "snapshot",
  "/api/sdk/v1/stream": "stream",
  "/ofrep/v1/evaluate/flags": "ofrep",
  "/ofrep/v1/evaluate/flags/*": "ofrep",
};

/** The `route` label of a request no route answered (unknown path, or refused before routing: 413, a foreign Host, a preflight). */
export const UNMATCHED_ROUTE = "(unmatched)";

/**
 * SDK poll traffic by path (snapshot, stream connects, OFREP): counted in
 * /metrics, logged only when it fails or with `--log-sdk-requests`. By path,
 * not route, so that answers given before routing are classed alike.
 */
export function isSdkPollPath(path: string): boolean {
  return path === "/api/sdk/v1/snapshot" || path === "/api/sdk/v1/stream" || path.startsWith("/ofrep/") || path.startsWith("/api/features/") || path.startsWith("/sub/") || path.startsWith("/api/eval/");
}

/**
 * GET /metrics from a scraper rather than a browser: /metrics is also the dashboard's Metrics section, and a
 * browser's navigation always asks for `text/html`, which scrapers never do (Prometheus sends
 * `application/openmetrics-text…, text/plain;version=0.0.4…, *\/*`, curl `*\/*`).
 */
export function isMetricsScrape(path: string, request: Request): boolean {
  return path === "/metrics" && !(request.headers.get("accept") ?? "").includes("text/html");
}

/** The `method` label: the standard methods as they are, anything else as `other` (a client may send any token). */
export function methodLabel(method: string): string {
  switch (method) {
    case "GET":
    case "POST":
    case "PUT":
    case "PATCH":
    case "DELETE":
    case "HEAD":
    case "OPTIONS":
      return method;
    default:
      return "other";
  }
}

/** A fixed-bucket histogram: per-bucket counts (not cumulative; the last is +Inf), the sum and the count. */
export class Histogram {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    // Prometheus buckets are `le`: a value equal to a bound belongs to it.
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

/** One route of one method: a latency histogram per status code. */
export class RouteSeries {
  readonly byStatus = new Map<number, Histogram>();

  /** The histogram of one status (made on first use); a hot path may hold it. */
  byStatusOf(status: number): Histogram {
    let h = this.byStatus.get(status);
    if (!h) this.byStatus.set(status, (h = new Histogram(LATENCY_BUCKETS)));
    return h;
  }

  observe(status: number, seconds: number): void {
    this.byStatusOf(status).observe(seconds);
  }
}

/** Every counter the server keeps for /metrics. One per server (tests run several in one process). */
export class Telemetry {
  /** route template -> method -> series. Bounded: routes are templates, methods are methodLabel's. */
  readonly routes = new Map<string, Map<string, RouteSeries>>();
  /** From a publish to its snapshot event being handed to the open streams of that env. */
  readonly delivery = new Histogram(DELIVERY_BUCKETS);
  /** Event rows the event store took (analytics events, exposures, tracked errors). */
  eventsAccepted = 0;
  /** Rows taken but not committed yet: the event store's group-commit queue and the transaction in flight. */
  eventsPending = 0;
  /** Request bodies being read now, and those refused (deadline, per-client and server-wide caps; see BodyReads). */
  readonly bodies: BodyCounts = { reading: 0, refused: { timeout: 0, per_client: 0, server: 0 } };

  /** The series of one route and method; the poll fast path keeps its own and skips the lookups. */
  series(method: string, route: string): RouteSeries {
    let byMethod = this.routes.get(route);
    if (!byMethod) this.routes.set(route, (byMethod = new Map()));
    let series = byMethod.get(method);
    if (!series) byMethod.set(method, (series = new RouteSeries()));
    return series;
  }

  /** Requests answered so far, every route and status (the fast paths' included: they observe the same series). */
  answered(): number {
    let total = 0;
    for (const byMethod of this.routes.values()) for (const series of byMethod.values()) for (const h of series.byStatus.values()) total += h.count;
    return total;
  }

  /** One answered request; `route` is the template (`/api/admin/killswitches/:id`), never the raw path. */
  request(method: string, route: string, status: number, seconds: number): void {
    this.series(methodLabel(method), route).observe(status, seconds);
  }
}

/** What /metrics needs of the event store: counts what it takes and what is still queued (a wrapper, not a change of the store). */
type Appender = { append(rows: unknown[]): Promise<void> };

/**
 * Counts the rows appended to an event store and those not committed yet,
 * by wrapping its `append` on this instance (the store's own code is left
 * as it is: the event store is another module's, and the counts need no
 * more than what goes in and when it settles).
 */
export function countAppends(store: Appender, telemetry: Telemetry): void {
  const append = store.append.bind(store);
  store.append = (rows) => {
    const n = rows.length;
    telemetry.eventsPending += n;
    const settle = () => {
      telemetry.eventsPending -= n;
    };
    return append(rows).then(
      () => {
        settle();
        telemetry.eventsAccepted += n;
      },
      (err) => {
        settle();
        throw err;
      },
    );
  };
}
