import { join } from "node:path";
import { SqliteEventStore } from "./sqlite";
import type { EventStore } from "./types";

export type { EventRow, EventStore, Measure, PropertyFilter, SeriesQuery, SeriesResult } from "./types";
export { UpstreamError } from "./types";

export type EventStoreTarget = {
  dataDir: string;
  /** The main store's PostgreSQL URL: events go to partitioned tables in the same database. */
  postgresUrl?: string;
  /** SERVICE_ANALYTICS_URL: events go to that PostgreSQL through a local spool. */
  analyticsUrl?: string;
};

/** Where events go: the analytics upstream (spooled), else PostgreSQL beside the store, else `<data>/events.db`. */
export async function openEventStore(target: EventStoreTarget): Promise<EventStore> {
  if (target.analyticsUrl) {
    const { PostgresEventStore } = await import("./postgres");
    const { SpoolingEventStore } = await import("./spool");
    return new SpoolingEventStore(new PostgresEventStore(target.analyticsUrl, { upstream: true }), join(target.dataDir, "events-spool.db"));
  }
  if (target.postgresUrl) {
    const { PostgresEventStore } = await import("./postgres");
    return new PostgresEventStore(target.postgresUrl);
  }
  return new SqliteEventStore(join(target.dataDir, "events.db"));
}
