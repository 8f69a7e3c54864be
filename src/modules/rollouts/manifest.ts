import type { ModuleManifest } from "../../lib/module";
import { ROLLOUTS_MIGRATIONS } from "./migrations";
import { rolloutRoutes } from "./routes";
import { RolloutsService } from "./service";

declare module "../../lib/module" {
  interface Services {
    rollouts: RolloutsService;
  }
  interface AppOptions {
    /** How often rollouts are checked (default 1 min; 0: never, tests call `rollouts.monitor.checkAll`). One server per round (a lease). */
    rolloutsEveryMs?: number;
  }
}

/**
 * Guarded rollouts: a gate's new rules or a config's new value released in
 * stages, watched on the error rate and chosen metrics, advanced, paused or
 * rolled back by the monitor.
 */
export const rolloutsModule: ModuleManifest<"rollouts"> = {
  name: "rollouts",
  migrations: ROLLOUTS_MIGRATIONS,
  createService: (ctx) => new RolloutsService(ctx),
  routes: (ctx) => rolloutRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).rolloutTools;
  },
  snapshot: (service) => ({ field: "rollouts", published: (projectId, env) => service.published(projectId, env) }),
  close: (service) => service.close(),
};
