import type { ModuleManifest } from "../../lib/module";
import type { EventStore } from "../../lib/eventstore/types";
import type { AnalyticsService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const sqliteCode = () => require("../../lib/eventstore/sqlite") as typeof import("../../lib/eventstore/sqlite");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

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
  createService: (ctx) => new (serviceCode().AnalyticsService)(ctx, ctx.options.eventStore ?? new (sqliteCode().SqliteEventStore)(":memory:")),
  routes: (ctx) => routesCode().analyticsRoutes(ctx),
  close: (service) => service.close(),
};
