import { ApiError, unavailable, validation } from "../../lib/errors";
import type { ServiceContext } from "../../lib/module";
import {
  DEFAULT_RAW_RETENTION_DAYS,
  type EventRow,
  type EventStore,
  MAX_SERIES_BUCKETS,
  type NameCounts,
  type NameCountsQuery,
  type RecentPage,
  type RecentQuery,
  ROLLUP_RETENTION_DAYS,
  type SeriesQuery,
  type SeriesResult,
  UpstreamError,
} from "../../lib/eventstore/types";
import { EXPOSURE_EVENT_NAME } from "../../sdk/experiments";
import { ROLLOUT_EXPOSURE_NAME } from "../../sdk/rollouts";
import { EVENT_NAME, PROPERTY_NAME, type PropertyType, typeOfValue } from "../events/service";

export type IngestEvent = {
  name: string;
  unitId?: string;
  ts?: number | string;
  value?: number;
  properties?: Record<string, string | number | boolean | null>;
};

const DAY_MS = 86_400_000;
/** Events may be late (offline clients) but not older than the roll-ups are kept, nor from the future beyond clock skew. */
const OLDEST_MS = ROLLUP_RETENTION_DAYS * DAY_MS;
const FUTURE_SKEW_MS = DAY_MS;
const RETENTION_EVERY_MS = 3_600_000;

/** Epoch ms of an event's `ts` (epoch milliseconds, or an ISO 8601 string), or a message saying what is wrong. */
export function parseTimestamp(ts: number | string | undefined, now: number): number | string {
  if (ts === undefined) return now;
  const ms = typeof ts === "number" ? ts : /^\d{4}-\d{2}-\d{2}T/.test(ts) ? Date.parse(ts) : Number.NaN;
  if (!Number.isFinite(ms)) return "epoch milliseconds or an ISO 8601 date-time";
  if (ms > now + FUTURE_SKEW_MS) return "more than a day in the future";
  if (ms < now - OLDEST_MS) return `older than ${ROLLUP_RETENTION_DAYS} days`;
  return Math.floor(ms);
}

/** The series rules every series route shares: `to > from`, a bucket of at least a second, at most 10,000 buckets. */
export function checkSeriesWindow(w: { from: number; to: number; bucket: number }): void {
  if (w.to <= w.from) throw validation("to must be greater than from", `to: ${w.to} is not after from: ${w.from}`);
  if (w.bucket < 1) throw validation("bucket must be at least 1 second", "bucket: seconds, at least 1");
  const buckets = Math.ceil((w.to - w.from) / w.bucket);
  if (buckets > MAX_SERIES_BUCKETS) {
    throw validation(`At most ${MAX_SERIES_BUCKETS} buckets per series`, `bucket: ${w.bucket} s gives ${buckets} buckets over the window; use a wider bucket`);
  }
}

/** An event store failure as the API reports it: its upstream's as 503 (unreachable) or 502 (failed), any other as it is. */
export function upstreamFailure(err: unknown): unknown {
  if (!(err instanceof UpstreamError)) return err;
  if (err.kind === "unreachable") return new ApiError("UNAVAILABLE", "Unavailable", err.message, 503, { "Retry-After": "5" });
  return new ApiError("UPSTREAM", "The analytics upstream failed", err.message);
}

/** An event store answer, its upstream's failures as the API reports them (upstreamFailure). */
export async function upstream<T>(answer: Promise<T>): Promise<T> {
  try {
    return await answer;
  } catch (err) {
    throw upstreamFailure(err);
  }
}

/**
 * Event ingest and the event store. An ingest batch is checked whole (one
 * bad event refuses the batch and stores nothing), its unknown names and
 * properties reach the catalog and the attributes, and the call returns
 * once the events are durable in the event store (group commit there).
 *
 * Experiment exposures (`$exposure:<experiment id>`, src/sdk/experiments.ts)
 * and guarded rollouts' (`$exposure:<rollout id>_<stage>`, src/sdk/rollouts.ts)
 * travel the same way but are not catalog events: each needs a `unitId` and
 * a string `properties.variant`, and neither its name nor its properties
 * reach the catalog or the attributes.
 */
