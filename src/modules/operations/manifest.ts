import type { ModuleManifest } from "../../lib/module";
import { operationsRoutes } from "./routes";
import { OperationsService } from "./service";

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
  createService: (ctx) => new OperationsService(ctx),
  routes: (ctx) => operationsRoutes(ctx),
};
