import type { ModuleManifest } from "../../lib/module";
import type { OperationsService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

declare module "../../lib/module" {
  interface Services {
    operations: OperationsService;
  }
  interface AppOptions {
    /** SERVICE_METRICS_TOKEN: /metrics takes `Authorization: Bearer <token>`; unset, it answers loopback peers only. */
    metricsToken?: string;
    /** The data directory: /metrics reports the sizes of the SQLite files there. */
    dataDir?: string;
  }
}

/**
 * What the person running svc watches: GET /metrics (Prometheus). The
 * counters themselves are src/lib/metrics.ts, kept by the request pipeline
 * (app.ts), the snapshot fast path and the snapshot service.
 */
export const operationsModule: ModuleManifest<"operations"> = {
  name: "operations",
  migrations: [],
  createService: (ctx) => new (serviceCode().OperationsService)(ctx),
  routes: (ctx) => routesCode().operationsRoutes(ctx),
};
