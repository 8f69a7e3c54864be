import type { ModuleManifest } from "../../lib/module";
import type { MetricsService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

declare module "../../lib/module" {
  interface Services {
    metrics: MetricsService;
  }
}

/** Metrics: named measures over the event store (count, sum, unique, ratio), checked against the event catalog; their series. */
export const metricsModule: ModuleManifest<"metrics"> = {
  name: "metrics",
  get migrations() {
    return migrationsCode().METRICS_MIGRATIONS;
  },
  createService: (ctx) => new (serviceCode().MetricsService)(ctx),
  routes: (ctx) => routesCode().metricRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).metricTools;
  },
  cli: [{ name: "metrics", order: 17, summary: "Metrics over the project's events: list, get, create, update, delete, series", example: "svc metrics create checkouts --kind count --event checkout.completed", load: async () => (await import("./cli")).metricsCommand }],
};
