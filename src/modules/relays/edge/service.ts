import { hostname } from "node:os";
import type { Registry } from "prom-client";
import type { SdkKeyInfo } from "../../../lib/auth";
import { ENVS } from "../../../lib/envs";
import type { EventRow } from "../../../lib/eventstore/types";
import type { Logger } from "../../../lib/log";
import { Telemetry } from "../../../lib/metrics";
import { KEY_LOOKUP_HEADER } from "../../delivery/routes";
import { EvaluationRecorder } from "../../usage/recorder";
import { DEFAULT_USAGE_FLUSH_MS } from "../../usage/types";
import { family, httpFamilies } from "../../operations/service";
import { RELAY_HEADER, formatRelayHeader } from "../header";
import { VERSION } from "../../../version";
import { RelayDisk } from "./disk";
import { DEFAULT_QUEUE_MAX, Forwarder } from "./forwarder";
import { KEY_TTL_MS, RelayKeyDirectory } from "./keys";
import type { RelayOptions } from "./options";
import { RelaySnapshots } from "./snapshots";

const UPSTREAM_KEY_TIMEOUT_MS = 3_000;

/** The relay's running parts, for its routes, /metrics and tests. */
export class Relay {
  readonly disk: RelayDisk;
  readonly snapshots: RelaySnapshots;
  readonly keys: RelayKeyDirectory;
  readonly forwarder: Forwarder;
  private registry: Promise<Registry> | undefined;
  readonly telemetry = new Telemetry();
  /** The relay's own OFREP and remote evaluations, counted as the server counts its own (sent upstream by flushEvaluations). */
  readonly evaluations = new EvaluationRecorder();
  /** What the relay says of itself on every call upstream (X-Svc-Relay): its kept id, its name and version. */
  readonly hello: Record<string, string>;

  constructor(
    readonly options: RelayOptions,
    readonly log: Logger,
  ) {
    this.disk = new RelayDisk(options.dataDir);
    this.snapshots = new RelaySnapshots(this.disk, log);
    this.hello = { [RELAY_HEADER]: formatRelayHeader({ id: this.disk.relayId(), name: options.name || hostname(), version: VERSION }) };
    this.keys = new RelayKeyDirectory({
      disk: this.disk,
      ask: (secret) => this.askUpstream(secret),
      projectId: () => this.snapshots.projectId,
      upstreamUp: () => this.snapshots.envsLive() > 0,
      log,
      ttlMs: options.keyTtlMs ?? KEY_TTL_MS,
    });
    this.forwarder = new Forwarder({ disk: this.disk, upstream: options.upstream, log, queueMax: options.queueMax ?? DEFAULT_QUEUE_MAX, hello: this.hello });
  }

  /**
   * `GET /api/sdk/v1/key` on the upstream with the relay's key: about the relay's key itself (no `secret`), or
   * about `secret` (X-SDK-Key-Lookup). The key's info, null when refused, undefined when the upstream did not answer.
   */
  async askUpstream(secret?: string): Promise<(SdkKeyInfo & { defaultEnv?: string }) | null | undefined> {
    let res: Response;
    try {
      res = await fetch(`${this.options.upstream}/api/sdk/v1/key`, {
        headers: { ...this.hello, "x-sdk-key": this.options.key, ...(secret !== undefined ? { [KEY_LOOKUP_HEADER]: secret } : {}) },
        signal: AbortSignal.timeout(UPSTREAM_KEY_TIMEOUT_MS),
      });
    } catch {
      return undefined;
    }
    if (res.status === 200) return (await res.json()) as SdkKeyInfo & { defaultEnv?: string };
    const text = await res.text().catch(() => "");
    if (secret !== undefined && (res.status === 401 || res.status === 403)) this.log.error("relay: the upstream refused the relay's own key; no key can be checked", { status: res.status, answer: text.slice(0, 300) });
    return res.status === 401 || res.status === 403 || res.status === 404 ? null : undefined;
  }

  /** What /healthz says. */
  state() {
    const staleSeconds = this.snapshots.staleSeconds();
    return {
      serving: this.snapshots.hasAny(),
      relay: {
        upstream: this.options.upstream,
        connected: this.snapshots.envsLive() === ENVS.length,
        stale: staleSeconds !== undefined,
        ...(staleSeconds !== undefined ? { staleSeconds } : {}),
        queued: this.forwarder.queued(),
        projectId: this.snapshots.projectId ?? null,
        revisions: this.snapshots.revisions(),
      },
    };
  }

