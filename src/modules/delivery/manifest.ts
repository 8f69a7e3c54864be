import type { ModuleManifest } from "../../lib/module";
import { deliveryRoutes } from "./routes";
import { SnapshotService } from "./snapshot";

declare module "../../lib/module" {
  interface Services {
    snapshots: SnapshotService;
  }
  interface AppOptions {
    /** Interval of the SSE stream's keep-alive comment (default 15 s). */
    streamHeartbeatMs?: number;
    /** Open SSE streams one SDK key may hold (default 500). */
    maxStreamsPerKey?: number;
  }
}

/**
 * What SDKs read: the prepared snapshot (and its native fast path), the
 * SSE stream and OFREP. Its table (env_revisions) is lib/revisions.ts:
 * every module that publishes bumps it.
 */
export const deliveryModule: ModuleManifest<"snapshots"> = {
  name: "snapshots",
  migrations: [],
  createService: (ctx) => new SnapshotService(ctx),
  routes: (ctx) => deliveryRoutes(ctx),
  close: (service) => service.close(),
};
