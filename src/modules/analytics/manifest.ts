import type { ModuleManifest } from "../../lib/module";
import type { EventStore } from "../../lib/eventstore/types";
import { SqliteEventStore } from "../../lib/eventstore/sqlite";
import { analyticsRoutes } from "./routes";
import { AnalyticsService } from "./service";

declare module "../../lib/module" {
  interface Services {
    analytics: AnalyticsService;
  }
  interface AppOptions {
    /** Where events go (the server opens it beside the store); commands that never ingest get a throwaway in-memory one. */
    eventStore?: EventStore;
    /** Epoch ms "now" for ingest defaults, series windows and alert evaluation (tests inject one). */
    clock?: () => number;
    /** How often raw events past retention are deleted (default hourly). */
    retentionEveryMs?: number;
  }
}

/** Event ingest (`POST /api/sdk/v1/events`) and the event store every series reads. */
export const analyticsModule: ModuleManifest<"analytics"> = {
  name: "analytics",
  migrations: [],
  createService: (ctx) => new AnalyticsService(ctx, ctx.options.eventStore ?? new SqliteEventStore(":memory:")),
  routes: (ctx) => analyticsRoutes(ctx),
  close: (service) => service.close(),
};