  /** Exposures the OFREP routes log: forwarded to the upstream as events, with the relay's own key. */
  appendExposures(rows: EventRow[]): Promise<void> {
    const events = rows.map((r) => ({ name: r.name, ts: r.ts, ...(r.unitId !== null ? { unitId: r.unitId } : {}), ...(r.props ? { properties: r.props } : {}) }));
    for (let i = 0; i < events.length; i += 1000) {
      const body = new TextEncoder().encode(JSON.stringify({ events: events.slice(i, i + 1000) }));
      this.forwarder.enqueue(crypto.randomUUID(), "/api/sdk/v1/events", { "x-sdk-key": this.options.key, "content-type": "application/json" }, body);
    }
    return Promise.resolve();
  }

  /**
   * Sends what the relay evaluated since the last call upstream, as SDK batches (`POST /api/sdk/v1/evaluations`,
   * one per env, with the relay's key), through the durable queue: the upstream adds them to its counts.
   */
  flushEvaluations(): void {
    const perEnv = new Map<string, Record<string, number>>();
    for (const row of this.evaluations.counter.take()) {
      let counts = perEnv.get(row.env);
      if (!counts) perEnv.set(row.env, (counts = {}));
      counts[row.flag] = (counts[row.flag] ?? 0) + row.count;
    }
    for (const [env, counts] of perEnv) {
      const names = Object.keys(counts);
      // The upstream takes 1,000 names a batch.
      for (let i = 0; i < names.length; i += 1000) {
        const slice = Object.fromEntries(names.slice(i, i + 1000).map((n) => [n, Math.min(counts[n]!, 10_000_000)]));
        const body = new TextEncoder().encode(JSON.stringify({ env, counts: slice }));
        try {
          this.forwarder.enqueue(crypto.randomUUID(), "/api/sdk/v1/evaluations", { "x-sdk-key": this.options.key, "content-type": "application/json" }, body);
        } catch (err) {
          this.log.warn("relay: evaluation counts not queued (the queue is full)", { env, error: String(err) });
        }
      }
    }
  }

  /** How often flushEvaluations runs (the server's own flush interval). */
  static readonly EVALUATIONS_EVERY_MS = DEFAULT_USAGE_FLUSH_MS;

  async scrape(): Promise<string> {
    this.registry ??= (async () => {
      const { Registry, collectDefaultMetrics } = await import("prom-client");
      const registry = new Registry();
      collectDefaultMetrics({ register: registry });
      const families = [
        ...httpFamilies(this.telemetry),
        family("svc_relay_upstream_connected", "Whether every env's stream from the upstream is open (1) or not (0: answers carry X-Svc-Stale)", "gauge", () => [
          { value: this.snapshots.envsLive() === ENVS.length ? 1 : 0 },
        ]),
        family("svc_relay_snapshot_age_seconds", "Seconds since the relay last heard its upstream (0 while it follows it live)", "gauge", () => [
          { value: this.snapshots.staleSeconds() ?? 0 },
        ]),
        family("svc_relay_queue_depth", "Requests queued on the relay's disk for the upstream (events, errors, intake, exposures)", "gauge", () => [{ value: this.forwarder.queued() }]),
        family("svc_relay_queue_oldest_seconds", "Age of the oldest queued request (0 when the queue is empty)", "gauge", () => [{ value: this.forwarder.oldestAgeSeconds() }]),
        family("svc_relay_forwarded_total", "Queued requests the upstream answered, by result: delivered (2xx) or rejected (a final 4xx: dropped, logged)", "counter", () => [
          { labels: { result: "delivered" }, value: this.forwarder.counts.delivered },
          { labels: { result: "rejected" }, value: this.forwarder.counts.rejected },
        ]),
        family("svc_relay_forward_retries_total", "Delivery attempts that failed and will be retried (upstream away, 5xx, 408 or 429)", "counter", () => [{ value: this.forwarder.counts.retried }]),
        family("svc_sse_streams_open", "Open SDK event streams (GET /api/sdk/v1/stream)", "gauge", () => [{ value: this.snapshots.listenerCount() }]),
      ];
      for (const f of families) registry.registerMetric(f as never);
      return registry;
    })();
    return (await this.registry).metrics();
  }
}

