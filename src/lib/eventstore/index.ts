import { join } from "node:path";
import type { Logger } from "../log";
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
export async function openEventStore(target: EventStoreTarget, log?: Logger): Promise<EventStore> {
  if (target.analyticsUrl) {
    const { PostgresEventStore } = await import("./postgres");
    const { SpoolingEventStore } = await import("./spool");
    // The drain retries every second while the upstream is down: say so once per outage, not per attempt.
    let failing = false;
    const spool: InstanceType<typeof SpoolingEventStore> = new SpoolingEventStore(
      new PostgresEventStore(target.analyticsUrl, { upstream: true }),
      join(target.dataDir, "events-spool.db"),
      {
        onError: (err) => {
          if (failing) return;
          failing = true;
          log?.warn("the analytics upstream cannot take events; they stay in the local spool until it can", { error: String(err) });
          const watch = setInterval(() => {
            if (spool.lastError !== undefined) return;
            failing = false;
            clearInterval(watch);
            log?.info("the analytics upstream takes events again; the spool drains");
          }, 1000);
          watch.unref?.();
        },
      },
    );
    return spool;
  }
  if (target.postgresUrl) {
    const { PostgresEventStore } = await import("./postgres");
    return new PostgresEventStore(target.postgresUrl);
  }
  return new SqliteEventStore(join(target.dataDir, "events.db"));
}
