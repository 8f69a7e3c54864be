import type { ModuleManifest } from "../../lib/module";
import { METRICS_MIGRATIONS } from "./migrations";
import { metricRoutes } from "./routes";
import { MetricsService } from "./service";

declare module "../../lib/module" {
  interface Services {
    metrics: MetricsService;
  }
}

/** Metrics: named measures over the event store (count, sum, unique, ratio), checked against the event catalog; their series. */
export const metricsModule: ModuleManifest<"metrics"> = {
  name: "metrics",
  migrations: METRICS_MIGRATIONS,
  createService: (ctx) => new MetricsService(ctx),
  routes: (ctx) => metricRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).metricTools;
  },
};