export class AnalyticsService {
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly ctx: ServiceContext,
    readonly eventStore: EventStore,
  ) {
    this.timer = setInterval(() => void this.applyRetention(), ctx.options.retentionEveryMs ?? RETENTION_EVERY_MS);
    this.timer.unref?.();
  }

  /** Epoch ms: the injected clock of tests, else the wall clock. */
  now(): number {
    return this.ctx.options.clock?.() ?? Date.now();
  }

  /**
   * `fromBrowser`: sent with a browser key (an app anyone can run): its new event names and attribute names are
   * held to the browser allowances (keys' BrowserKeyLimits); the events themselves are stored all the same.
   */
  async ingest(projectId: string, events: IngestEvent[], contexts: Record<string, unknown>[] = [], fromBrowser = false): Promise<number> {
    if (events.length === 0 && contexts.length === 0) throw validation("Send at least one event", "events: 1 to 1,000 events");
    const now = this.now();
    const rows: EventRow[] = new Array(events.length);
    const seen = new Map<string, Map<string, PropertyType>>();
    const samples: Record<string, unknown> = {};
    for (let i = 0; i < events.length; i++) {
      const e = events[i]!;
      // A name that is not a catalog name may only be an exposure (one regex test per event on the hot path).
      const exposure = !EVENT_NAME.test(e.name);
      if (exposure && !EXPOSURE_EVENT_NAME.test(e.name) && !ROLLOUT_EXPOSURE_NAME.test(e.name)) throw validation("Invalid event name", `events[${i}].name: 1 to 128 letters, digits, _ . : or - (not starting with $)`);
      if (exposure) {
        if (typeof e.unitId !== "string" || e.unitId === "") throw validation("An exposure needs a unitId", `events[${i}].unitId: the unit the experiment assigned (required for ${e.name})`);
        if (typeof e.properties?.variant !== "string" || e.properties.variant === "") throw validation("An exposure needs its variant", `events[${i}].properties.variant: the assigned variant's key, a string`);
      }
      const ts = parseTimestamp(e.ts, now);
      if (typeof ts === "string") throw validation("Invalid event time", `events[${i}].ts: ${ts}`);
      if (e.value !== undefined && !Number.isFinite(e.value)) throw validation("Invalid event value", `events[${i}].value: a finite number`);
      let props: Record<string, string | number | boolean> | null = null;
      // Exposures are neither catalog rows nor a source of attributes.
      let types = exposure ? undefined : seen.get(e.name);
      if (!types && !exposure) seen.set(e.name, (types = new Map()));
      if (e.properties) {
        for (const key in e.properties) {
          const v = e.properties[key];
          if (!PROPERTY_NAME.test(key)) throw validation("Invalid property name", `events[${i}].properties: ${JSON.stringify(key.slice(0, 130))} is not 1 to 128 letters, digits, _ . : $ or -`);
          if (v === null || v === undefined) continue;
          if (typeof v === "number" && !Number.isFinite(v)) throw validation("Invalid property value", `events[${i}].properties.${key}: a finite number`);
          (props ??= {})[key] = v;
          if (!types) continue;
          if (!types.has(key)) types.set(key, typeOfValue(v));
          if (!(key in samples)) samples[key] = v;
        }
      }
      rows[i] = { projectId, name: e.name, ts, unitId: e.unitId ?? null, value: e.value ?? null, props };
    }
    const { events: catalog, attributes, keys } = this.ctx.services;
    attributes.noteContext(projectId, samples, fromBrowser);
    for (const context of contexts) attributes.noteContext(projectId, context, fromBrowser);
    const browserNames = fromBrowser ? { newNamesPerDay: keys.browserLimits.newEventNamesPerDay } : undefined;
    // Durable before the answer: the rows, and the catalog rows for names never seen (so that nothing acknowledged is uncatalogued,
    // but for names past a browser key's allowance).
    await Promise.all([this.eventStore.append(rows), seen.size > 0 ? catalog.noteSeen(projectId, seen, browserNames) : undefined]);
    return rows.length;
  }

  /** Raw rows (tracked-error occurrences): durable when it resolves. */
  append(rows: EventRow[]): Promise<void> {
    return this.eventStore.append(rows);
  }

  async series(q: SeriesQuery): Promise<SeriesResult> {
    checkSeriesWindow(q);
    return upstream(this.eventStore.series(q));
  }

  /** Events per name over a trailing day and week (the events page's counts), on the event store's workers. */
  countsByName(q: NameCountsQuery): Promise<NameCounts[]> {
    if (!this.eventStore.countsByName) throw unavailable(5);
    return upstream(this.eventStore.countsByName(q));
  }

  /** A page of one name's newest raw events, on the event store's workers. */
  recent(q: RecentQuery): Promise<RecentPage> {
    if (!this.eventStore.recent) throw unavailable(5);
    return upstream(this.eventStore.recent(q));
  }

  /** Raw events past each project's retention, roll-ups past 13 months; once across servers. */
  async applyRetention(): Promise<void> {
    try {
      if (!(await this.ctx.store.lease("analytics:retention", (this.ctx.options.retentionEveryMs ?? RETENTION_EVERY_MS) * 0.9))) return;
      const now = this.now();
      const projects = await this.ctx.services.projects.listRetention();
      let first = true;
      for (const { id, eventRetentionDays } of projects) {
        const removed = await this.eventStore.prune({
          projectId: id,
          rawBefore: now - (eventRetentionDays ?? DEFAULT_RAW_RETENTION_DAYS) * DAY_MS,
          rollupsBefore: first ? now - ROLLUP_RETENTION_DAYS * DAY_MS : undefined,
        });
        first = false;
        if (removed > 0) this.ctx.log.info("removed events past retention", { projectId: id, removed });
      }
    } catch (err) {
      this.ctx.log.warn("event retention failed; retrying at the next run", { error: String(err) });
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.eventStore.close();
  }
}
