import type { ModuleManifest } from "../../lib/module";
import type { SnapshotService } from "./snapshot";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const routesCode = () => require("./routes") as typeof import("./routes");
const snapshotCode = () => require("./snapshot") as typeof import("./snapshot");

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
  createService: (ctx) => new (snapshotCode().SnapshotService)(ctx),
  routes: (ctx) => routesCode().deliveryRoutes(ctx),
  close: (service) => service.close(),
};
